// Solutions to exercises/04_scaled_dot_product.cpp, and the mistakes the grader must catch.
#include <cmath>

#include <random>
#include <vector>

#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

Mask causal_mask(std::size_t n) {
  Mask allowed = xt::zeros<bool>({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) allowed(i, j) = true;
  return allowed;
}
SOLUTION(causal_mask);

Mask causal_mask_sees_ahead(std::size_t n) {  // the transpose: query i sees keys i..n-1
  Mask allowed = causal_mask(n);
  return xt::transpose(allowed);
}
WRONG_ANSWER(causal_mask, causal_mask_sees_ahead, "the transpose: each query sees the future");

Mask causal_mask_strict(std::size_t n) {  // j < i: the token cannot see itself
  Mask allowed = causal_mask(n);
  for (std::size_t i = 0; i < n; ++i) allowed(i, i) = false;
  return allowed;
}
WRONG_ANSWER(causal_mask, causal_mask_strict, "j < i: a token may not see itself");

// The core of every variant below: `shift` says whether to subtract the row's maximum, `skip`
// whether a masked key is left out (else it is given a large negative score), `scale` the factor.
Array<double> attention(const Array<double>& Q, const Array<double>& K, const Array<double>& V, const Mask& allowed,
                        bool shift, bool skip, double scale) {
  const std::size_t lq = Q.shape()[0], lk = K.shape()[0], d = Q.shape()[1], dv = V.shape()[1];
  Array<double> out = xt::zeros<double>({lq, dv});
  for (std::size_t i = 0; i < lq; ++i) {
    std::vector<double> s(lk, 0.0);
    double top = -INFINITY;
    for (std::size_t j = 0; j < lk; ++j) {
      for (std::size_t c = 0; c < d; ++c) s[j] += Q(i, c) * K(j, c);
      s[j] *= scale;
      if (!allowed(i, j) && !skip) s[j] = -1e9;
      if (allowed(i, j) || !skip) top = std::max(top, s[j]);
    }
    std::vector<double> w(lk, 0.0);
    double sum = 0.0;
    for (std::size_t j = 0; j < lk; ++j)
      if (allowed(i, j) || !skip) sum += w[j] = std::exp(s[j] - (shift ? top : 0.0));
    if (sum == 0.0) continue;  // nothing allowed: a zero row
    for (std::size_t j = 0; j < lk; ++j)
      for (std::size_t c = 0; c < dv; ++c) out(i, c) += w[j] / sum * V(j, c);
  }
  return out;
}

Array<double> masked_attention(const Array<double>& Q, const Array<double>& K, const Array<double>& V,
                               const Mask& allowed) {
  return attention(Q, K, V, allowed, true, true, 1.0 / std::sqrt(double(Q.shape()[1])));
}
SOLUTION(masked_attention);

Array<double> masked_attention_unscaled(const Array<double>& Q, const Array<double>& K, const Array<double>& V,
                                        const Mask& allowed) {
  return attention(Q, K, V, allowed, true, true, 1.0);
}
WRONG_ANSWER(masked_attention, masked_attention_unscaled, "forgets the 1/sqrt(d)");

Array<double> masked_attention_fill(const Array<double>& Q, const Array<double>& K, const Array<double>& V,
                                    const Mask& allowed) {
  return attention(Q, K, V, allowed, true, false, 1.0 / std::sqrt(double(Q.shape()[1])));
}
WRONG_ANSWER(masked_attention, masked_attention_fill,
             "fills masked scores with -1e9: a row with nothing allowed becomes a uniform average");

Array<double> masked_attention_unshifted(const Array<double>& Q, const Array<double>& K, const Array<double>& V,
                                         const Mask& allowed) {
  return attention(Q, K, V, allowed, false, true, 1.0 / std::sqrt(double(Q.shape()[1])));
}
WRONG_ANSWER(masked_attention, masked_attention_unshifted, "exp of the raw scores: overflows on large scores");

// 04.3: simulated, with a generator of our own: 1000 queries over 8 keys, standard normal entries.
double simulated_top_weight(std::size_t d, bool scaled) {
  std::mt19937_64 gen(4);
  std::normal_distribution<double> normal;
  const double c = scaled ? 1.0 / std::sqrt(double(d)) : 1.0;
  double total = 0.0;
  const int queries = 1000;
  for (int r = 0; r < queries; ++r) {
    std::vector<double> q(d), s(8);
    for (double& x : q) x = normal(gen);
    for (double& score : s) {
      score = 0.0;
      for (std::size_t i = 0; i < d; ++i) score += c * q[i] * normal(gen);
    }
    const double top = *std::max_element(s.begin(), s.end());
    double z = 0.0;
    for (double score : s) z += std::exp(score - top);
    total += 1.0 / z;  // the largest weight: exp(0) / z
  }
  return total / queries;
}

double predicted_top_weight(std::size_t d, bool scaled) { return simulated_top_weight(d, scaled); }
SOLUTION(predicted_top_weight);

double predicted_top_weight_even(std::size_t, bool) { return 1.0 / 8.0; }
WRONG_ANSWER(predicted_top_weight, predicted_top_weight_even, "expects attention to start evenly spread, 1/8, either way");

double predicted_top_weight_scale_ignored(std::size_t d, bool) { return simulated_top_weight(d, true); }
WRONG_ANSWER(predicted_top_weight, predicted_top_weight_scale_ignored, "assumes the 1/sqrt(d) changes nothing at the start");

}  // namespace
