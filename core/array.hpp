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
