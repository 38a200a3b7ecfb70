// Linformer (Wang et al. 2020): attention over the keys and values projected along the sequence.
// Two learned matrices E and F (rank x max_length) mix the L positions into `rank` rows:
//
//   out = softmax(Q (E K)^T scale) (F V),   Q (..., L, d), E K (..., rank, d), F V (..., rank, dv)
//
// The weights are L x rank instead of L x L: time O(L rank d), memory O(L rank). It is exact when
// the attention matrix has rank <= `rank` in a basis that E can express, for every input, which
// a fixed E cannot promise for content-based lookups (lesson 18 measures the price).
//
// A module, not an op: E and F are parameters, and the computation is two matmuls and the fused
// scaled_dot_product_attention, whose hand-derived backwards already exist; a fused Linformer op
// would only repeat them. No masks: a projection along the sequence mixes every position, so
// neither padding nor causality survives it.
//
// E and F start as segment means: row r averages positions r m .. (r + 1) m - 1, m = max_length /
// rank, so the untrained module attends over `rank` pooled summaries of the sequence; training
// learns other mixes. A sequence shorter than max_length uses the first L columns.
#pragma once

#include <optional>

#include "core/ops.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

template <class T>
class Linformer : public Module<T> {
 public:
  // ShapeError unless 0 < rank <= max_length.
  Linformer(std::size_t max_length, std::size_t rank);

  // q (..., L, d), k (..., L, d), v (..., L, dv) with L <= max_length -> (..., L, dv). scale:
  // default 1 / sqrt(d).
  Tensor<T> forward(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v,
                    std::optional<double> scale = std::nullopt) const;

  std::size_t max_length() const { return max_length_; }
  std::size_t rank() const { return rank_; }

  Tensor<T> E;  // (rank, max_length): keys
  Tensor<T> F;  // (rank, max_length): values

 private:
  std::size_t max_length_, rank_;
};

}  // namespace attnlab::nn
