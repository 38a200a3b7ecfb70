// Luong's local attention, predictive alignment (local-p; Luong, Pham and Manning 2015, section
// 3.2): instead of comparing the query with every source position, the decoder first predicts
// where to look,
//   p_t = (S - 1) sigmoid(v_p^T tanh(W_p h_t))        a real position in 0 .. S - 1 (S: the real length)
// then attends only inside the window [p_t - D, p_t + D], with weights pulled towards p_t by a
// Gaussian of sigma = D / 2:
//   a_t(s) = softmax_{s in window}(score(h_t, hbar_s)) exp(-(s - p_t)^2 / (2 sigma^2)),
//   c_t    = sum_s a_t(s) hbar_s.
// The weights no longer sum to 1 (the Gaussian scales them down away from p_t). The window's edges
// are a step function of p_t (no gradient), so p_t learns through the Gaussian alone.
#pragma once

#include <cstddef>
#include <vector>

#include "core/ops.hpp"
#include "nn/attention/scores.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// The Gaussian factor, as one op: p (B, Lq) real positions, keys at 0 .. Lk - 1 ->
//   g[b, i, s] = exp(-(s - p[b, i])^2 / (2 sigma^2))                     (B, Lq, Lk)
//   dp[b, i]   = sum_s dg[b, i, s] g[b, i, s] (s - p[b, i]) / sigma^2
// ShapeError naming gaussian_window unless p is 2-D, Lk > 0 and sigma > 0.
template <class T>
Tensor<T> gaussian_window(const Tensor<T>& p, std::size_t keys, double sigma);

template <class T>
struct LocalAttentionResult {
  Tensor<T> output;     // (B, Lq, dv), or (B, dv) for one decoder step
  Tensor<T> weights;    // (B, Lq, Lk) or (B, Lk): the weights used, for plots (no gradient)
  Tensor<T> positions;  // (B, Lq) or (B): the predicted centres p_t (no gradient)
};

// What both local forms share once the centres p (B, Lq) are known (local-p predicts them, local-m
// takes the decoder's step, nn/attention/local_m.hpp): the score's softmax over the real keys
// within D of p_t, times the Gaussian of sigma = D / 2 around p_t, then the weighted values.
// query (B, Lq, dq), keys (B, Lk, dk), values (B, Lk, dv), real (B, Lk). Every row needs a real key
// within D of its centre (ShapeError naming `who` and the row otherwise).
template <class T>
LocalAttentionResult<T> window_attention(const char* who, const Score<T>& score, const Tensor<T>& query,
                                         const Tensor<T>& keys, const Tensor<T>& values, const Allowed& real,
                                         const Tensor<T>& p, std::size_t half_window);

// The shapes both local forms take: query (B, Lq, dq) or (B, dq) (returned as (B, Lq, dq)), keys
// (B, Lk, dk), values (B, Lk, dv), real (B, Lk); fills each row's number of real keys. ShapeError
// naming `who` and the shapes otherwise.
template <class T>
Tensor<T> local_query(const char* who, const Tensor<T>& query, const Tensor<T>& keys, const Tensor<T>& values,
                      const Allowed& real, std::vector<std::size_t>& lengths);

// The position predictor (W_p (A, dq), v_p (A), no biases, as in the paper) and the half-width D.
// It attends with a score it is given (the decoder's own, which global attention uses as well), so
// local-p and global attention differ by exactly the window.
template <class T>
class LocalPAttention : public Module<T> {
 public:
  // ShapeError naming LocalPAttention unless query_size, hidden and half_window are > 0.
  LocalPAttention(std::size_t query_size, std::size_t hidden, std::size_t half_window, Generator& gen);
  // p_t for queries (B, Lq, dq), given each example's real source length (B entries, > 0): (B, Lq).
  Tensor<T> centres(const Tensor<T>& query, const std::vector<std::size_t>& lengths) const;
  // query (B, Lq, dq) or (B, dq); keys (B, Lk, dk), values (B, Lk, dv); real (B, Lk) the keys that
  // exist (a real prefix of each row). Every query has at least the key nearest p_t in its window.
  LocalAttentionResult<T> forward(const Score<T>& score, const Tensor<T>& query, const Tensor<T>& keys,
                                  const Tensor<T>& values, const Allowed& real) const;
  std::size_t half_window() const { return half_window_; }
  double sigma() const { return half_window_ / 2.0; }

  Linear<T> predict;  // W_p: dq -> A
  Linear<T> v;        // v_p: A -> 1

 private:
  std::size_t half_window_;
};

}  // namespace attnlab::nn
