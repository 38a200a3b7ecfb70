// Solutions to exercises/12_kv_cache.cpp, and the mistakes the grader must catch.
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <vector>

#include <xtensor/xview.hpp>

#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 12.1
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

// ---- 12.2
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


// ---- 12.3
// `group_of(i, h, g)`: the key/value head query head i reads; `scale`: divide the scores by sqrt(d).
Array<double> grouped(const Array<double>& q, const Array<double>& keys, const Array<double>& values, std::size_t h,
                      std::size_t g, const std::function<std::size_t(std::size_t, std::size_t, std::size_t)>& group_of,
                      bool scale) {
  const std::size_t d = q.shape()[1] / h, t = keys.shape()[0];
  Array<double> out = xt::zeros<double>({std::size_t(1), h * d});
  for (std::size_t i = 0; i < h; ++i) {
    const std::size_t j = group_of(i, h, g);
    std::vector<double> s(t);
    double top = -INFINITY, sum = 0.0;
    for (std::size_t k = 0; k < t; ++k) {
      s[k] = 0.0;
      for (std::size_t c = 0; c < d; ++c) s[k] += q(0, i * d + c) * keys(k, j * d + c);
      if (scale) s[k] /= std::sqrt(double(d));
      top = std::max(top, s[k]);
    }
    for (std::size_t k = 0; k < t; ++k) sum += s[k] = std::exp(s[k] - top);
    for (std::size_t k = 0; k < t; ++k)
      for (std::size_t c = 0; c < d; ++c) out(0, i * d + c) += s[k] / sum * values(k, j * d + c);
  }
  return out;
}

Array<double> grouped_query_step(const Array<double>& q, const Array<double>& keys, const Array<double>& values,
                                 std::size_t heads, std::size_t kv_heads) {
  return grouped(q, keys, values, heads, kv_heads, [](std::size_t i, std::size_t h, std::size_t g) { return i / (h / g); },
                 true);
}
SOLUTION(grouped_query_step);

Array<double> grouped_interleaved(const Array<double>& q, const Array<double>& keys, const Array<double>& values,
                                  std::size_t heads, std::size_t kv_heads) {
  return grouped(q, keys, values, heads, kv_heads, [](std::size_t i, std::size_t, std::size_t g) { return i % g; }, true);
}
WRONG_ANSWER(grouped_query_step, grouped_interleaved, "query head i reads key/value head i mod g (groups interleaved)");

Array<double> grouped_unscaled(const Array<double>& q, const Array<double>& keys, const Array<double>& values,
                               std::size_t heads, std::size_t kv_heads) {
  return grouped(q, keys, values, heads, kv_heads, [](std::size_t i, std::size_t h, std::size_t g) { return i / (h / g); },
                 false);
}
WRONG_ANSWER(grouped_query_step, grouped_unscaled, "no 1 / sqrt(d) on the scores");

Array<double> grouped_first_head(const Array<double>& q, const Array<double>& keys, const Array<double>& values,
                                 std::size_t heads, std::size_t kv_heads) {
  return grouped(q, keys, values, heads, kv_heads, [](std::size_t, std::size_t, std::size_t) { return std::size_t(0); },
                 true);
}
WRONG_ANSWER(grouped_query_step, grouped_first_head, "every query head reads key/value head 0 (multi-query whatever g)");

}  // namespace
