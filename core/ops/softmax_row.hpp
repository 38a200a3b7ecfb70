// The softmax of the rows of a contiguous block, shared by masked_softmax and the fused attention
// kernel (internal to core/ops).
//
//   y_j = exp(x_j - m) / sum_{l allowed} exp(x_l - m)   for allowed j,  m = max_{l allowed} x_l
//   y_j = 0                                             for hidden j
//
// Subtracting the largest allowed score changes nothing (softmax is shift invariant) and keeps
// every exponent <= 0, so nothing overflows and the sum is at least exp(0) = 1. A hidden entry is
// set to -inf before the exponential, which maps it to exactly 0; it is never filled with a large
// negative number, which would leave it a tiny weight, or compared with -inf itself, which makes
// exp(-inf - (-inf)) = NaN on a row where everything is hidden. Such a row is all zeros instead.
#pragma once

#include <algorithm>
#include <cstddef>
#include <limits>
#include <type_traits>

#include "core/runtime/vmath.hpp"

namespace attnlab::detail {

// Every key may be seen (up to each row's end): the row maximum is found in eight lanes.
struct EveryKey {
  bool operator()(std::size_t, std::size_t) const { return true; }
};

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
    if constexpr (std::is_same_v<AllowedFn, EveryKey>) {
      if (e > 0) {
        const T mx = vmath::max(row, e);
        for (std::size_t j = 0; j < e; ++j) row[j] -= mx;
      }
    } else {
      T mx = T(0);
      bool any = false;
      for (std::size_t j = 0; j < e; ++j)
        if (allowed(i, j) && (!any || row[j] > mx)) mx = row[j], any = true;
      for (std::size_t j = 0; j < e; ++j) row[j] = any && allowed(i, j) ? row[j] - mx : hidden;
    }
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

}  // namespace attnlab::detail
