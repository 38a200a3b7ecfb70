// Exercises for lesson 14, BERT. Grade them with build/bin/grade 14.
//
// Write each function in plain C++ and xtensor (loops, xt::zeros, std::exp, std::erf ...), not
// with the engine's ops or modules: the point is to do by hand what nn/data/masking.cpp and
// nn/transformer/masked_lm.cpp do for you.
#include <cmath>
#include <utility>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "lessons/kit/heads.hpp"
#include "nn/data/masking.hpp"
#include "nn/positional/relative.hpp"
#include "nn/transformer/masked_lm.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 14.1 The 80/10/10 masking rule ---------------------------------------------------------
// ids is one sequence of token ids. The characters are the ids in [first, end); everything else
// ([CLS], <eos>, padding) is never chosen. Choose 15 % of the characters as targets (round(0.15 n)
// of the n characters, at least one when there are any, each set of places equally likely: use
// gen.below(k) for a uniform integer in [0, k)). Then, for each chosen place, with one draw
// u = gen.uniform(): u < 0.8 puts mask_id in the input, u < 0.9 a random character
// first + gen.below(end - first), and otherwise leaves the character as it is.
// Return {input, target}: input is what the model reads; target holds the original id at the
// chosen places and -100 everywhere else (the loss ignores -100).
std::pair<std::vector<Index>, std::vector<Index>> mask_for_mlm(const std::vector<Index>& ids, Index mask_id,
                                                               Index first, Index end, Generator& gen) {
  not_attempted();  // delete this line and write your answer
}

// ---- 14.2 BERT's prediction head, tied to the embedding ----------------------------------
// h (N, d) are the encoder's outputs at the N places to predict. The head computes
//     t = gelu(h W^T + b)                 W (d, d), b (d); gelu(x) = x (1 + erf(x / sqrt 2)) / 2
//     u = LayerNorm(t) = gamma * (t - mean) / sqrt(var + 1e-5) + beta, over each row's d entries,
//         var the plain mean of the squared deviations (divide by d, not d - 1)
//     logits = u E^T + bias               E (V, d): the token embedding table itself, bias (V)
// Return the logits (N, V). The output layer has no weights of its own: it scores each token by
// the dot product of u with that token's embedding.
Array<double> mlm_head(const Array<double>& h, const Array<double>& W, const Array<double>& b,
                       const Array<double>& gamma, const Array<double>& beta, const Array<double>& E,
                       const Array<double>& bias) {
  not_attempted();  // delete this line and write your answer
}

// ---- 14.3 Attention by relative position ----------------------------------------------------
// weights (h, L, L) are one layer's attention weights on one sequence: weights(k, i, j) is how
// much head k's query i puts on key j. For each head and each offset o in -reach .. reach, return
// the mean of weights(k, i, i + o) over the queries i that have a key at i + o (0 <= i + o < L):
// an (h, 2 reach + 1) array whose column reach + o is offset o. Negative offsets are keys to the
// left of the query. A head that always looks at the previous token has 1 in column reach - 1.
Array<double> attention_by_offset(const Array<double>& weights, std::size_t reach) {
  not_attempted();  // delete this line and write your answer
}

