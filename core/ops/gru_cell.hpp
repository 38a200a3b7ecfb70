// The GRU gate arithmetic as one op with a hand-derived backward (PyTorch's gate order r, z, n).
// A GRU step made of separate ops records about ten nodes (splits, adds, sigmoid, tanh, products),
// each with its own allocations; an unrolled sequence pays that at every step. This op records one.
#pragma once

#include "core/tensor.hpp"

namespace attnlab {

// h' = gru_cell(gi, gh, h) with gi = W_ih x + b_ih and gh = W_hh h + b_hh, both (..., 3H) ordered
// [r, z, n], and h (..., H) with the same leading dims:
//   r = sigmoid(gi_r + gh_r);  z = sigmoid(gi_z + gh_z);  n = tanh(gi_n + r * gh_n)
//   h' = (1 - z) * n + z * h
template <class T>
Tensor<T> gru_cell(const Tensor<T>& gi, const Tensor<T>& gh, const Tensor<T>& h);

}  // namespace attnlab
