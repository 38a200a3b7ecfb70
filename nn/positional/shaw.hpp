// Shaw et al. 2018, "Self-Attention with Relative Position Representations": a learned vector per
// clipped distance, added to the key inside the score,
//   e_ij = q_i . (k_j + w_{clip(j - i, K)}) / sqrt(d_k),
// where T5's bias adds one learned scalar per (bucket, head). The extra term q_i . w_r depends on the
// query, so a head can ask "what sits r places away" differently for different tokens.
#pragma once

#include <cstddef>

#include "core/tensor.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// index[i, j] = clip(j - (q_offset + i), -K, K) + K, in 0 .. 2K: the row of the (2K + 1, d_k) table
// that query i (at position q_offset + i) uses for key j. Every distance beyond K shares the edge
// row, so any length has a vector, and one that training reached if it saw distances >= K.
IndexArray shaw_relative_index(std::size_t lq, std::size_t lk, std::size_t q_offset, std::size_t max_distance);

// The op: q (B, Lq, h * d_k) with the heads side by side (as out of the projection), table
// (R, d_k), index (Lq, Lk) with entries in [0, R) -> the score bias (B, h, Lq, Lk),
//   out[b, h, i, j] = scale * q[b, i, h, :] . table[index[i, j], :].
// Backward, with p[b, h, i, r] = sum over j with index[i, j] = r of scale * dout[b, h, i, j]:
//   dq[b, i, h, :] = sum_r p[b, h, i, r] table[r, :]
//   dtable[r, :]   = sum_{b, h, i} p[b, h, i, r] q[b, i, h, :]
template <class T>
Tensor<T> relative_key_scores(const Tensor<T>& q, const Tensor<T>& table, const IndexArray& index,
                              std::size_t heads, double scale);

// The learned table "key_table" (2K + 1, d_k), shared by the heads (as in the paper) and, in a
// PositionalScheme, by the layers (as T5's bias is). forward turns the queries into the additive
// bias that MultiHeadOptions::query_bias asks for.
template <class T>
class ShawRelativePosition : public Module<T> {
 public:
  // Throws ShapeError naming the sizes unless head_dim > 0 and max_distance > 0.
  ShawRelativePosition(std::size_t head_dim, std::size_t max_distance, Generator& gen);
  // q (B, Lq, h * d_k), queries at positions q_offset .. q_offset + Lq - 1, keys at 0 .. lk - 1
  // -> (B, h, Lq, lk), already divided by sqrt(d_k) like the content score it is added to.
  Tensor<T> forward(const Tensor<T>& q, std::size_t lk, std::size_t q_offset = 0) const;
  std::size_t max_distance() const { return max_distance_; }
  std::size_t head_dim() const { return head_dim_; }
  const Tensor<T>& key_table() const { return table_; }

 private:
  std::size_t head_dim_, max_distance_;
  Tensor<T> table_;  // a handle to the registered parameter
};

}  // namespace attnlab::nn