// ---- 14.4 Look left, look right: a head's position bias -------------------------------------
// An experiment, graded by running it. Lesson 14's BERT has no position embeddings: each head adds
// a learned bias to its scores that depends only on the relative position j - i of key and query,
// through T5's buckets (nn/positional/relative.hpp; you may call nn::relative_position_bucket,
// with 32 buckets, max_distance 128, both directions). Fill the bias table (32 buckets, 2 heads) so
// that head 0 reads the character just before each query and head 1 the one just after: each must
// put at least 0.9 of its weight there, on average, whatever the characters, while its content
// scores q.k / sqrt(d) still vary (the grader adds scores drawn from a normal with sd 1). The
// grader builds nn::RelativePositionBias with your table and measures the weights with lesson 14's
// offset_mass on sequences of 64 and of 300 characters (the longest lesson 14 reads is 128).
Array<double> look_left_and_right_bias() {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): by the rule's own counts over many draws and
// the engine's mask_tokens, against nn::MaskedLMHead, and against the lesson's offset_mass.
namespace {

void grade_mask_for_mlm(
    const std::function<std::pair<std::vector<Index>, std::vector<Index>>(const std::vector<Index>&, Index, Index, Index,
                                                                          Generator&)>& answer,
    Grader& g) {
  const Index mask = 3, first = 4, end = 44, cls = 45;
  // [CLS], 98 characters, <eos> (2) and a pad (0): 98 eligible, round(14.7) = 15 chosen.
  Generator make(1);
  std::vector<Index> ids = {cls};
  for (int i = 0; i < 98; ++i) ids.push_back(first + Index(make.below(std::uint64_t(end - first))));
  ids.push_back(2);
  ids.push_back(0);
  const std::size_t draws = 3000;
  Generator gen(2);
  std::size_t bad_length = 0, special_chosen = 0, wrong_target = 0, changed_unchosen = 0, bad_random = 0;
  std::size_t wrong_count = 0;
  double chosen = 0, masked = 0, replaced = 0, kept = 0;
  for (std::size_t d = 0; d < draws; ++d) {
    const auto [input, target] = answer(ids, mask, first, end, gen);
    if (input.size() != ids.size() || target.size() != ids.size()) {
      ++bad_length;
      continue;
    }
    std::size_t n = 0;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const bool eligible = ids[i] >= first && ids[i] < end;
      if (target[i] == -100) {
        changed_unchosen += input[i] != ids[i];
        continue;
      }
      ++n;
      special_chosen += !eligible;
      wrong_target += target[i] != ids[i];
      if (input[i] == mask) ++masked;
      else if (input[i] == ids[i]) ++kept;
      else {
        ++replaced;
        bad_random += input[i] < first || input[i] >= end;
      }
    }
    chosen += double(n);
    // The engine's rule chooses exactly round(0.15 n) of the n characters.
    wrong_count += n != 15;
  }
  g.check(bad_length == 0, "input and target are as long as ids", std::to_string(bad_length) + " of 3000 draws differ",
          "return one input id and one target per position of ids");
  g.check(special_chosen == 0, "[CLS], <eos> and padding are never chosen",
          std::to_string(special_chosen) + " specials chosen over 3000 draws", "only ids in [first, end) are eligible");
  g.check(wrong_count == 0, "round(0.15 n) characters chosen each time",
          "the count was not 15 in " + std::to_string(wrong_count) + " of 3000 draws (98 characters)",
          "choose exactly round(0.15 * 98) = 15 places, without replacement");
  g.check(wrong_target == 0, "the target is the original id at each chosen place",
          std::to_string(wrong_target) + " targets differ from ids", "target[i] = ids[i] where chosen, -100 elsewhere");
  g.check(changed_unchosen == 0, "places not chosen are read as they are",
          std::to_string(changed_unchosen) + " unchosen places changed", "only chosen places may change");
  // 45,000 chosen places: a share's standard deviation is at most 0.24 %; allow 1 %.
  const double expected_random = 0.1 * (1.0 - 1.0 / double(end - first));  // a random draw may give the original back
  const double expected_kept = 0.1 + 0.1 / double(end - first);
  auto share = [&](double v) { return chosen > 0 ? v / chosen : 0.0; };
  g.check(std::abs(share(masked) - 0.8) < 0.01, "80 % of the chosen become [MASK]",
          "measured " + std::to_string(share(masked)), "u < 0.8: the mask id");
  g.check(std::abs(share(replaced) - expected_random) < 0.01 && bad_random == 0,
          "10 % become a random character from [first, end)",
          "measured " + std::to_string(share(replaced)) + ", " + std::to_string(bad_random) + " outside [first, end)",
          "0.8 <= u < 0.9: first + gen.below(end - first), never a special");
  g.check(std::abs(share(kept) - expected_kept) < 0.01, "10 % are left as they are",
          "measured " + std::to_string(share(kept)), "u >= 0.9: the character stays, and is still a target");
  // Every place equally likely: the engine's rule and the answer agree on how often each place is
  // chosen (to within the noise of 3000 draws).
  Generator engine_gen(3), answer_gen(3);
  std::vector<double> ours(ids.size(), 0.0), theirs(ids.size(), 0.0);
  for (std::size_t d = 0; d < draws; ++d) {
    const nn::data::MaskedTokens m = nn::data::mask_tokens(ids, mask, first, end, engine_gen);
    const auto answered = answer(ids, mask, first, end, answer_gen);
    for (std::size_t i = 0; i < ids.size(); ++i) {
      ours[i] += m.target[i] != -100;
      if (i < answered.second.size()) theirs[i] += answered.second[i] != -100;
    }
  }
  double worst = 0;
  for (std::size_t i = 0; i < ids.size(); ++i) worst = std::max(worst, std::abs(ours[i] - theirs[i]) / double(draws));
  g.check(worst < 0.05, "each character is as likely to be chosen as any other (as the engine's rule)",
          "the largest difference in a place's chosen share: " + std::to_string(worst),
          "pick places uniformly without replacement: e.g. the first k of a shuffle of the eligible places");
}

