// Scaled dot-product attention, fused: one node whose backward is derived by hand (in
// core/ops/attention.cpp, and step by step with checks in lesson 06, lessons/06_attention_backward.cpp).
#pragma once

#include <optional>

#include "core/allowed.hpp"
#include "core/tensor.hpp"

namespace attnlab {

// What every exact attention op takes about its scores (this one, and tiled and local attention):
// which keys each query may see, and the factor on Q K^T.
struct AttentionScoreOptions {
  // Which keys each query may attend to, broadcastable to (..., Lq, Lk) (core/allowed.hpp).
  std::optional<Allowed> allowed;
  bool causal = false;          // query i may attend to keys j <= i (aligned at the start)
  std::optional<double> scale;  // the factor on Q K^T; default 1 / sqrt(d_k)
};

template <class T>
struct AttentionOptions : AttentionScoreOptions {
  Tensor<T> bias;               // optional additive score bias, broadcastable to (..., Lq, Lk)
                                // (relative position bias, ALiBi); receives a gradient
  double dropout = 0.0;         // dropout on the attention weights (training only)
  Generator* generator = nullptr;  // needed when dropout > 0
};

template <class T>
struct AttentionResult {
  Tensor<T> output;   // (..., Lq, dv)
  Tensor<T> weights;  // (..., Lq, Lk), the softmax before dropout; for plotting, not differentiable
};

// Q (..., Lq, d), K (..., Lk, d), V (..., Lk, dv), the same leading dims.
// Masked positions get exactly zero weight and zero gradient; a query with every key masked
// gets a zero output row and zero gradient, never NaN.
template <class T>
AttentionResult<T> scaled_dot_product_attention(const Tensor<T>& q, const Tensor<T>& k,
                                                const Tensor<T>& v,
                                                const AttentionOptions<T>& options = {});

// Multi-head attention on the projections as they come out of a Linear, with no split-heads or
// merge-heads copies: q (B, Lq, h*dk), k (B, Lk, h*dk), v (B, Lk, h*dv); head i reads columns
// i*dk .. (i+1)*dk - 1 in place. Returns the output (B, Lq, h*dv), heads side by side (what
// merging the heads gives), and the weights (B, h, Lq, Lk). Mask and bias broadcast to
// (B, h, Lq, Lk). Equal to scaled_dot_product_attention on the split heads, then merged.
template <class T>
AttentionResult<T> multi_head_attention(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v,
                                        std::size_t heads, const AttentionOptions<T>& options = {});

// Self-attention from one packed projection qkv (B, L, 3*h*d) = [Q | K | V] along the last axis
// (one GEMM makes all three; the backward writes dQ, dK and dV into one gradient). Returns the
// output (B, L, h*d) and the weights (B, h, L, L).
template <class T>
AttentionResult<T> multi_head_self_attention(const Tensor<T>& qkv, std::size_t heads,
                                             const AttentionOptions<T>& options = {});

}  // namespace attnlab
