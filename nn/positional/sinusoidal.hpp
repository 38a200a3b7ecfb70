// Sinusoidal positional encoding (Vaswani et al. 2017): a fixed table added to the embeddings.
#pragma once

#include <cstddef>

#include "core/tensor.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// The angular frequency of dimension pair i: w_i = base^(-2i/d), in radians per position; its
// wavelength is 2 pi / w_i, from 2 pi (i = 0) to nearly 2 pi base (the last pair).
double sinusoidal_frequency(std::size_t pair, std::size_t d, double base = 10000.0);

// The (length, d) table PE(p, 2i) = sin(p w_i), PE(p, 2i+1) = cos(p w_i), w_i = 10000^(-2i/d),
// for positions offset .. offset + length - 1. Computed in double, then cast.
template <class T>
Array<T> sinusoidal_table(std::size_t length, std::size_t d, std::size_t offset = 0,
                          double base = 10000.0);

// The (d, d) block-diagonal rotation M_k with PE(p + k) = M_k PE(p) for every p (d even):
// block i is [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]], independent of p.
Array<double> sinusoidal_offset_rotation(std::size_t k, std::size_t d, double base = 10000.0);

// How exactly that holds, measured: max |PE(p + k) - M_k PE(p)| over the positions p < `positions`
// and every dimension, in double precision (rows of positions times M_k^T by the matmul op). Only
// rounding, which grows with the angles (p + k) w_i. ShapeError as sinusoidal_offset_rotation.
double sinusoidal_rotation_error(std::size_t k, std::size_t d, std::size_t positions, double base = 10000.0);

// y = x + PE[offset : offset + L] for x (..., L, d). No parameters; any length.
template <class T>
class SinusoidalPositionalEncoding : public Module<T> {
 public:
  explicit SinusoidalPositionalEncoding(std::size_t d, double base = 10000.0);
  Tensor<T> forward(const Tensor<T>& x, std::size_t offset = 0) const;
  std::size_t dim() const { return d_; }

 private:
  std::size_t d_;
  double base_;
};

}  // namespace attnlab::nn
