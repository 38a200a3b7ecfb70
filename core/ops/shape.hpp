// Shape ops: they move values around; their backward moves gradients back.
#pragma once

#include "core/tensor.hpp"

namespace attnlab {

// reshape: one entry may be -1 (inferred).
template <class T> Tensor<T> reshape(const Tensor<T>& a, const std::vector<long>& shape);
template <class T> Tensor<T> unsqueeze(const Tensor<T>& a, long axis);
template <class T> Tensor<T> squeeze(const Tensor<T>& a, long axis);
// transpose: swap two axes (default the last two).
template <class T> Tensor<T> transpose(const Tensor<T>& a, long axis0 = -2, long axis1 = -1);
template <class T> Tensor<T> permute(const Tensor<T>& a, const std::vector<std::size_t>& perm);
// slice: a[..., start:stop:step, ...] along one axis, python rules for negative start/stop.
template <class T> Tensor<T> slice(const Tensor<T>& a, long axis, long start, long stop, long step = 1);
template <class T> Tensor<T> concat(const std::vector<Tensor<T>>& xs, long axis);
template <class T> Tensor<T> stack(const std::vector<Tensor<T>>& xs, long axis);
// split: pieces of the given sizes along axis (they must add up to its length).
template <class T> std::vector<Tensor<T>> split(const Tensor<T>& a, const std::vector<std::size_t>& sizes, long axis);
// index_select: out = a[..., idx, ...] along axis; out.shape = a[:axis] + idx.shape + a[axis+1:].
// The embedding lookup. Repeated indices accumulate their gradients.
template <class T> Tensor<T> index_select(const Tensor<T>& a, long axis, const IndexArray& idx);
// gather (as torch.gather): idx has a's rank; out[i..., j, k...] = a[i..., idx[i..., j, k...], k...].
template <class T> Tensor<T> gather(const Tensor<T>& a, long axis, const IndexArray& idx);
template <class T> Tensor<T> broadcast_to(const Tensor<T>& a, const Shape& shape);

}  // namespace attnlab
