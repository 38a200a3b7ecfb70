// Multi-head attention (Vaswani et al. 2017) in PyTorch's nn.MultiheadAttention layout, so that a
// PyTorch state_dict loads by name:
//   in_proj_weight (3d, d) = [W_q; W_k; W_v] stacked by rows, in_proj_bias (3d) = [b_q; b_k; b_v],
//   out_proj = W_o, b_o (a Linear d -> d).
//   q = query W_q^T + b_q, k = key W_k^T + b_k, v = value W_v^T + b_v, split into h heads of
//   d_k = d / h, per head softmax(q k^T / sqrt(d_k) + bias) v, heads side by side, then out_proj.
// How it runs: self-attention makes q, k and v with one GEMM on the packed in_proj_weight as it
// is stored (multi_head_self_attention reads the heads in place from (B, L, 3d)); cross-attention
// projects with the three row blocks (q_proj, k_proj, v_proj, each a slice of the packed
// parameter whose gradient lands in its rows), and so does self-attention with a qk_transform,
// which sees q and k between the projection and the scores. No path copies heads apart: the
// attention op reads them in place. An optional gate per head scales each head's output before
// out_proj (ablation, head importance).
// Parameters: 3d^2 + 3d in, d^2 + d out, 4 d^2 (+ 4 d with biases); d = 64, h = 8 with biases:
// 16,640. Weights Xavier-uniform per d x d block, biases zero.
// Grouped-query attention (kv_heads = g < h; multi-query attention: g = 1): the keys and values
// have g heads of d_k, W_k and W_v are (g d_k, d), in_proj_weight is ((h + 2g) d_k, d), and query
// heads [i h/g, (i + 1) h/g) share key/value head i (repeat_heads, core/ops/grouped_heads.hpp, whose
// backward sums a shared head's gradient over its group). The KV cache holds g heads, not h: h/g
// times fewer bytes per token. g = h is multi-head attention, parameter for parameter.
#pragma once

#include <functional>
#include <optional>

#include "core/ops.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

template <class T>
struct MultiHeadOptions {
  // (B, Lk): the keys that exist (a padded batch: Allowed::where(batch.real)); padding gets
  // zero weight.
  std::optional<Allowed> allowed_keys;
  // Broadcastable to (B, h, Lq, Lk): which key each query may attend to; combined with the
  // others (allowed by all).
  std::optional<Allowed> allowed;
  bool causal = false;  // query i attends to keys j <= i
  // Additive score bias broadcastable to (B, h, Lq, Lk) (relative position bias, ALiBi); it is
  // added after the 1/sqrt(d_k) scaling and receives a gradient if it requires one.
  Tensor<T> bias;
  // Applied to the queries and keys, (B, Lq, h * d_k) and (B, Lk, h * d_k) with the heads side
  // by side, after the projections and before the scores (RoPE). It must keep the shape.
  std::function<Tensor<T>(const Tensor<T>&)> qk_transform;
  // A score bias made from the queries (Shaw's relative positions, q_i . w_{j - i}): called with q
  // (B, Lq, h * d_k), heads side by side, after the qk_transform; it must return a bias that
  // broadcasts to (B, h, Lq, Lk), added after the 1/sqrt(d_k) scaling like `bias` (and to it).
  std::function<Tensor<T>(const Tensor<T>&)> query_bias;
};

// What self-attention keeps of the positions it has seen, for generating one token at a time:
// their keys (after the qk_transform: RoPE rotates each key once, at its own position) and their
// values, (B, L, kv_heads * d_k) each (d_model without grouped queries), heads side by side. Empty until the first forward_cached.
template <class T>
struct KVCache {
  Array<T> keys, values;
  std::size_t length() const { return keys.dimension() == 3 ? keys.shape()[1] : 0; }
};

// What the scores of one forward were made of, for reading one query's scores term by term (the
// explorer's neuron view): score(b, h, i, j) = q_h(b, i) . k_h(b, j) * scale + bias(b, h, i, j),
// with q_h and k_h head h's columns [h d_k, (h + 1) d_k) of queries and keys.
template <class T>
struct ScoreParts {
  Array<T> queries;  // (B, Lq, h * d_k): after the projections and the qk_transform (RoPE), before the scaling
  Array<T> keys;     // (B, Lk, h * d_k), likewise
  Array<T> bias;     // (B, h, Lq, Lk): the additive bias (0 without one; with a query_bias, its term
                     // added), -inf where a key is masked
  double scale = 1.0;  // 1 / sqrt(d_k)
};

