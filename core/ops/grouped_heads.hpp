// Grouped-query attention's one new op (Ainslie et al. 2023; multi-query attention, Shazeer 2019,
// is the case of one group): h query heads share g <= h key and value heads, each key/value head
// serving a group of r = h / g consecutive query heads. The attention itself is unchanged: the
// shared heads are repeated to one per query head and multi_head_attention runs as before.
#pragma once

#include <cstddef>

#include "core/tensor.hpp"

namespace attnlab {

// x (..., g * d): g heads of width d side by side. Returns (..., g * r * d) where head j is head
// j / r of x, so query heads [i r, (i + 1) r) read key/value head i. Backward: a shared head's
// gradient is the sum over the query heads of its group,
//   dx_i = sum_{s < r} dy_{i r + s}.
// r = 1 returns x itself. ShapeError naming repeat_heads for a 0-D x, g or r of 0, or a last axis
// that is not g heads of equal width.
template <class T>
Tensor<T> repeat_heads(const Tensor<T>& x, std::size_t heads, std::size_t repeats);

}  // namespace attnlab
