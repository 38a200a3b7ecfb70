// Exercises for lesson 12, generating text and the KV cache. Grade them with build/bin/grade 12.
//
// Write each function in plain C++ and xtensor (loops, std::exp ...), not with the engine's ops
// or nn/lm: the point is to do by hand what nn/lm/sample.cpp and the KV cache of CausalLM (with
// its grouped-query attention) do for you.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 12.1 What sampling draws from: temperature and top-k -----------------------------------
// Return the distribution p (one probability per logit) that sampling with temperature T and
// top-k draws from: keep the k largest logits (k = 0: all of them; when several tie at the k-th
// value, keep the ones with the lower index first), p_i = exp(z_i / T) / sum over the kept j of
// exp(z_j / T) for a kept i, and 0 for the rest. Subtract the largest kept logit before exp.
std::vector<double> sampling_distribution(const std::vector<double>& logits, double T, std::size_t k) {
  not_attempted();  // delete this line and write your answer
}

// ---- 12.2 One step of generation with a KV cache (one head) ---------------------------------
// keys and values (t, d) hold the keys and values of the t positions already generated; q, k, v
// (1, d) are the new position's query, key and value. Append k and v to the cache (the new
// position may attend to itself) and return {output (1, d), keys (t + 1, d), values (t + 1, d)}:
//     output = softmax(q keys^T / sqrt(d)) values
// over all t + 1 cached positions: nothing to mask, they are all in the new position's past.
std::vector<Array<double>> cached_attention_step(const Array<double>& keys, const Array<double>& values,
                                                 const Array<double>& q, const Array<double>& k,
                                                 const Array<double>& v) {
  not_attempted();  // delete this line and write your answer
}

// ---- 12.3 One step of grouped-query attention ----------------------------------------------
// The new position's h query heads, each d wide, side by side in q (1, h d): head i is columns
// [i d, (i + 1) d). The cache holds only g key/value heads (g divides h), side by side likewise in
// keys and values (t, g d). Query heads are grouped in order: the first h / g share key/value
// head 0, the next h / g head 1, and so on. Return the output (1, h d): for each query head i, in
// its own columns, softmax(q_i K^T / sqrt(d)) V over the t cached positions, K and V the columns
// of the key/value head its group reads.
Array<double> grouped_query_step(const Array<double>& q, const Array<double>& keys, const Array<double>& values,
                                 std::size_t heads, std::size_t kv_heads) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against the engine's softmax over the
// allowed logits, and against the engine's attention, over the whole sequence or head by head.
namespace {

void grade_sampling_distribution(const std::function<std::vector<double>(const std::vector<double>&, double, std::size_t)>& answer,
                                 Grader& g) {
  // The engine's answer: the softmax of z / T over the allowed entries (the k largest).
  auto engine = [](const std::vector<double>& z, double T, std::size_t k) {
    const std::size_t n = z.size();
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return z[a] > z[b]; });
    Mask allowed = xt::zeros<bool>({n});
    for (std::size_t r = 0; r < (k == 0 ? n : std::min(k, n)); ++r) allowed(order[r]) = true;
    Array<double> scaled = xt::zeros<double>({n});
    for (std::size_t i = 0; i < n; ++i) scaled(i) = z[i] / T;
    return Array<double>(masked_softmax(Tensor<double>(scaled), Allowed::where(allowed)).value());
  };
  auto as_array = [](const std::vector<double>& v) {
    Array<double> a = xt::zeros<double>({v.size()});
    for (std::size_t i = 0; i < v.size(); ++i) a(i) = v[i];
    return a;
  };
  const std::vector<double> z{1.0, 2.0, 0.0, 2.0, -1.0, 0.5};
  g.close("T = 1, every logit", as_array(answer(z, 1.0, 0)), engine(z, 1.0, 0), 1e-12, "p = softmax(z): they sum to 1");
  g.close("T = 0.5 sharpens", as_array(answer(z, 0.5, 0)), engine(z, 0.5, 0), 1e-12, "divide every logit by T first");
  g.close("T = 2 flattens", as_array(answer(z, 2.0, 0)), engine(z, 2.0, 0), 1e-12, "divide every logit by T first");
  g.close("top-3 (two logits tie at the top)", as_array(answer(z, 1.0, 3)), engine(z, 1.0, 3), 1e-12,
          "keep the 3 largest, set the others to exactly 0 and renormalize over the kept ones");
  g.close("top-1 is the argmax (the lower index on a tie)", as_array(answer(z, 0.8, 1)), engine(z, 0.8, 1), 1e-12,
          "with k = 1 all the mass goes to one logit: of the two 2.0s, index 1");
  const std::vector<double> big{900.0, 905.0, 899.0};
  g.close("logits in the hundreds, T = 0.1", as_array(answer(big, 0.1, 0)), engine(big, 0.1, 0), 1e-12,
          "subtract the largest kept logit before exp, or exp(9050) overflows");
}

