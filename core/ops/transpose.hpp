// A transposed, scaled copy of a block: the right operands scale K^T and V^T of the fused and the
// tiled attention ops, which generated GEMM kernels cannot read transposed (internal to core/ops).
#pragma once

#include <algorithm>
#include <cstddef>

namespace attnlab::detail {

// out (cols x rows, dense) = factor * the transpose of a rows x cols block whose rows are ld apart.
// In panels of 16 input rows, each output row written in runs of 16: the panel's input lines stay
// in L1 however ld falls on its sets, and no store lands far from the last. Measured on the AVX2
// machine at the lessons' shapes (17 to 256 rows, 16 to 64 columns, ld 3 x heads x d): 0.23 to
// 0.31 ns an entry, against 0.36 to 1.31 row by row (the row-by-row loop scattered its stores).
template <class T>
void transpose_scaled(const T* in, std::size_t rows, std::size_t cols, std::size_t ld, T factor,
                      T* out) {
  for (std::size_t first = 0; first < rows; first += 16) {
    const std::size_t last = std::min(rows, first + 16);
    for (std::size_t c = 0; c < cols; ++c)
      for (std::size_t i = first; i < last; ++i) out[c * rows + i] = factor * in[i * ld + c];
  }
}

}  // namespace attnlab::detail
