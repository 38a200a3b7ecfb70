#include "core/array.hpp"

#include "core/error.hpp"

namespace attnlab {

std::string shape_str(const Shape& s) {
  std::string out = "(";
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += ",";
    out += std::to_string(s[i]);
  }
  return out + ")";
}

bool size_within_limit(const Shape& s, std::size_t& size) {
  std::size_t nonzero = 1;
  bool empty = false;
  for (auto d : s) {
    if (d == 0) {
      empty = true;
      continue;
    }
    // nonzero * d > max_elements, asked without forming the product (it could wrap)
    if (d > max_elements || nonzero > max_elements / d) return false;
    nonzero *= d;
  }
  size = empty ? 0 : nonzero;
  return true;
}

std::size_t checked_size(const char* who, const Shape& s) {
  std::size_t size = 0;
  if (!size_within_limit(s, size)) fail(who, "shape ", shape_str(s), " has more than 2^48 entries");
  return size;
}

std::size_t shape_size(const Shape& s) {
  std::size_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::size_t norm_axis(const char* op, long axis, const Shape& shape) {
  const long nd = static_cast<long>(shape.size());
  const long a = axis < 0 ? axis + nd : axis;
  if (a < 0 || a >= nd) fail(op, "axis ", axis, " out of range for shape ", shape_str(shape));
  return static_cast<std::size_t>(a);
}

AxisSplit split_at(const Shape& shape, std::size_t axis) {
  AxisSplit s;
  for (std::size_t i = 0; i < axis; ++i) s.outer *= shape[i];
  s.n = shape[axis];
  for (std::size_t i = axis + 1; i < shape.size(); ++i) s.inner *= shape[i];
  return s;
}

}  // namespace attnlab
