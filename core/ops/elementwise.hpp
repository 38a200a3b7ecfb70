// Elementwise ops with numpy broadcasting in both directions; every backward reduces its
// gradient back to each input's shape (core/broadcast.hpp).
#pragma once

#include "core/tensor.hpp"

namespace attnlab {

enum class GeluForm { Erf, Tanh };

template <class T> Tensor<T> add(const Tensor<T>& a, const Tensor<T>& b);
template <class T> Tensor<T> sub(const Tensor<T>& a, const Tensor<T>& b);
template <class T> Tensor<T> mul(const Tensor<T>& a, const Tensor<T>& b);
template <class T> Tensor<T> div(const Tensor<T>& a, const Tensor<T>& b);

// Scalar forms: a op s and s op a.
template <class T> Tensor<T> add(const Tensor<T>& a, T s);
template <class T> Tensor<T> sub(const Tensor<T>& a, T s);
template <class T> Tensor<T> sub(T s, const Tensor<T>& a);
template <class T> Tensor<T> mul(const Tensor<T>& a, T s);
template <class T> Tensor<T> div(const Tensor<T>& a, T s);
template <class T> Tensor<T> div(T s, const Tensor<T>& a);

template <class T> Tensor<T> neg(const Tensor<T>& a);
template <class T> Tensor<T> exp(const Tensor<T>& a);
template <class T> Tensor<T> log(const Tensor<T>& a);
template <class T> Tensor<T> sqrt(const Tensor<T>& a);
template <class T> Tensor<T> pow(const Tensor<T>& a, T exponent);
template <class T> Tensor<T> pow(const Tensor<T>& a, const Tensor<T>& exponent);  // a > 0
template <class T> Tensor<T> tanh(const Tensor<T>& a);
template <class T> Tensor<T> sigmoid(const Tensor<T>& a);
template <class T> Tensor<T> relu(const Tensor<T>& a);
// max(a, slope * a) for 0 <= slope < 1: graph attention's score nonlinearity (lesson 19).
template <class T> Tensor<T> leaky_relu(const Tensor<T>& a, T slope = T(0.2));
template <class T> Tensor<T> gelu(const Tensor<T>& a, GeluForm form = GeluForm::Erf);
// The same for an input the caller gives up: a temporary, or h = gelu(std::move(h)), which
// leaves the moved-from handle empty. When nothing else holds it, the Erf form keeps its slope in
// the input's array instead of a new one: one (rows, d_ff) array fewer per feed-forward until
// the backward has run. Same values and gradients as the form above.
template <class T> Tensor<T> gelu(Tensor<T>&& a, GeluForm form = GeluForm::Erf);

// where(cond, a, b): a where cond is true, b elsewhere; cond, a and b broadcast together.
// Call it as attnlab::where: cond is an xtensor array, so an unqualified call also finds
// xt::where by argument-dependent lookup, and xtensor's overload wins for non-const tensors.
template <class T> Tensor<T> where(const Mask& cond, const Tensor<T>& a, const Tensor<T>& b);
// masked_fill(a, mask, v): v where mask is true, a elsewhere; mask broadcasts to a's shape.
// The filled positions get exactly zero gradient.
template <class T> Tensor<T> masked_fill(const Tensor<T>& a, const Mask& mask, T value);

// Operators, for formulas that read like the math.
template <class T> Tensor<T> operator+(const Tensor<T>& a, const Tensor<T>& b) { return add(a, b); }
template <class T> Tensor<T> operator-(const Tensor<T>& a, const Tensor<T>& b) { return sub(a, b); }
template <class T> Tensor<T> operator*(const Tensor<T>& a, const Tensor<T>& b) { return mul(a, b); }
template <class T> Tensor<T> operator/(const Tensor<T>& a, const Tensor<T>& b) { return div(a, b); }
template <class T> Tensor<T> operator-(const Tensor<T>& a) { return neg(a); }
template <class T> Tensor<T> operator+(const Tensor<T>& a, T s) { return add(a, s); }
template <class T> Tensor<T> operator+(T s, const Tensor<T>& a) { return add(a, s); }
template <class T> Tensor<T> operator-(const Tensor<T>& a, T s) { return sub(a, s); }
template <class T> Tensor<T> operator-(T s, const Tensor<T>& a) { return sub(s, a); }
template <class T> Tensor<T> operator*(const Tensor<T>& a, T s) { return mul(a, s); }
template <class T> Tensor<T> operator*(T s, const Tensor<T>& a) { return mul(a, s); }
template <class T> Tensor<T> operator/(const Tensor<T>& a, T s) { return div(a, s); }
template <class T> Tensor<T> operator/(T s, const Tensor<T>& a) { return div(s, a); }

}  // namespace attnlab
