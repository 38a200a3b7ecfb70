// Solutions to exercises/14_bert.cpp, and the mistakes the grader must catch.
#include <cmath>
#include <utility>
#include <vector>

#include "exercises/grading/exercise.hpp"
#include "nn/positional/relative.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

using Masked = std::pair<std::vector<Index>, std::vector<Index>>;

// The rule with its knobs: which ids may be chosen, the [MASK] share, where random ids come from,
// and whether only chosen places carry a target.
Masked masking(const std::vector<Index>& ids, Index mask_id, Index first, Index end, Generator& gen, Index eligible_from,
               double mask_share, Index random_from, Index random_end, bool targets_everywhere) {
  Masked out{ids, std::vector<Index>(ids.size(), -100)};
  std::vector<std::size_t> places;
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (ids[i] >= eligible_from && ids[i] < end) places.push_back(i);
  if (targets_everywhere) out.second = ids;
  if (places.empty()) return out;
  const std::size_t n = places.size();
  const std::size_t k = std::min(n, std::max<std::size_t>(1, std::size_t(std::llround(0.15 * double(n)))));
  for (std::size_t i = 0; i < k; ++i) std::swap(places[i], places[i + gen.below(n - i)]);
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t at = places[i];
    out.second[at] = ids[at];
    const double u = gen.uniform();
    if (u < mask_share) out.first[at] = mask_id;
    else if (u < 0.9) out.first[at] = random_from + Index(gen.below(std::uint64_t(random_end - random_from)));
  }
  (void)first;
  return out;
}

Masked mask_for_mlm(const std::vector<Index>& ids, Index mask_id, Index first, Index end, Generator& gen) {
  return masking(ids, mask_id, first, end, gen, first, 0.8, first, end, false);
}
SOLUTION(mask_for_mlm);

Masked mask_for_mlm_always_mask(const std::vector<Index>& ids, Index mask_id, Index first, Index end, Generator& gen) {
  return masking(ids, mask_id, first, end, gen, first, 0.9, first, end, false);
}
WRONG_ANSWER(mask_for_mlm, mask_for_mlm_always_mask, "90 % [MASK], no random replacements");

Masked mask_for_mlm_specials(const std::vector<Index>& ids, Index mask_id, Index first, Index end, Generator& gen) {
  return masking(ids, mask_id, first, end, gen, 0, 0.8, first, end, false);
}
WRONG_ANSWER(mask_for_mlm, mask_for_mlm_specials, "padding and <eos> may be chosen too");

Masked mask_for_mlm_any_random(const std::vector<Index>& ids, Index mask_id, Index first, Index end, Generator& gen) {
  return masking(ids, mask_id, first, end, gen, first, 0.8, 0, end + 2, false);
}
WRONG_ANSWER(mask_for_mlm, mask_for_mlm_any_random, "random replacements drawn from the whole vocabulary, specials included");

Masked mask_for_mlm_every_target(const std::vector<Index>& ids, Index mask_id, Index first, Index end, Generator& gen) {
  return masking(ids, mask_id, first, end, gen, first, 0.8, first, end, true);
}
WRONG_ANSWER(mask_for_mlm, mask_for_mlm_every_target, "a target at every place: the loss would count the unmasked ones");

Masked mask_for_mlm_first_places(const std::vector<Index>& ids, Index mask_id, Index first, Index end, Generator& gen) {
  Masked out{ids, std::vector<Index>(ids.size(), -100)};
  std::size_t n = 0;
  for (Index id : ids) n += id >= first && id < end;
  std::size_t k = std::size_t(std::llround(0.15 * double(n)));
  for (std::size_t i = 0; i < ids.size() && k > 0; ++i)
    if (ids[i] >= first && ids[i] < end) {
      out.second[i] = ids[i];
      const double u = gen.uniform();
      if (u < 0.8) out.first[i] = mask_id;
      else if (u < 0.9) out.first[i] = first + Index(gen.below(std::uint64_t(end - first)));
      --k;
    }
  return out;
}
WRONG_ANSWER(mask_for_mlm, mask_for_mlm_first_places, "always the first 15 % of the characters");

// ------------------------------------------------------------------ the head

Array<double> head_with(const Array<double>& h, const Array<double>& W, const Array<double>& b, const Array<double>& gamma,
                        const Array<double>& beta, const Array<double>& E, const Array<double>& bias, bool norm_first,
                        bool tanh_gelu, bool unbiased, bool with_bias) {
  const std::size_t N = h.shape()[0], d = h.shape()[1], V = E.shape()[0];
  auto gelu = [&](double x) {
    if (tanh_gelu) return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  };
  auto norm = [&](std::vector<double>& t) {
    double mean = 0, var = 0;
    for (double v : t) mean += v / double(d);
    for (double v : t) var += (v - mean) * (v - mean);
    var /= double(unbiased ? d - 1 : d);
    for (std::size_t c = 0; c < d; ++c) t[c] = gamma(c) * (t[c] - mean) / std::sqrt(var + 1e-5) + beta(c);
  };
  Array<double> out = xt::zeros<double>({N, V});
  for (std::size_t n = 0; n < N; ++n) {
    std::vector<double> t(d, 0.0);
    for (std::size_t r = 0; r < d; ++r) {
      t[r] = b(r);
      for (std::size_t c = 0; c < d; ++c) t[r] += W(r, c) * h(n, c);
    }
    if (norm_first) norm(t);
    for (double& v : t) v = gelu(v);
    if (!norm_first) norm(t);
    for (std::size_t v = 0; v < V; ++v) {
      out(n, v) = with_bias ? bias(v) : 0.0;
      for (std::size_t c = 0; c < d; ++c) out(n, v) += t[c] * E(v, c);
    }
  }
  return out;
}

