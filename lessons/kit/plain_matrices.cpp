#include "lessons/kit/plain_matrices.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xreducer.hpp>
#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "lessons/story/stats.hpp"

namespace attnlab::lessons {

Array<double> mm(const Array<double>& a, const Array<double>& b) {
  check(a.dimension() == 2 && b.dimension() == 2 && a.shape(1) == b.shape(0), "mm", "needs (m x k) times (k x n), got ",
        shape_str(a.shape()), " x ", shape_str(b.shape()));
  return xt::sum(xt::view(a, xt::all(), xt::all(), xt::newaxis()) * xt::view(b, xt::newaxis(), xt::all(), xt::all()),
                 {1});
}

Array<double> tr(const Array<double>& a) { return xt::transpose(a); }

// Evaluated on its own: a lazy keep_dims reducer inside a larger expression is wrong in xtensor 0.24.3.
Array<double> rowsum(const Array<double>& a) { return xt::sum(a, {1}, xt::keep_dims); }

double inner(const Array<double>& a, const Array<double>& b) {
  check(a.shape() == b.shape(), "inner", "shapes differ: ", shape_str(a.shape()), " and ", shape_str(b.shape()));
  return xt::sum(a * b)();
}

Array<double> softmax_rows(const Array<double>& s, const Mask& allowed) {
  check(s.dimension() == 2, "softmax_rows", "needs a 2-D matrix, got ", shape_str(s.shape()));
  const bool masked = allowed.dimension() != 0;  // a default Mask is a 0-D array: every entry allowed
  check(!masked || (allowed.dimension() == 2 && allowed.shape() == s.shape()), "softmax_rows", "the mask ",
        shape_str(allowed.shape()), " is not the shape of the scores ", shape_str(s.shape()));
  Array<double> y = xt::zeros<double>(s.shape());
  for (std::size_t i = 0; i < s.shape(0); ++i) {
    double top = -std::numeric_limits<double>::infinity(), total = 0;
    for (std::size_t j = 0; j < s.shape(1); ++j)
      if (!masked || allowed(i, j)) top = std::max(top, s(i, j));
    for (std::size_t j = 0; j < s.shape(1); ++j)
      if (!masked || allowed(i, j)) total += y(i, j) = std::exp(s(i, j) - top);
    if (total > 0) xt::view(y, i) /= total;
  }
  return y;
}

Array<double> central_differences(const std::function<double(const Array<double>&)>& F, Array<double> x, double h) {
  check(h > 0, "central_differences", "the step h must be positive, got ", h);
  Array<double> g = xt::zeros<double>(x.shape());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double keep = x.flat(i);
    x.flat(i) = keep + h;
    const double up = F(x);
    x.flat(i) = keep - h;
    g.flat(i) = (up - F(x)) / (2 * h);
    x.flat(i) = keep;
  }
  return g;
}

double max_relative_error(const Array<double>& a, const Array<double>& reference) {
  check(a.shape() == reference.shape(), "max_relative_error", "shapes differ: ", shape_str(a.shape()), " and ",
        shape_str(reference.shape()));
  const double top = xt::amax(xt::abs(reference))();
  return max_abs_diff(a, reference) / std::max(top, 1e-300);
}

}  // namespace attnlab::lessons
