// Rotary position embedding (RoPE, Su et al. 2021): queries and keys rotated by their position.
#pragma once

#include <cstddef>

#include "core/tensor.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// Rotate each pair (x[2i], x[2i+1]) of the last axis of x (..., L, d) by the angle p * theta_i,
// theta_i = base^(-2i/d), p = offset + l the position of row l. Since rotations compose,
// <R_p q, R_s k> = <q, R_(s-p) k>: the score depends only on the offset s - p.
// One op: y = R x, so dx = R^T dy (rotation by -p theta_i). d must be even.
// With head_dim, the last axis holds heads of head_dim side by side, (..., L, h * head_dim), as
// the attention's projections make them, and each head is rotated as above with d = head_dim.
template <class T>
Tensor<T> rotary(const Tensor<T>& x, std::size_t offset = 0, double base = 10000.0,
                 std::size_t head_dim = 0);

// The same as a (parameter-free) module, for the attention's q/k hook: its input is one head
// (..., L, head_dim) or several side by side (..., L, h * head_dim).
template <class T>
class RotaryEmbedding : public Module<T> {
 public:
  explicit RotaryEmbedding(std::size_t head_dim, double base = 10000.0);
  Tensor<T> forward(const Tensor<T>& x, std::size_t offset = 0) const;
  std::size_t head_dim() const { return head_dim_; }

 private:
  std::size_t head_dim_;
  double base_;
};

}  // namespace attnlab::nn
