// Learned absolute positions: one trained vector per position, added to the embeddings.
#pragma once

#include <cstddef>

#include "core/tensor.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// y = x + W[offset : offset + L] for x (..., L, d), W (max_length, d) a parameter "weight".
// A sequence reaching past max_length is a ShapeError: the table has no row for it.
template <class T>
class LearnedPositionalEmbedding : public Module<T> {
 public:
  LearnedPositionalEmbedding(std::size_t max_length, std::size_t d, Generator& gen,
                             double std = 0.02);
  Tensor<T> forward(const Tensor<T>& x, std::size_t offset = 0) const;
  std::size_t max_length() const { return max_length_; }
  const Tensor<T>& weight() const { return weight_; }

 private:
  std::size_t max_length_, d_;
  Tensor<T> weight_;  // a handle to the registered parameter
};

}  // namespace attnlab::nn
