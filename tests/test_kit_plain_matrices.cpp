// lessons/kit/plain_matrices: matrix products written as formulas, the masked row softmax, central differences and the relative error
// that lesson 06 checks its hand-written backward with, on cases worked by hand, and bad input.
#include <doctest/doctest.h>

#include <cmath>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "lessons/kit/plain_matrices.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using doctest::Approx;
using doctest::Contains;

TEST_CASE("mm, tr, rowsum and inner on matrices worked by hand") {
  const Array<double> a = {{1, 2}, {3, 4}, {5, 6}};  // 3 x 2
  const Array<double> b = {{1, 0, -1}, {2, 1, 0}};   // 2 x 3
  CHECK(mm(a, b) == Array<double>{{5, 2, -1}, {11, 4, -3}, {17, 6, -5}});
  CHECK(tr(a) == Array<double>{{1, 3, 5}, {2, 4, 6}});
  const Array<double> sums = rowsum(a);  // a column: (3, 1)
  REQUIRE(sums.shape() == std::vector<std::size_t>{3, 1});
  CHECK(sums(0, 0) == 3.0);
  CHECK(sums(1, 0) == 7.0);
  CHECK(sums(2, 0) == 11.0);
  CHECK(inner(a, a) == 91.0);
  CHECK_THROWS_WITH_AS(mm(a, a), Contains("mm: needs (m x k) times (k x n), got (3,2) x (3,2)"), ShapeError);
  CHECK_THROWS_WITH_AS(inner(a, b), Contains("inner: shapes differ: (3,2) and (2,3)"), ShapeError);
}

TEST_CASE("softmax_rows: each row sums to 1 over its allowed entries, hidden entries and empty rows exactly 0") {
  const Array<double> s = {{0.0, std::log(3.0)}, {1000.0, 1000.0}};  // 1 : 3, and large equal scores
  const Array<double> y = softmax_rows(s);
  CHECK(y(0, 0) == Approx(0.25));
  CHECK(y(0, 1) == Approx(0.75));
  CHECK(y(1, 0) == 0.5);  // shifted by the row's maximum: no overflow
  CHECK(y(1, 1) == 0.5);
  const Array<double> t = {{1.0, 2.0, 3.0}, {4.0, 5.0, 6.0}};
  const Mask allowed = {{true, false, true}, {false, false, false}};
  const Array<double> m = softmax_rows(t, allowed);
  CHECK(m(0, 1) == 0.0);
  CHECK(m(0, 0) == Approx(1.0 / (1.0 + std::exp(2.0))));
  CHECK(m(0, 0) + m(0, 2) == Approx(1.0));
  for (std::size_t j = 0; j < 3; ++j) CHECK(m(1, j) == 0.0);  // nothing allowed: zeros, not NaN
  CHECK_THROWS_WITH_AS(softmax_rows(Array<double>{1.0, 2.0}), Contains("softmax_rows: needs a 2-D matrix, got (2)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(softmax_rows(t, Mask{{true, true}}),
                       Contains("softmax_rows: the mask (1,2) is not the shape of the scores (2,3)"), ShapeError);
}

TEST_CASE("central_differences: the gradient of a cubic to 1e-9, x restored, bad steps refused") {
  // F(x) = sum x^3 + x_0 x_1: dF/dx = 3 x^2 + (x_1, x_0, 0).
  const Array<double> x = {{0.5, -1.5, 2.0}};
  const auto F = [](const Array<double>& v) { return double(xt::sum(v * v * v)()) + v(0, 0) * v(0, 1); };
  const Array<double> g = central_differences(F, x);
  const Array<double> expected = {{3 * 0.25 - 1.5, 3 * 2.25 + 0.5, 3 * 4.0}};
  REQUIRE(g.shape() == x.shape());
  for (std::size_t i = 0; i < g.size(); ++i) CHECK(std::abs(g.flat(i) - expected.flat(i)) < 1e-9);
  int calls = 0;
  central_differences([&](const Array<double>& v) { ++calls; return double(v(0, 0)); }, x);
  CHECK(calls == 6);  // two per entry
  CHECK_THROWS_WITH_AS(central_differences(F, x, 0.0), Contains("central_differences: the step h must be positive"),
                       ShapeError);
}

TEST_CASE("max_relative_error: the largest difference over the reference's largest entry") {
  const Array<double> ref = {{2.0, -4.0}, {1.0, 0.0}};
  const Array<double> a = {{2.5, -4.0}, {1.0, -1.0}};
  CHECK(max_relative_error(a, ref) == Approx(1.0 / 4.0));
  CHECK(max_relative_error(ref, ref) == 0.0);
  CHECK(max_relative_error(Array<double>{1e-300}, Array<double>{0.0}) == Approx(1.0));  // a zero reference: / 1e-300
  CHECK_THROWS_WITH_AS(max_relative_error(Array<double>{1.0, 2.0}, ref),
                       Contains("max_relative_error: shapes differ: (2) and (2,2)"), ShapeError);
}