template <class T>
class MultiHeadAttention : public Module<T> {
 public:
  // Throws ShapeError "MultiHeadAttention: d_model 10 is not divisible by heads 3". kv_heads: the
  // key/value heads (0: as many as heads); ShapeError naming both unless it divides heads.
  MultiHeadAttention(std::size_t d_model, std::size_t heads, Generator& gen, double dropout = 0.0,
                     bool bias = true, std::size_t kv_heads = 0);

  // query (B, Lq, d_model), key and value (B, Lk, d_model). Returns output (B, Lq, d_model) and
  // the per-head weights (B, h, Lq, Lk) (softmax before dropout; for plots).
  AttentionResult<T> forward(const Tensor<T>& query, const Tensor<T>& key, const Tensor<T>& value,
                             const MultiHeadOptions<T>& options = {});
  // Self-attention: forward(x, x, x, options).
  AttentionResult<T> forward(const Tensor<T>& x, const MultiHeadOptions<T>& options = {});
  // Causal self-attention for new positions x (B, n, d_model) that follow the cache.length()
  // cached ones: their queries attend to every cached key and to the new keys up to their own
  // position; their keys and values are appended to the cache. The same output as forward on the
  // whole sequence with causal = true, for the new rows, at the cost of the new rows only. No
  // gradient reaches the cached positions: for inference (eval mode, under NoGrad). options.bias
  // must be (1 or B, h, n, cache.length() + n) and the qk_transform must place the new rows at
  // their positions (PositionalScheme::attention with an offset does both); masks are refused.
  AttentionResult<T> forward_cached(const Tensor<T>& x, KVCache<T>& cache, const MultiHeadOptions<T>& options = {});

  // The three input projections on their own, (..., d_model) -> (..., d_model) for q and
  // (..., kv_dim) for k and v: q_proj(x) = x W_q^T + b_q with W_q = rows [0, d) of in_proj_weight;
  // k_proj rows [d, d + kv_dim), v_proj rows [d + kv_dim, d + 2 kv_dim) (kv_dim = d without grouping).
  Tensor<T> q_proj(const Tensor<T>& x) const { return in_proj(x, 0); }
  Tensor<T> k_proj(const Tensor<T>& x) const { return in_proj(x, 1); }
  Tensor<T> v_proj(const Tensor<T>& x) const { return in_proj(x, 2); }

  // A gate per head, (h): head i's output is multiplied by gate[i] before the heads are merged
  // by out_proj. Undefined (the default): no gate. Zero an entry to switch a head off (ablation);
  // give a gate that requires a gradient to measure how much the loss depends on each head
  // (Michel et al. 2019). ShapeError unless it has h entries.
  void set_head_gate(Tensor<T> gate);
  const Tensor<T>& head_gate() const { return head_gate_; }

  // Keep the ScoreParts of every later forward() (not forward_cached), no tape involved; off by
  // default, since it copies the queries and keys. Off again drops what was kept.
  void keep_score_parts(bool on) {
    keep_parts_ = on;
    if (!on) parts_ = {};
  }
  // Those of the last forward() while kept; before one, 0-D arrays (queries.dimension() == 0).
  const ScoreParts<T>& score_parts() const { return parts_; }

  std::size_t d_model() const { return d_model_; }
  std::size_t heads() const { return heads_; }
  std::size_t head_dim() const { return d_model_ / heads_; }
  std::size_t kv_heads() const { return kv_heads_; }
  std::size_t kv_dim() const { return kv_heads_ * head_dim(); }  // the width of k, v and each cached row
  double dropout() const { return p_; }

  Tensor<T> in_proj_weight;  // (d + 2 kv_dim, d): [W_q; W_k; W_v]; (3 d, d) without grouping
  Tensor<T> in_proj_bias;    // (d + 2 kv_dim): [b_q; b_k; b_v]; undefined without biases
  Linear<T> out_proj;        // W_o (d, d), b_o (d)

 private:
  // Block `part` (0: W_q, 1: W_k, 2: W_v) of the packed projection applied to x.
  Tensor<T> in_proj(const Tensor<T>& x, long part) const;
  // Attention of q (B, Lq, d) on k, v (B, Lk, kv_dim): the shared heads repeated to one per query
  // head, the score parts kept.
  AttentionResult<T> attend(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, const AttentionOptions<T>& o);
  // The merged heads (B, L, h * d_k) times the gate, each head's columns by its own entry.
  Tensor<T> gated(const Tensor<T>& merged) const;
  // parts_ from q and k as scored and the options the attention op was given.
  void keep_parts(const Array<T>& q, const Array<T>& k, const AttentionOptions<T>& o);
  bool keep_parts_ = false;
  ScoreParts<T> parts_;
  std::size_t d_model_, heads_, kv_heads_;
  double p_;
  Tensor<T> head_gate_;
  Generator gen_;
};

}  // namespace attnlab::nn