Array<double> mlm_head(const Array<double>& h, const Array<double>& W, const Array<double>& b, const Array<double>& gamma,
                       const Array<double>& beta, const Array<double>& E, const Array<double>& bias) {
  return head_with(h, W, b, gamma, beta, E, bias, false, false, false, true);
}
SOLUTION(mlm_head);

Array<double> mlm_head_norm_first(const Array<double>& h, const Array<double>& W, const Array<double>& b,
                                  const Array<double>& gamma, const Array<double>& beta, const Array<double>& E,
                                  const Array<double>& bias) {
  return head_with(h, W, b, gamma, beta, E, bias, true, false, false, true);
}
WRONG_ANSWER(mlm_head, mlm_head_norm_first, "LayerNorm before gelu");

Array<double> mlm_head_tanh(const Array<double>& h, const Array<double>& W, const Array<double>& b,
                            const Array<double>& gamma, const Array<double>& beta, const Array<double>& E,
                            const Array<double>& bias) {
  return head_with(h, W, b, gamma, beta, E, bias, false, true, false, true);
}
WRONG_ANSWER(mlm_head, mlm_head_tanh, "the tanh approximation of gelu");

Array<double> mlm_head_unbiased(const Array<double>& h, const Array<double>& W, const Array<double>& b,
                                const Array<double>& gamma, const Array<double>& beta, const Array<double>& E,
                                const Array<double>& bias) {
  return head_with(h, W, b, gamma, beta, E, bias, false, false, true, true);
}
WRONG_ANSWER(mlm_head, mlm_head_unbiased, "the variance divided by d - 1");

Array<double> mlm_head_no_bias(const Array<double>& h, const Array<double>& W, const Array<double>& b,
                               const Array<double>& gamma, const Array<double>& beta, const Array<double>& E,
                               const Array<double>& bias) {
  return head_with(h, W, b, gamma, beta, E, bias, false, false, false, false);
}
WRONG_ANSWER(mlm_head, mlm_head_no_bias, "forgets the output bias");

// ------------------------------------------------------------------ offsets

Array<double> by_offset_with(const Array<double>& w, std::size_t reach, int sign, bool over_all) {
  const std::size_t H = w.shape()[0], L = w.shape()[1];
  Array<double> out = xt::zeros<double>({H, 2 * reach + 1});
  for (std::size_t k = 0; k < H; ++k)
    for (long o = -long(reach); o <= long(reach); ++o) {
      double sum = 0;
      std::size_t n = 0;
      for (long i = 0; i < long(L); ++i) {
        const long j = i + sign * o;
        if (j >= 0 && j < long(L)) sum += w(k, std::size_t(i), std::size_t(j)), ++n;
      }
      out(k, std::size_t(o + long(reach))) = sum / double(over_all ? L : std::max<std::size_t>(n, 1));
    }
  return out;
}

Array<double> attention_by_offset(const Array<double>& weights, std::size_t reach) {
  return by_offset_with(weights, reach, 1, false);
}
SOLUTION(attention_by_offset);

Array<double> attention_by_offset_flipped(const Array<double>& weights, std::size_t reach) {
  return by_offset_with(weights, reach, -1, false);
}
WRONG_ANSWER(attention_by_offset, attention_by_offset_flipped, "offset = query - key: left and right swapped");

Array<double> attention_by_offset_over_all(const Array<double>& weights, std::size_t reach) {
  return by_offset_with(weights, reach, 1, true);
}
WRONG_ANSWER(attention_by_offset, attention_by_offset_over_all,
             "divides by L: the queries without a key at that offset count as zeros");

// A large bias on one bucket per head: the one holding j - i = -1 for head 0, +1 for head 1.
Array<double> bias_table(long left, long right, double size) {
  Array<double> table = xt::zeros<double>({32, 2});
  table(nn::relative_position_bucket(left, 32, 128, true), 0) = size;
  table(nn::relative_position_bucket(right, 32, 128, true), 1) = size;
  return table;
}

Array<double> look_left_and_right_bias() { return bias_table(-1, 1, 12.0); }
SOLUTION(look_left_and_right_bias);

Array<double> gentle_bias() { return bias_table(-1, 1, 3.0); }
WRONG_ANSWER(look_left_and_right_bias, gentle_bias, "the right buckets with a bias of 3: the other keys outweigh it");

Array<double> swapped_sides() { return bias_table(1, -1, 12.0); }
WRONG_ANSWER(look_left_and_right_bias, swapped_sides, "j - i = +1 for the character before: the sign of the offset");

Array<double> bucket_as_offset() {
  Array<double> table = xt::zeros<double>({32, 2});
  table(1, 0) = table(1, 1) = 12.0;  // bucket 1 taken for offset 1, on both heads
  return table;
}
WRONG_ANSWER(look_left_and_right_bias, bucket_as_offset, "bucket number taken for the offset, without the bucket function");

}  // namespace
