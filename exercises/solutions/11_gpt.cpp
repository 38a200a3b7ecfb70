// Solutions to exercises/11_gpt.cpp, and the mistakes the grader must catch.
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

// ---- 11.1: the bigram model with its knobs: continuation or plain counts at the unigram level,
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

// ---- 11.2: the tied output scores each token by its own embedding, which every position's
// state still holds: the untrained model predicts its input again. An output layer of its own
// starts small.
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

// ---- 11.3
// `base`: 2 for bits, e for nats; `shift`: subtract the row's largest logit; `lag`: read the target of row t + lag.
std::vector<double> losses(const Array<double>& z, const std::vector<Index>& targets, double base, bool shift, std::size_t lag) {
  const std::size_t L = z.shape()[0], V = z.shape()[1];
  std::vector<double> out(L);
  for (std::size_t t = 0; t < L; ++t) {
    double top = shift ? -INFINITY : 0.0, sum = 0.0;
    if (shift)
      for (std::size_t v = 0; v < V; ++v) top = std::max(top, z(t, v));
    for (std::size_t v = 0; v < V; ++v) sum += std::exp(z(t, v) - top);
    const std::size_t target = std::size_t(targets[std::min(t + lag, L - 1)]);
    out[t] = (std::log(sum) + top - z(t, target)) / std::log(base);
  }
  return out;
}

std::vector<double> bits_by_position(const Array<double>& logits, const std::vector<Index>& targets) {
  return losses(logits, targets, 2.0, true, 0);
}
SOLUTION(bits_by_position);

std::vector<double> nats_by_position(const Array<double>& logits, const std::vector<Index>& targets) {
  return losses(logits, targets, std::exp(1.0), true, 0);
}
WRONG_ANSWER(bits_by_position, nats_by_position, "nats instead of bits");

std::vector<double> bits_unshifted(const Array<double>& logits, const std::vector<Index>& targets) {
  return losses(logits, targets, 2.0, false, 0);
}
WRONG_ANSWER(bits_by_position, bits_unshifted, "exp without subtracting the row's largest logit");

std::vector<double> bits_next_target(const Array<double>& logits, const std::vector<Index>& targets) {
  return losses(logits, targets, 2.0, true, 1);
}
WRONG_ANSWER(bits_by_position, bits_next_target, "row t scored against the target of row t + 1 (shifted twice)");

}  // namespace

