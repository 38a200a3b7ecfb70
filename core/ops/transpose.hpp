// A transposed, scaled copy of a block: the right operands scale K^T and V^T of the fused and the
// tiled attention ops, which generated GEMM kernels cannot read transposed (internal to core/ops).
#pragma once

#include <algorithm>
#include <cstddef>
#include <type_traits>

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace attnlab::detail {

#if defined(__AVX__)
// out (8 x 8, rows ldo apart) = factor * the transpose of an 8 x 8 float tile (rows ld apart), in
// registers: eight row loads, three rounds of shuffles, eight column stores.
//   unpack   rows (0,1), (2,3), ...   -> [a0 b0 a1 b1 | a4 b4 a5 b5], [a2 b2 a3 b3 | a6 b6 a7 b7]
//   shuffle  pairs of those          -> [a0 b0 c0 d0 | a4 b4 c4 d4], ... (columns j and j + 4 of
//                                       rows 0-3, and of rows 4-7)
//   permute  128-bit halves          -> column j of all eight rows
// Each entry is factor * x, one rounded product as in the loop below: the same bits.
inline void transpose8x8_scaled(const float* in, std::size_t ld, float factor, float* out,
                                std::size_t ldo) {
  const __m256 f = _mm256_set1_ps(factor);
  __m256 r[8], t[8], s[8];
  for (int k = 0; k < 8; ++k) r[k] = _mm256_mul_ps(f, _mm256_loadu_ps(in + k * ld));
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    s[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    s[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    s[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    s[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int j = 0; j < 4; ++j) {
    _mm256_storeu_ps(out + j * ldo, _mm256_permute2f128_ps(s[j], s[j + 4], 0x20));
    _mm256_storeu_ps(out + (j + 4) * ldo, _mm256_permute2f128_ps(s[j], s[j + 4], 0x31));
  }
}
#endif

// out (cols x rows, its rows ldo apart) = factor * the transpose of a rows x cols block whose rows
// are ld apart; out's entries past `rows` in each row are left as they are. For float with AVX,
// 8 x 8 tiles are transposed in registers and only the edges (rows or columns past a multiple of
// 8) go through loops of their own: a 17 x 16 block of the ViT took 65 ns, and takes 36. Without
// tiles the loop works in panels of 16 input rows, each output row written in runs of 16: the
// panel's input lines stay in L1 however ld falls on its sets, and no store lands far from the last.
template <class T>
void transpose_scaled(const T* in, std::size_t rows, std::size_t cols, std::size_t ld, T factor,
                      T* out, std::size_t ldo) {
#if defined(__AVX__)
  if constexpr (std::is_same_v<T, float>) {
    const std::size_t tiled_rows = rows / 8 * 8, tiled_cols = cols / 8 * 8;
    if (tiled_rows > 0 && tiled_cols > 0) {
      for (std::size_t i = 0; i < tiled_rows; i += 8)
        for (std::size_t c = 0; c < tiled_cols; c += 8)
          transpose8x8_scaled(in + i * ld + c, ld, factor, out + c * ldo + i, ldo);
      // The edges: the rows past the last tile (each read in one run), then the columns past it.
      for (std::size_t i = tiled_rows; i < rows; ++i)
        for (std::size_t c = 0; c < cols; ++c) out[c * ldo + i] = factor * in[i * ld + c];
      for (std::size_t c = tiled_cols; c < cols; ++c)
        for (std::size_t i = 0; i < tiled_rows; ++i) out[c * ldo + i] = factor * in[i * ld + c];
      return;
    }
  }
#endif
  for (std::size_t first = 0; first < rows; first += 16) {
    const std::size_t last = std::min(rows, first + 16);
    for (std::size_t c = 0; c < cols; ++c)
      for (std::size_t i = first; i < last; ++i) out[c * ldo + i] = factor * in[i * ld + c];
  }
}

}  // namespace attnlab::detail