void grade_cached_attention_step(
    const std::function<std::vector<Array<double>>(const Array<double>&, const Array<double>&, const Array<double>&,
                                                   const Array<double>&, const Array<double>&)>& answer,
    Grader& g) {
  // A sequence of 7 positions (d = 5): the engine's causal attention over all of it at once, and
  // the answer fed the first 6 as the cache and the 7th as the new position.
  const std::size_t L = 7, d = 5;
  const Array<double> Q = random_array({L, d}, 11), K = random_array({L, d}, 12), V = random_array({L, d}, 13);
  AttentionOptions<double> o;
  o.causal = true;
  const Array<double> full = scaled_dot_product_attention(Tensor<double>(Q), Tensor<double>(K), Tensor<double>(V), o)
                                 .output.value();
  auto rows = [](const Array<double>& a, std::size_t lo, std::size_t hi) { return Array<double>(xt::view(a, xt::range(lo, hi))); };
  const std::vector<Array<double>> out =
      answer(rows(K, 0, L - 1), rows(V, 0, L - 1), rows(Q, L - 1, L), rows(K, L - 1, L), rows(V, L - 1, L));
  if (!g.check(out.size() == 3, "returns {output, keys, values}", std::to_string(out.size()) + " arrays returned",
               "return the output and the two grown caches"))
    return;
  g.close("the new position's output equals the last row of the full causal attention", out[0], rows(full, L - 1, L),
          1e-12, "scale by 1 / sqrt(d) and include the new key itself among the t + 1 keys");
  g.close("the keys cache grew by the new key", out[1], K, 0.0, "append k as the last row of keys");
  g.close("the values cache grew by the new value", out[2], V, 0.0, "append v as the last row of values");
  // Generation from an empty cache: every step through the answer, against every row.
  Array<double> keys = xt::zeros<double>({std::size_t(0), d}), values = keys, outs = xt::zeros<double>({L, d});
  for (std::size_t t = 0; t < L; ++t) {
    const std::vector<Array<double>> step = answer(keys, values, rows(Q, t, t + 1), rows(K, t, t + 1), rows(V, t, t + 1));
    if (step.size() != 3) return;
    xt::view(outs, t) = xt::view(step[0], 0);
    keys = step[1];
    values = step[2];
  }
  g.close("seven steps from an empty cache give every row of the full causal attention", outs, full, 1e-12,
          "the first step has no cache: the position attends to itself alone, output = v");
}

// Columns [from, from + width) of a.
Array<double> columns(const Array<double>& a, std::size_t from, std::size_t width) {
  return Array<double>(xt::view(a, xt::all(), xt::range(from, from + width)));
}

void grade_grouped_query_step(
    const std::function<Array<double>(const Array<double>&, const Array<double>&, const Array<double>&, std::size_t,
                                      std::size_t)>& answer,
    Grader& g) {
  // The engine's attention head by head, query head i over the key/value head of its group.
  const std::size_t h = 4, d = 3, t = 5;
  const Array<double> q = random_array({1, h * d}, 21);
  for (std::size_t kv : {std::size_t(4), std::size_t(2), std::size_t(1)}) {
    const Array<double> keys = random_array({t, kv * d}, 22 + kv), values = random_array({t, kv * d}, 32 + kv);
    Array<double> want = xt::zeros<double>({std::size_t(1), h * d});
    for (std::size_t i = 0; i < h; ++i) {
      const std::size_t j = i / (h / kv);
      const Array<double> out = scaled_dot_product_attention(Tensor<double>(columns(q, i * d, d)),
                                                             Tensor<double>(columns(keys, j * d, d)),
                                                             Tensor<double>(columns(values, j * d, d)))
                                    .output.value();
      xt::view(want, xt::all(), xt::range(i * d, (i + 1) * d)) = out;
    }
    const std::string what = std::to_string(h) + " query heads, " + std::to_string(kv) + " key/value head" +
                             (kv == 1 ? "" : "s") + (kv == h ? " (multi-head)" : kv == 1 ? " (multi-query)" : " (grouped)");
    const Array<double> got = answer(q, keys, values, h, kv);
    if (!g.check(got.shape() == want.shape(), what + ": the output's shape", "", "one row of h d numbers")) continue;
    g.close(what, got, want, 1e-12,
            kv == h ? "with as many key/value heads as query heads, head i reads key/value head i"
                    : "query head i reads key/value head i / (h / g): consecutive query heads share one");
  }
}

}  // namespace

EXERCISE(sampling_distribution, "What sampling draws from: temperature and top-k", grade_sampling_distribution);
EXERCISE(cached_attention_step, "One step of generation with a KV cache", grade_cached_attention_step);
EXERCISE(grouped_query_step, "One step of grouped-query attention", grade_grouped_query_step);
HINT(grouped_query_step,
     "for i in 0 .. h - 1: j = i / (h / g); s_k = q[i d .. (i + 1) d) . keys(k, [j d .. (j + 1) d)) / sqrt(d) for "
     "each cached position k; w = softmax(s); output[i d + c] = sum_k w_k values(k, j d + c)");
