// numpy broadcasting, both ways: the forward shape of two operands, and the backward's
// reduction of a gradient back to an operand's shape (sum over the axes that were stretched).
#pragma once

#include "core/array.hpp"

namespace attnlab {

// The broadcast shape of a and b, or "<op>: shapes (2,3) and (4,3) do not broadcast".
Shape broadcast_shapes(const char* op, const Shape& a, const Shape& b);

// Whether `from` broadcasts to exactly `to`.
bool broadcasts_to(const Shape& from, const Shape& to);

// Strides (in elements) of a row-major array of shape `from` read as if broadcast to `to`:
// 0 along the axes it is stretched over, including the leading axes it lacks.
std::vector<std::ptrdiff_t> broadcast_strides(const Shape& from, const Shape& to);

// Sum g (of a broadcast shape) over the leading axes `target` lacks and over the axes where
// `target` has 1 and g does not: the gradient of broadcast_to(x, shape(g)) with respect to x.
template <class T>
Array<T> reduce_to_shape(Array<T>&& g, const Shape& target);

}  // namespace attnlab
