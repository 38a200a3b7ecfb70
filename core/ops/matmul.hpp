// Matrix products as GEMM calls on contiguous blocks (core/runtime/blas.hpp); transposes are BLAS flags.
#pragma once

#include "core/tensor.hpp"

namespace attnlab {

// matmul: (..., m, k) x (..., k, n) -> (..., m, n), batch dims broadcast like numpy.
// transpose_a / transpose_b use the last two axes of a / b transposed, without copying.
// 1-D operands are promoted as numpy does (a vector on the left is a row, on the right a column).
template <class T>
Tensor<T> matmul(const Tensor<T>& a, const Tensor<T>& b, bool transpose_a = false,
                 bool transpose_b = false);

// linear: y = x W^T + b for x (..., in), W (out, in) as PyTorch stores it, b (out) or undefined.
// One GEMM over all leading dims folded into rows.
template <class T>
Tensor<T> linear(const Tensor<T>& x, const Tensor<T>& weight, const Tensor<T>& bias = Tensor<T>());

}  // namespace attnlab
