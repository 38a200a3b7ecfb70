// Solutions to exercises/10_gpt.cpp, and the mistakes the grader must catch.
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <set>
#include <vector>

#include <xtensor/xview.hpp>

#include "exercises/grading/exercise.hpp"
#include "nn/transformer/causal_lm.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

using Corpus = std::vector<std::vector<Index>>;

// ---- 10.1: the bigram model with its knobs: continuation or plain counts at the unigram level,
// whether the uniform share excludes bos, whether <eos> is counted as a pair's second token.
double bigram(const Corpus& corpus, std::size_t V, Index bos, Index eos, double D, Index prev, Index next,
              bool continuation, bool uniform_without_bos, bool count_eos) {
  std::map<std::pair<Index, Index>, double> pairs;  // c(h w)
  for (const auto& s : corpus) {
    std::vector<Index> x{bos};
    x.insert(x.end(), s.begin(), s.end());
    if (count_eos) x.push_back(eos);
    for (std::size_t i = 1; i < x.size(); ++i) pairs[{x[i - 1], x[i]}] += 1;
  }
  std::map<Index, double> unigram;  // N(. w), or c(w)
  for (const auto& [hw, c] : pairs) unigram[hw.second] += continuation ? 1.0 : c;
  double total = 0, types = 0;
  for (const auto& [w, n] : unigram) total += n, types += n > 0;
  const double uniform = 1.0 / double(uniform_without_bos ? V - 1 : V);
  const double p1 = std::max((unigram.count(next) ? unigram[next] : 0.0) - D, 0.0) / total + D * types / total * uniform;
  double c_h = 0, t_h = 0, c_hw = 0;
  for (const auto& [hw, c] : pairs)
    if (hw.first == prev) {
      c_h += c, t_h += 1;
      if (hw.second == next) c_hw = c;
    }
  if (c_h == 0) return p1;
  return std::max(c_hw - D, 0.0) / c_h + D * t_h / c_h * p1;
}

double kneser_ney_bigram(const Corpus& corpus, std::size_t V, Index bos, Index eos, double D, Index prev, Index next) {
  return bigram(corpus, V, bos, eos, D, prev, next, true, true, true);
}
SOLUTION(kneser_ney_bigram);

double kneser_ney_bigram_frequency(const Corpus& c, std::size_t V, Index bos, Index eos, double D, Index prev, Index next) {
  return bigram(c, V, bos, eos, D, prev, next, false, true, true);
}
WRONG_ANSWER(kneser_ney_bigram, kneser_ney_bigram_frequency, "unigram frequencies instead of continuation counts (absolute discounting)");

double kneser_ney_bigram_uniform_v(const Corpus& c, std::size_t V, Index bos, Index eos, double D, Index prev, Index next) {
  return bigram(c, V, bos, eos, D, prev, next, true, false, true);
}
WRONG_ANSWER(kneser_ney_bigram, kneser_ney_bigram_uniform_v, "the uniform share over all V ids, bos included");

double kneser_ney_bigram_no_eos(const Corpus& c, std::size_t V, Index bos, Index eos, double D, Index prev, Index next) {
  return bigram(c, V, bos, eos, D, prev, next, true, true, false);
}
WRONG_ANSWER(kneser_ney_bigram, kneser_ney_bigram_no_eos, "the <eos> after each sequence left out of the counts");

// ---- 10.2
// `shift`: subtract the largest kept logit before exp.
std::vector<double> distribution(const std::vector<double>& z, double T, std::size_t k, bool shift) {
  std::vector<std::size_t> order(z.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return z[a] > z[b]; });
  const std::size_t keep = k == 0 ? z.size() : std::min(k, z.size());
  std::vector<double> p(z.size(), 0.0);
  double top = -INFINITY;
  for (std::size_t r = 0; r < keep; ++r) top = std::max(top, z[order[r]]);
  double sum = 0.0;
  for (std::size_t r = 0; r < keep; ++r) {
    const std::size_t i = order[r];
    sum += p[i] = std::exp(shift ? (z[i] - top) / T : z[i] / T);
  }
  for (double& x : p) x /= sum;
  return p;
}

std::vector<double> sampling_distribution(const std::vector<double>& z, double T, std::size_t k) {
  return distribution(z, T, k, true);
}
SOLUTION(sampling_distribution);

std::vector<double> sampling_distribution_times_t(const std::vector<double>& z, double T, std::size_t k) {
  std::vector<double> scaled(z);
  for (double& x : scaled) x *= T * T;  // divided by T below: z * T in all
  return distribution(scaled, T, k, true);
}
WRONG_ANSWER(sampling_distribution, sampling_distribution_times_t, "logits multiplied by T instead of divided");

std::vector<double> sampling_distribution_unshifted(const std::vector<double>& z, double T, std::size_t k) {
  return distribution(z, T, k, false);
}
WRONG_ANSWER(sampling_distribution, sampling_distribution_unshifted, "exp without subtracting the largest logit");

