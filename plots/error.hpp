// Errors of the figures library: bad data, bad labels, bad sizes, unwritable files.
// Messages name the function and the values at fault, e.g.
//   heatmap: 4 column labels for a matrix of shape (3,5)
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab::plots {

struct PlotError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

namespace detail {
inline void stream_parts(std::ostringstream&) {}
template <class A, class... R>
void stream_parts(std::ostringstream& os, const A& a, const R&... r) {
  os << a;
  stream_parts(os, r...);
}
}  // namespace detail

template <class... Parts>
[[noreturn]] void fail(const std::string& where, const Parts&... parts) {
  std::ostringstream os;
  os << where << ": ";
  detail::stream_parts(os, parts...);
  throw PlotError(os.str());
}

template <class... Parts>
void require(bool ok, const std::string& where, const Parts&... parts) {
  if (!ok) fail(where, parts...);
}

// "(2,3,4)": the plots library does not link core, so it carries its own shape printer.
template <class S>
std::string shape_text(const S& shape) {
  std::ostringstream os;
  os << '(';
  bool first = true;
  for (auto d : shape) {
    if (!first) os << ',';
    os << d;
    first = false;
  }
  os << ')';
  return os.str();
}

}  // namespace attnlab::plots
