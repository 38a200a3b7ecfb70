// Small helpers shared by the test suites.
#pragma once

#include <doctest/doctest.h>

#include <dirent.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>
#include <cmath>
#include <initializer_list>
#include <string>

#include "core/array.hpp"
#include "core/error.hpp"
#include "core/random.hpp"
#include "core/tensor.hpp"

namespace attnlab::testing {

// Whether this build runs under AddressSanitizer, which owns operator new: the byte counts of
// core/runtime/allocator.hpp are then not kept. A test that measures memory is skipped there,
// visibly (doctest counts it as skipped), with `* doctest::skip(kAddressSanitizer)`.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kAddressSanitizer = true;
#else
inline constexpr bool kAddressSanitizer = false;
#endif
#else
inline constexpr bool kAddressSanitizer = false;
#endif

// Whether this build has the course programs (metric_spread, course_book): the sanitizer build
// (ATTNLAB_LESSONS=OFF) has not, and a test that runs them is skipped there, visibly.
#ifdef ATTNLAB_HAVE_COURSE
inline constexpr bool kHaveCourse = ATTNLAB_HAVE_COURSE;
#else
inline constexpr bool kHaveCourse = true;  // course/'s own tests
#endif

// The message of the exception E that f throws, or "(no exception)" if it throws none.
template <class E = ShapeError, class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no exception)";
}

// The message of whatever std::exception f throws, or "(no exception)".
template <class F>
std::string any_error(F&& f) {
  return error_of<std::exception>(std::forward<F>(f));
}

inline bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }
inline bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// A fresh folder under /tmp, removed with its contents at scope exit.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/attnlab_test_XXXXXX";
    REQUIRE(::mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() { std::system(("rm -rf '" + path + "'").c_str()); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

// The names in a folder, without "." and "..".
inline std::vector<std::string> list_dir(const std::string& dir) {
  std::vector<std::string> names;
  if (DIR* d = ::opendir(dir.c_str())) {
    while (dirent* e = ::readdir(d))
      if (std::string(e->d_name) != "." && std::string(e->d_name) != "..") names.push_back(e->d_name);
    ::closedir(d);
  }
  return names;
}

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A column (n,1): a literal like Array<double>{{1}, {2}} is ambiguous to xtensor's constructors.
template <class V>
xt::xarray<V, xt::layout_type::row_major> column(std::initializer_list<V> v) {
  auto a = xt::xarray<V, xt::layout_type::row_major>::from_shape({v.size(), 1});
  std::copy(v.begin(), v.end(), a.begin());
  return a;
}

// Same shape and |a - b| <= tol entrywise.
inline bool close(const Array<double>& a, const Array<double>& b, double tol = 1e-12) {
  if (a.shape() != b.shape()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::fabs(a.data()[i] - b.data()[i]) > tol) return false;
  return true;
}

inline bool all_finite(const Array<double>& a) {
  return std::all_of(a.begin(), a.end(), [](double v) { return std::isfinite(v); });
}

// Seeded uniform values in [lo, hi).
inline Array<double> rand_array(const Shape& s, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  Generator g(seed);
  return random_uniform<double>(s, g, lo, hi);
}

// 0, 1, ..., n-1 in the given shape.
inline Array<double> ramp_array(const Shape& s) {
  auto a = Array<double>::from_shape(s);
  for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = double(i);
  return a;
}
inline Tensor<double> ramp(const Shape& s, bool requires_grad = false) {
  return Tensor<double>(ramp_array(s), requires_grad);
}

}  // namespace attnlab::testing

// Throws ShapeError, and its message starts with "<op>:".
#define CHECK_OP_ERROR(op, ...)                                                                   \
  do {                                                                                            \
    CHECK_THROWS_AS(__VA_ARGS__, ::attnlab::ShapeError);                                          \
    const std::string msg_ = ::attnlab::testing::error_of([&] { __VA_ARGS__; });                  \
    CHECK_MESSAGE(::attnlab::testing::starts_with(msg_, std::string(op) + ":"), "message: ", msg_); \
  } while (0)
