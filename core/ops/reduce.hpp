// Reductions over all axes or the given axes (negative axes count from the end), with or
// without kept dims.
#pragma once

#include "core/tensor.hpp"

namespace attnlab {

using Axes = std::vector<long>;

template <class T> Tensor<T> sum(const Tensor<T>& a);  // shape ()
template <class T> Tensor<T> sum(const Tensor<T>& a, const Axes& axes, bool keepdims = false);
template <class T> Tensor<T> mean(const Tensor<T>& a);
template <class T> Tensor<T> mean(const Tensor<T>& a, const Axes& axes, bool keepdims = false);
// max: the gradient goes to the arg-max (the first one, on ties).
template <class T> Tensor<T> max(const Tensor<T>& a);
template <class T> Tensor<T> max(const Tensor<T>& a, const Axes& axes, bool keepdims = false);
// var: population variance (divide by n) unless unbiased (divide by n - 1).
template <class T> Tensor<T> var(const Tensor<T>& a, bool unbiased = false);
template <class T> Tensor<T> var(const Tensor<T>& a, const Axes& axes, bool keepdims = false,
                                 bool unbiased = false);
// var(x, {1}) must mean axis 1: without this overload the braced list would convert to the
// bool of var(x, unbiased) above and silently reduce over every axis.
template <class T>
Tensor<T> var(const Tensor<T>& a, std::initializer_list<long> axes, bool keepdims = false,
              bool unbiased = false) {
  return var(a, Axes(axes), keepdims, unbiased);
}

}  // namespace attnlab
