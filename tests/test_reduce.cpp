// Reductions: values by hand over all axes, one, several and negative axes, kept or dropped;
// gradients (ties in max, var); float/double agreement; bad axes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/ops.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;
using TD = Tensor<double>;
using AD = Array<double>;

namespace {

template <class Op>
void check_agree(const char* name, Op op) {
  INFO(name);
  Generator g(7);
  const Array<float> xf = random_uniform<float>({3, 4, 5}, g, 0.5, 2.0);
  const Array<float> yf = op(Tensor<float>(xf)).value();
  const AD yd = op(TD(AD(xf))).value();
  REQUIRE(yf.shape() == yd.shape());
  for (std::size_t i = 0; i < yd.size(); ++i)
    CHECK_MESSAGE(std::fabs(yf.data()[i] - yd.data()[i]) <= 1e-6 * std::fabs(yd.data()[i]) + 1e-7,
                  "entry ", i);
}

}  // namespace

TEST_CASE("sum and mean: values over all axes, one axis, negative axes, keepdims") {
  const TD a(AD{{1, 2, 3}, {4, 5, 6}});
  const TD s = sum(a);
  CHECK(s.shape() == Shape{});
  CHECK(s.item() == 21);
  CHECK(sum(a, {0}).value() == AD{5, 7, 9});
  CHECK(sum(a, {1}).value() == AD{6, 15});
  CHECK(sum(a, {-1}, true).value() == column<double>({6, 15}));
  CHECK(sum(a, {0, 1}).shape() == Shape{});
  CHECK(sum(a, {1, 0}, true).value() == column<double>({21}));
  CHECK(mean(a).item() == 3.5);
  CHECK(mean(a, {0}).value() == AD{2.5, 3.5, 4.5});
  CHECK(mean(a, {-2}, true).value() == AD{{2.5, 3.5, 4.5}});
  // (2,3,4) ramp over axes 0 and 2: sum_{i,k} 12i + 4j + k = 60 + 32j
  CHECK(sum(ramp({2, 3, 4}), {0, 2}).value() == AD{60, 92, 124});
  const AD kept = sum(ramp({2, 3, 4}), {0, -1}, true).value();
  CHECK(shape_of(kept) == Shape{1, 3, 1});
  AD flat = kept;
  flat.reshape({3});
  CHECK(flat == AD{60, 92, 124});
  // an empty axis list reduces nothing (numpy's axis=())
  CHECK(sum(a, {}).value() == a.value());
}

TEST_CASE("max: values, and the gradient goes to the first arg-max on ties") {
  const TD a(AD{{1, 5, 3}, {4, 2, 6}});
  CHECK(max(a).item() == 6);
  CHECK(max(a, {1}).value() == AD{5, 6});
  CHECK(max(a, {0}, true).value() == AD{{4, 5, 6}});
  CHECK(max(ramp({2, 3, 4}), {0, 2}).value() == AD{15, 19, 23});
  TD t(AD{{2, 2, 1}, {0, 3, 3}}, true);
  max(t, {1}).backward(AD{10, 20});
  CHECK(t.grad() == AD{{10, 0, 0}, {0, 20, 0}});
  TD u(AD{3, 1, 3}, true);
  max(u).backward();
  CHECK(u.grad() == AD{1, 0, 0});
  CHECK(std::isnan(max(TD(AD{1, NAN, 3})).item()));
}

TEST_CASE("var: population and unbiased, with its gradient") {
  TD x(AD{1, 2, 3, 4}, true);
  CHECK(var(x).item() == doctest::Approx(1.25));
  CHECK(var(x, true).item() == doctest::Approx(5.0 / 3.0));
  const TD a(AD{{1, 2, 3}, {2, 4, 6}});
  CHECK(close(var(a, Axes{1}).value(), AD{2.0 / 3.0, 8.0 / 3.0}));
  CHECK(close(var(a, Axes{-1}, true, true).value(), column<double>({1.0, 4.0})));
  CHECK(close(var(a, Axes{0}).value(), AD{0.25, 1.0, 2.25}));
  var(x).backward();  // dx = 2 (x - mean) / n
  CHECK(close(x.grad(), AD{-0.75, -0.25, 0.25, 0.75}));
}