std::vector<double> sampling_distribution_late_ties(const std::vector<double>& z, double T, std::size_t k) {
  std::vector<std::size_t> order(z.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return z[a] != z[b] ? z[a] > z[b] : a > b; });
  std::vector<double> kept(z.size(), -INFINITY);
  for (std::size_t r = 0; r < (k == 0 ? z.size() : std::min(k, z.size())); ++r) kept[order[r]] = z[order[r]];
  std::vector<double> p(z.size(), 0.0);
  const double top = *std::max_element(kept.begin(), kept.end());
  double sum = 0.0;
  for (std::size_t i = 0; i < z.size(); ++i)
    if (kept[i] > -INFINITY) sum += p[i] = std::exp((kept[i] - top) / T);
  for (double& x : p) x /= sum;
  return p;
}
WRONG_ANSWER(sampling_distribution, sampling_distribution_late_ties, "a tie at the k-th value goes to the higher index");

std::vector<double> sampling_distribution_no_renormalizing(const std::vector<double>& z, double T, std::size_t k) {
  std::vector<double> all = distribution(z, T, 0, true), cut = distribution(z, T, k, true);
  for (std::size_t i = 0; i < z.size(); ++i) cut[i] = cut[i] > 0 ? all[i] : 0.0;  // the kept ones' full-softmax share
  return cut;
}
WRONG_ANSWER(sampling_distribution, sampling_distribution_no_renormalizing, "top-k that zeroes the rest without renormalizing");

// ---- 10.3
Array<double> grown(const Array<double>& cache, const Array<double>& row) {
  const std::size_t t = cache.shape()[0], d = row.shape()[1];
  Array<double> out = xt::zeros<double>({t + 1, d});
  if (t > 0) xt::view(out, xt::range(0, t)) = cache;
  xt::view(out, t) = xt::view(row, 0);
  return out;
}

std::vector<Array<double>> step(const Array<double>& keys, const Array<double>& values, const Array<double>& q,
                                const Array<double>& k, const Array<double>& v, bool append_first, double scale_power) {
  const Array<double> K = grown(keys, k), V = grown(values, v);
  const std::size_t n = append_first ? K.shape()[0] : keys.shape()[0], d = q.shape()[1];
  std::vector<double> s(n);
  double top = -INFINITY;
  for (std::size_t j = 0; j < n; ++j) {
    s[j] = 0.0;
    for (std::size_t c = 0; c < d; ++c) s[j] += q(0, c) * K(j, c);
    s[j] /= std::pow(double(d), scale_power);
    top = std::max(top, s[j]);
  }
  Array<double> out = xt::zeros<double>({std::size_t(1), d});
  double sum = 0.0;
  for (std::size_t j = 0; j < n; ++j) sum += s[j] = std::exp(s[j] - top);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t c = 0; c < d; ++c) out(0, c) += s[j] / sum * V(j, c);
  return {out, K, V};
}

std::vector<Array<double>> cached_attention_step(const Array<double>& keys, const Array<double>& values,
                                                 const Array<double>& q, const Array<double>& k, const Array<double>& v) {
  return step(keys, values, q, k, v, true, 0.5);
}
SOLUTION(cached_attention_step);

std::vector<Array<double>> cached_attention_step_past_only(const Array<double>& keys, const Array<double>& values,
                                                           const Array<double>& q, const Array<double>& k,
                                                           const Array<double>& v) {
  if (keys.shape()[0] == 0) return {v, grown(keys, k), grown(values, v)};  // nothing to attend to yet
  return step(keys, values, q, k, v, false, 0.5);
}
WRONG_ANSWER(cached_attention_step, cached_attention_step_past_only, "the new position does not attend to itself");

std::vector<Array<double>> cached_attention_step_unscaled(const Array<double>& keys, const Array<double>& values,
                                                          const Array<double>& q, const Array<double>& k,
                                                          const Array<double>& v) {
  return step(keys, values, q, k, v, true, 0.0);
}
WRONG_ANSWER(cached_attention_step, cached_attention_step_unscaled, "no 1 / sqrt(d) on the scores");

// The tied output scores each token by its own embedding, which every position's state still
// holds: the untrained model predicts its input again. An output layer of its own starts small.
nn::CausalLMConfig uniform_start(nn::CausalLMConfig c) {
  c.tie_output = false;
  return c;
}
SOLUTION(uniform_start);

nn::CausalLMConfig lesson_as_it_is(nn::CausalLMConfig c) { return c; }
WRONG_ANSWER(uniform_start, lesson_as_it_is, "the lesson's config as it is");

nn::CausalLMConfig learned_positions(nn::CausalLMConfig c) {
  c.positional = nn::Positional::Learned;
  return c;
}
WRONG_ANSWER(uniform_start, learned_positions, "blames the rotary positions");

nn::CausalLMConfig post_norm(nn::CausalLMConfig c) {
  c.layer.norm_first = false;
  return c;
}
WRONG_ANSWER(uniform_start, post_norm, "post-norm layers instead of pre-norm");

nn::CausalLMConfig narrower(nn::CausalLMConfig c) {
  c.layer.d_model = 16;
  return c;
}
WRONG_ANSWER(uniform_start, narrower, "a narrower model (d_model 16): smaller logits, but another model");

}  // namespace