void grade_mlm_head(const std::function<Array<double>(const Array<double>&, const Array<double>&, const Array<double>&,
                                                      const Array<double>&, const Array<double>&, const Array<double>&,
                                                      const Array<double>&)>& answer,
                    Grader& g) {
  const std::size_t N = 5, d = 8, V = 11;
  const Array<double> h = random_array({N, d}, 4), W = random_array({d, d}, 5, -0.5, 0.5), b = random_array({d}, 6),
                      gamma = random_array({d}, 7, 0.5, 1.5), beta = random_array({d}, 8), E = random_array({V, d}, 9),
                      bias = random_array({V}, 10);
  Generator gen(11);  // the head's own initial draw, replaced below
  const Tensor<double> table(E);
  nn::MaskedLMHead<double> head(table, 1e-5, gen);
  {
    NoGrad no_grad;
    head.transform.weight.mutable_value() = W;
    head.transform.bias.mutable_value() = b;
    head.norm.weight.mutable_value() = gamma;
    head.norm.bias.mutable_value() = beta;
    head.bias.mutable_value() = bias;
  }
  const Array<double> expected = head.forward(Tensor<double>(h)).value();
  g.close("logits (5, 11) against nn::MaskedLMHead", answer(h, W, b, gamma, beta, E, bias), expected, 1e-9,
          "the order is dense, gelu (the erf form), LayerNorm (variance over d, eps 1e-5), then u E^T + bias");
  const Array<double> big = 30.0 * h;  // far into GELU's linear part, and a wide spread for the norm
  g.close("inputs 30 times larger", answer(big, W, b, gamma, beta, E, bias), head.forward(Tensor<double>(big)).value(),
          1e-9, "LayerNorm subtracts the row's mean and divides by its standard deviation");
}

// What lesson 14 draws (lessons/kit/heads.hpp): offset_mass(w, k) is the mean weight on the key k
// places to the left of the query, so offset o = key - query is offset_mass(w, -o).
Array<double> lesson_by_offset(const Array<double>& w, std::size_t reach) {
  const std::size_t H = w.shape()[0], L = w.shape()[1];
  Array<float> batch = xt::cast<float>(w);
  batch.reshape({1, H, L, L});
  Array<double> out = xt::zeros<double>({H, 2 * reach + 1});
  for (long o = -long(reach); o <= long(reach); ++o) {
    const std::vector<double> mass = lessons::offset_mass(batch, -o);
    for (std::size_t k = 0; k < H; ++k) out(k, std::size_t(o + long(reach))) = mass[k];
  }
  return out;
}