TEST_CASE("sum and mean backward broadcast the gradient back; a reused tensor sums both paths") {
  TD a(AD{{1, 2, 3}, {4, 5, 6}}, true);
  sum(a, {0}).backward(AD{1, 2, 3});
  CHECK(a.grad() == AD{{1, 2, 3}, {1, 2, 3}});
  a.zero_grad();
  mean(a, {1}, true).backward(column<double>({3, 6}));
  CHECK(close(a.grad(), AD{{1, 1, 1}, {2, 2, 2}}));
  a.zero_grad();
  // y = sum(a) + max(a) + mean(a * a);  dy/da = 1 + [a is the max] + 2a / 6
  add(add(sum(a), max(a)), mean(mul(a, a))).backward();
  CHECK(close(a.grad(), AD{{1 + 1 / 3.0, 1 + 2 / 3.0, 2}, {1 + 4 / 3.0, 1 + 5 / 3.0, 1 + 1 + 2}}));
}

TEST_CASE("float and double forwards agree for every reduction") {
  check_agree("sum", [](const auto& x) { return sum(x); });
  check_agree("sum axes", [](const auto& x) { return sum(x, {0, 2}, true); });
  check_agree("mean", [](const auto& x) { return mean(x); });
  check_agree("mean axis", [](const auto& x) { return mean(x, {-1}); });
  check_agree("max", [](const auto& x) { return max(x); });
  check_agree("max axis", [](const auto& x) { return max(x, {1}); });
  check_agree("var", [](const auto& x) { return var(x); });
  check_agree("var unbiased axis", [](const auto& x) { return var(x, Axes{1}, false, true); });
}

TEST_CASE("bad axes and empty handles throw ShapeError naming the op") {
  const TD a(AD{{1, 2, 3}, {4, 5, 6}});
  const TD none;
  CHECK_OP_ERROR("sum", sum(a, {2}));
  CHECK_OP_ERROR("sum", sum(a, {-3}));
  CHECK_OP_ERROR("sum", sum(a, {0, 0}));
  CHECK_OP_ERROR("sum", sum(a, {1, -1}));
  CHECK_OP_ERROR("mean", mean(a, {5}));
  CHECK_OP_ERROR("mean", mean(a, {0, -2}));
  CHECK_OP_ERROR("max", max(a, {2}));
  CHECK_OP_ERROR("max", max(a, {1, 1}));
  CHECK_OP_ERROR("var", var(a, Axes{-3}));
  CHECK_OP_ERROR("var", var(a, Axes{0, 0}));
  CHECK(error_of([&] { sum(a, {2}); }).find("(2,3)") != std::string::npos);
  CHECK_OP_ERROR("max", max(TD(AD::from_shape({0, 3}))));
  CHECK_OP_ERROR("max", max(TD(AD::from_shape({0, 3})), {0}));
  CHECK_OP_ERROR("sum", sum(none));
  CHECK_OP_ERROR("sum", sum(none, {0}));
  CHECK_OP_ERROR("mean", mean(none));
  CHECK_OP_ERROR("mean", mean(none, {0}));
  CHECK_OP_ERROR("max", max(none));
  CHECK_OP_ERROR("max", max(none, {0}));
  CHECK_OP_ERROR("var", var(none));
  CHECK_OP_ERROR("var", var(none, Axes{0}));
}

TEST_CASE("var(x, {1}) reduces over axis 1, not over every axis with unbiased = true") {
  attnlab::Tensor<double> a(attnlab::Array<double>{{1.0, 2.0, 3.0}, {2.0, 4.0, 6.0}});
  CHECK(attnlab::var(a, {1}).shape() == attnlab::Shape{2});
  CHECK(attnlab::var(a, {-1}, true).shape() == attnlab::Shape{2, 1});
}
