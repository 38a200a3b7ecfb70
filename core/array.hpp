// The plain arrays under every tensor: row-major xt::xarray, plus shape helpers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

namespace attnlab {

template <class T>
using Array = xt::xarray<T, xt::layout_type::row_major>;
using Index = std::int64_t;
using IndexArray = xt::xarray<Index, xt::layout_type::row_major>;  // class ids, token ids, gather indices
using Mask = xt::xarray<bool, xt::layout_type::row_major>;         // true = keep / may attend
using Shape = std::vector<std::size_t>;

// "(2,3,4)"; "()" for a scalar.
std::string shape_str(const Shape& s);
template <class S>
std::string shape_str(const S& s) {
  return shape_str(Shape(s.begin(), s.end()));
}

std::size_t shape_size(const Shape& s);

// The largest number of entries a shape may describe: 2^48 (a petabyte of floats), far past any
// memory, yet far enough below 2^64 that no product of sizes or strides wraps around.
inline constexpr std::size_t max_elements = std::size_t(1) << 48;

// The shape's size, after checking that the product of its nonzero sizes (which is what the
// strides multiply) stays within max_elements; else "<who>: shape S has more than 2^48 entries".
// Every place that makes an array from a caller's shape checks it here first.
std::size_t checked_size(const char* who, const Shape& s);
// The same rule without the exception, for readers that report errors their own way: false when
// the shape is past the limit, else true with its size in `size`.
bool size_within_limit(const Shape& s, std::size_t& size);

template <class A>
Shape shape_of(const A& a) {
  return Shape(a.shape().begin(), a.shape().end());
}

// Normalize a possibly negative axis against ndim, or throw "<op>: axis A out of range for shape S".
std::size_t norm_axis(const char* op, long axis, const Shape& shape);

// A row-major array viewed as (outer, n, inner) around one axis: the loop shape of every
// per-axis kernel (softmax, reductions, concat ...).
struct AxisSplit {
  std::size_t outer = 1, n = 1, inner = 1;
};
AxisSplit split_at(const Shape& shape, std::size_t axis);

}  // namespace attnlab
