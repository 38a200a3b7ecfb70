// The softmax of the rows of a block, shared by masked_softmax and the fused attention kernel
// (internal to core/ops): softmax_rows for rows with a mask, softmax_rows_padded for rows without
// one, which the attention kernel keeps in a scratch block padded to whole vectors.
//
//   y_j = exp(x_j - m) / sum_{l allowed} exp(x_l - m)   for allowed j,  m = max_{l allowed} x_l
//   y_j = 0                                             for hidden j
//
// Subtracting the largest allowed score changes nothing (softmax is shift invariant) and keeps
// every exponent <= 0, so nothing overflows and the sum is at least exp(0) = 1. A hidden entry is
// set to -inf before the exponential, which maps it to exactly 0; it is never filled with a large
// negative number, which would leave it a tiny weight, or compared with -inf itself, which makes
// exp(-inf - (-inf)) = NaN on a row where everything is hidden. Such a row is all zeros instead,
// and so is a row whose every allowed score is -inf: it too has nothing to attend to.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "core/runtime/vmath.hpp"

#if defined(__AVX__)
#include <immintrin.h>
#endif

namespace attnlab::detail {

// Softmax of each row of a rows x n block, in place. Row i sees keys j < end(i) for which
// allowed(i, j) holds; every other entry becomes exactly 0, and a row that sees no key is all zero.
// The exp, the costly step, runs once over the whole block rather than once per row: rows in
// attention are short (17 to 64 keys in the lessons), and a call per row spent its time in loop
// setup and the scalar tail, while one call over the block runs in full vectors.
//   1. each row: m = its largest seen score; x - m where seen, -inf elsewhere (the exp makes
//      that exactly 0);
//   2. the block: exp;
//   3. each row: divide by its sum, which is at least exp(0) = 1 if the row saw a key and exactly
//      0 if it saw none (then the row is already all zero; a NaN sum leaves the row NaN).
template <class T, class End, class AllowedFn>
void softmax_rows(T* block, std::size_t rows, std::size_t n, End end, AllowedFn allowed) {
  const T hidden = -std::numeric_limits<T>::infinity();
  for (std::size_t i = 0; i < rows; ++i) {
    T* row = block + i * n;
    const std::size_t e = end(i);
    T mx = T(0);
    bool any = false;
    for (std::size_t j = 0; j < e; ++j)
      if (allowed(i, j) && (!any || row[j] > mx)) mx = row[j], any = true;
    any = any && mx != hidden;  // every allowed score -inf: nothing to attend to
    for (std::size_t j = 0; j < e; ++j) row[j] = any && allowed(i, j) ? row[j] - mx : hidden;
    std::fill(row + e, row + n, hidden);
  }
  vmath::exp_n(block, block, rows * n);
  for (std::size_t i = 0; i < rows; ++i) {
    T* row = block + i * n;
    const std::size_t e = end(i);
    const T sum = vmath::sum(row, e);
    if (sum == T(0)) continue;
    const T inv = T(1) / sum;
    for (std::size_t j = 0; j < e; ++j) row[j] *= inv;
  }
}

// row[e..w) = -inf, for w a multiple of 8, in whole-vector stores: a vector load that follows
// scalar stores to the same bytes waits for them, and the softmax below reads each row as whole
// vectors right after hiding its end.
template <class T>
void hide_from(T* row, std::size_t e, std::size_t w) {
  const T hidden = -std::numeric_limits<T>::infinity();
#if defined(__AVX__)
  if constexpr (std::is_same_v<T, float>) {
    const __m256 all_hidden = _mm256_set1_ps(hidden);
    std::size_t j = e / 8 * 8;
    if (j < e) {  // the vector holding entry e keeps its first e - j entries
      const __m256 lane = _mm256_setr_ps(0, 1, 2, 3, 4, 5, 6, 7);
      const __m256 past = _mm256_cmp_ps(lane, _mm256_set1_ps(float(e - j)), _CMP_GE_OQ);
      _mm256_storeu_ps(row + j, _mm256_blendv_ps(_mm256_loadu_ps(row + j), all_hidden, past));
      j += 8;
    }
    for (; j < w; j += 8) _mm256_storeu_ps(row + j, all_hidden);
    return;
  }
#endif
  std::fill(row + e, row + w, hidden);
}

// The same softmax for rows that see every key up to end(i) (no mask), in place in a scores block
// whose rows are w apart, w being n rounded up to a multiple of 8 (what lies past n is ignored),
// and written to out (rows x n, dense). Each row is hidden from end(i) on and then read as whole
// vectors: no pass has a scalar tail. The exp is vmath::exp_nonpositive, which for these
// arguments (x - m <= 0, -inf or NaN) is exp to the bit at half the work. The hidden entries
// change no maximum and become +0 under the exp, which adds nothing to the lane it falls in:
// vmath::sum adds the same terms to the same lanes in the same order as over the row's own
// entries. So out holds exactly the bits that softmax_rows leaves in a dense block. Rows of 17
// keys (lesson 16's ViT): see the README's speed section.
template <class T, class End>
void softmax_rows_padded(T* scores, std::size_t w, std::size_t rows, std::size_t n, End end,
                         T* out) {
  const T hidden = -std::numeric_limits<T>::infinity();
  for (std::size_t i = 0; i < rows; ++i) {
    T* row = scores + i * w;
    const std::size_t e = end(i);
    hide_from(row, e, w);
    if (e == 0) continue;
    const T mx = vmath::max_whole_vectors(row, w);
    if (mx == hidden) {  // every score -inf: nothing to attend to (and -inf - -inf would be NaN)
      std::fill(row, row + w, hidden);
      continue;
    }
    for (std::size_t j = 0; j < w; ++j) row[j] -= mx;
  }
  vmath::exp_nonpositive_n(scores, scores, rows * w);
  for (std::size_t i = 0; i < rows; ++i) {
    const T* row = scores + i * w;
    T* o = out + i * n;
    const std::size_t e = end(i);
    const T sum = vmath::sum_whole_vectors(row, w);
    if (sum == T(0)) {  // no key seen: the row is all zero
      std::fill(o, o + n, T(0));
      continue;
    }
    const T inv = T(1) / sum;
    for (std::size_t j = 0; j < e; ++j) o[j] = row[j] * inv;
    std::fill(o + e, o + n, T(0));
  }
}

}  // namespace attnlab::detail