void grade_attention_by_offset(const std::function<Array<double>(const Array<double>&, std::size_t)>& answer, Grader& g) {
  // A head that looks one to the left, one that looks one to the right, one that looks at itself,
  // and a softmax of random scores.
  const std::size_t L = 9;
  Array<double> w = xt::zeros<double>({std::size_t(4), L, L});
  for (std::size_t i = 0; i < L; ++i) {
    w(0, i, i == 0 ? 0 : i - 1) = 1.0;
    w(1, i, i + 1 == L ? i : i + 1) = 1.0;
    w(2, i, i) = 1.0;
  }
  const Array<double> scores = random_array({L, L}, 12, -2.0, 2.0);
  const Array<double> soft = softmax(Tensor<double>(scores), -1).value();
  xt::view(w, 3) = soft;
  const Array<double> expected = lesson_by_offset(w, 3);
  const Array<double> got = answer(w, 3);
  // The lesson's own computation runs in float: agreement to 1e-6.
  g.close("four heads, reach 3: previous, next, self, random (against the lesson's offset_mass)", got, expected, 1e-6,
          "column reach + o holds offset o = key - query; average over the queries i with 0 <= i + o < L only");
  g.check(got.dimension() == 2 && got.shape()[1] == 7 && std::abs(got(0, 2) - 1.0) < 1e-12,
          "the previous-token head puts all its weight at offset -1 (column reach - 1)",
          got.dimension() == 2 && got.shape()[1] == 7 ? "column 2 of head 1: " + std::to_string(got(0, 2)) : "wrong shape",
          "negative offsets are keys to the left of the query");
  g.close("reach 0: the diagonal's mean", answer(w, 0), lesson_by_offset(w, 0), 1e-6, "one column, offset 0");
}

void grade_look_left_and_right(const std::function<Array<double>()>& answer, Grader& g) {
  const Array<double> table = answer();
  if (!g.check(table.shape().size() == 2 && table.shape()[0] == 32 && table.shape()[1] == 2,
               "the table is (32 buckets, 2 heads)", "yours " + shape_str(table.shape())))
    return;
  Generator gen(12);
  nn::RelativePositionBias<float> bias(2, gen, 32, 128, true);
  {
    NoGrad no_grad;
    bias.weight().mutable_value() = xt::cast<float>(table);
  }
  for (std::size_t L : {64, 300}) {
    NoGrad no_grad;
    const Array<float> content = random_normal<float>({4, 2, L, L}, gen);  // 4 sequences' q.k / sqrt(d)
    const Array<float> weights = softmax(add(Tensor<float>(content), bias.forward(L, L)), -1).value();
    const double left = lessons::offset_mass(weights, 1)[0], right = lessons::offset_mass(weights, -1)[1];
    const std::string at = std::to_string(L) + " characters: ";
    g.check(left >= 0.9, at + "head 0's weight on the character before the query",
            "measured " + std::to_string(left) + ", target at least 0.9",
            "which bucket holds j - i = -1? And how large must a bias be to beat L keys whose scores vary by about 1?");
    g.check(right >= 0.9, at + "head 1's weight on the character after the query",
            "measured " + std::to_string(right) + ", target at least 0.9",
            "which bucket holds j - i = +1? With both directions, keys after the query use the other half of the buckets");
  }
}

}  // namespace

EXERCISE(mask_for_mlm, "The 80/10/10 masking rule", grade_mask_for_mlm);
EXERCISE(mlm_head, "BERT's prediction head, tied to the embedding", grade_mlm_head);
EXERCISE(attention_by_offset, "Attention by relative position", grade_attention_by_offset);
EXERCISE(look_left_and_right_bias, "Look left, look right: a head's position bias", grade_look_left_and_right);
HINT(look_left_and_right_bias,
     "table(relative_position_bucket(-1, 32, 128, true), 0) = table(relative_position_bucket(+1, 32, 128, true), 1) "
     "= 12 and 0 elsewhere: e^12 against up to 300 keys of e^(about 1) leaves about 0.99 on the one key");
