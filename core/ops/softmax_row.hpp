// The softmax of one contiguous row, shared by masked_softmax and the fused attention kernel
// (internal to core/ops).
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

#include "core/runtime/vmath.hpp"

namespace attnlab::detail {

// Every entry allowed: the vectorized plain softmax.
template <class T>
void softmax_row(T* row, std::size_t n) {
  if (n == 0) return;
  const T mx = vmath::max(row, n);
  for (std::size_t j = 0; j < n; ++j) row[j] -= mx;
  vmath::exp_n(row, row, n);
  const T inv = T(1) / vmath::sum(row, n);
  for (std::size_t j = 0; j < n; ++j) row[j] *= inv;
}

// allowed(j) says whether entry j may be used. Returns false (and leaves a zero row) when none is.
template <class T, class AllowedFn>
bool masked_softmax_row(T* row, std::size_t n, AllowedFn allowed) {
  T mx = T(0);
  bool any = false;
  for (std::size_t j = 0; j < n; ++j)
    if (allowed(j) && (!any || row[j] > mx)) mx = row[j], any = true;
  if (!any) {
    std::fill(row, row + n, T(0));
    return false;
  }
  for (std::size_t j = 0; j < n; ++j) row[j] = allowed(j) ? row[j] - mx : -std::numeric_limits<T>::infinity();
  vmath::exp_n(row, row, n);
  const T inv = T(1) / vmath::sum(row, n);
  for (std::size_t j = 0; j < n; ++j) row[j] *= inv;
  return true;
}

}  // namespace attnlab::detail
