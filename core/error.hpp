// Errors: every bad input becomes an exception derived from std::invalid_argument whose
// message names the op (or module) and the values at fault, e.g.
//   matmul: inner dimensions differ: (2,3) x (4,5)
// Checks stay on in Release builds: they cost a comparison, and a silent NaN costs an afternoon.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab {

// Bad shapes, axes, indices or values given to an op or a module.
struct ShapeError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Misuse of the tape itself: backward twice through a freed graph, and similar.
struct GraphError : std::logic_error {
  using std::logic_error::logic_error;
};

namespace detail {
inline void stream_all(std::ostringstream&) {}
template <class A, class... R>
void stream_all(std::ostringstream& os, const A& a, const R&... r) {
  os << a;
  stream_all(os, r...);
}
}  // namespace detail

// fail("matmul", "inner dimensions differ: ", shape_str(a), " x ", shape_str(b))
template <class... Parts>
[[noreturn]] void fail(const std::string& where, const Parts&... parts) {
  std::ostringstream os;
  os << where << ": ";
  detail::stream_all(os, parts...);
  throw ShapeError(os.str());
}

template <class... Parts>
void check(bool ok, const std::string& where, const Parts&... parts) {
  if (!ok) fail(where, parts...);
}

}  // namespace attnlab
