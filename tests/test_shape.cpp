// Shape ops: values by hand, where the gradient goes, float/double agreement, bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "core/ops.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;
using TD = Tensor<double>;
using AD = Array<double>;

namespace {

// Shape ops only move values: float and double results must match exactly.
template <class Op>
void check_agree(const char* name, Op op) {
  INFO(name);
  Generator g(5);
  const Array<float> xf = random_uniform<float>({2, 3, 4}, g, -1.0, 1.0);
  const Array<float> yf = op(Tensor<float>(xf)).value();
  const AD yd = op(TD(AD(xf))).value();
  REQUIRE(yf.shape() == yd.shape());
  for (std::size_t i = 0; i < yd.size(); ++i) CHECK(double(yf.data()[i]) == yd.data()[i]);
}

}  // namespace

TEST_CASE("reshape, unsqueeze, squeeze keep the values in order") {
  const TD a = ramp({2, 3});
  CHECK(reshape(a, {3, 2}).value() == AD{{0, 1}, {2, 3}, {4, 5}});
  CHECK(reshape(a, {-1}).value() == AD{0, 1, 2, 3, 4, 5});
  CHECK(reshape(a, {1, -1, 2}).shape() == Shape{1, 3, 2});
  CHECK(reshape(TD(AD{7.0}), {}).shape() == Shape{});
  CHECK(unsqueeze(a, 0).shape() == Shape{1, 2, 3});
  CHECK(unsqueeze(a, -1).shape() == Shape{2, 3, 1});
  CHECK(unsqueeze(a, 1).value() == AD{{{0, 1, 2}}, {{3, 4, 5}}});
  CHECK(squeeze(unsqueeze(a, 1), 1).value() == a.value());
  CHECK(squeeze(TD(AD{{1, 2}}), -2).value() == AD{1, 2});
}

TEST_CASE("transpose and permute") {
  const TD a = ramp({2, 3});
  CHECK(transpose(a).value() == AD{{0, 3}, {1, 4}, {2, 5}});
  const TD b = ramp({2, 3, 4});
  const AD t = transpose(b, 0, 2).value();
  REQUIRE(t.shape() == Shape{4, 3, 2});
  CHECK(t(3, 1, 1) == b.value()(1, 1, 3));
  CHECK(t(2, 0, 1) == 14.0);  // b[1,0,2] = 12 + 2
  const AD p = permute(b, {2, 0, 1}).value();
  REQUIRE(p.shape() == Shape{4, 2, 3});
  CHECK(p(3, 1, 2) == b.value()(1, 2, 3));
  // the gradient goes back through the inverse permutation
  TD x = ramp({2, 3, 4}, true);
  permute(x, {2, 0, 1}).backward(permute(ramp({2, 3, 4}), {2, 0, 1}).value());
  CHECK(x.grad() == ramp({2, 3, 4}).value());
}

TEST_CASE("slice: python rules for negative and out-of-range bounds") {
  const TD v = ramp({10});
  CHECK(slice(v, 0, 2, 8, 3).value() == AD{2, 5});
  CHECK(slice(v, 0, -3, 100).value() == AD{7, 8, 9});
  CHECK(slice(v, 0, -100, 2).value() == AD{0, 1});
  CHECK(slice(v, 0, 5, 2).shape() == Shape{0});
  CHECK(slice(v, 0, 1, -1, 4).value() == AD{1, 5});
  const TD m = ramp({3, 4});
  CHECK(slice(m, -1, 1, 3).value() == AD{{1, 2}, {5, 6}, {9, 10}});
  TD x = ramp({3, 4}, true);
  slice(x, 1, 1, 4, 2).backward(AD{{1, 2}, {3, 4}, {5, 6}});
  CHECK(x.grad() == AD{{0, 1, 0, 2}, {0, 3, 0, 4}, {0, 5, 0, 6}});
}

TEST_CASE("concat, stack and split") {
  const TD a = ramp({2, 2});
  const TD b(column<double>({9, 8}));
  CHECK(concat<double>({a, b}, 1).value() == AD{{0, 1, 9}, {2, 3, 8}});
  CHECK(concat<double>({a, a}, 0).value() == AD{{0, 1}, {2, 3}, {0, 1}, {2, 3}});
  CHECK(stack<double>({a, a + 10.0}, 0).value() == AD{{{0, 1}, {2, 3}}, {{10, 11}, {12, 13}}});
  CHECK(stack<double>({a, a + 10.0}, -1).value() == AD{{{0, 10}, {1, 11}}, {{2, 12}, {3, 13}}});
  const auto parts = split(ramp({2, 5}), {2, 0, 3}, 1);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].value() == AD{{0, 1}, {5, 6}});
  CHECK(parts[1].shape() == Shape{2, 0});
  CHECK(parts[2].value() == AD{{2, 3, 4}, {7, 8, 9}});
  // a tensor used several times: concat(x, x) and stack(x, x) each give it 2 dy
  TD x(AD{1, 2}, true);
  sum(concat<double>({x, x}, 0)).backward();
  CHECK(x.grad() == AD{2, 2});
  sum(mul(stack<double>({x, x}, 1), TD(AD{1, 10}))).backward();
  CHECK(x.grad() == AD{13, 13});
  TD y = ramp({2, 4}, true);
  const auto pieces = split(y, {3, 1}, 1);
  add(sum(pieces[0]), mul(sum(pieces[1]), 5.0)).backward();
  CHECK(y.grad() == AD{{1, 1, 1, 5}, {1, 1, 1, 5}});
}

TEST_CASE("index_select: out shape a[:axis] + idx.shape + a[axis+1:], repeated indices accumulate") {
  const TD emb = ramp({4, 2});
  CHECK(index_select(emb, 0, IndexArray{3, 0, 3}).value() == AD{{6, 7}, {0, 1}, {6, 7}});
  const TD b = ramp({2, 3, 4});
  const TD s = index_select(b, 1, IndexArray{{2, 0}, {1, 1}});
  REQUIRE(s.shape() == Shape{2, 2, 2, 4});
  CHECK(s.value()(1, 0, 0, 3) == b.value()(1, 2, 3));
  CHECK(s.value()(0, 1, 1, 2) == b.value()(0, 1, 2));
  CHECK(index_select(b, -1, IndexArray(Index(2))).shape() == Shape{2, 3});
  TD w = ramp({4, 2}, true);
  sum(index_select(w, 0, IndexArray{{1, 1}, {3, 1}})).backward();
  CHECK(w.grad() == AD{{0, 0}, {3, 3}, {0, 0}, {1, 1}});
}

TEST_CASE("gather follows torch.gather") {
  const TD a(AD{{1, 2}, {3, 4}});
  CHECK(gather(a, 1, IndexArray{{0, 0}, {1, 0}}).value() == AD{{1, 1}, {4, 3}});
  CHECK(gather(a, 0, IndexArray{{1, 0}}).value() == AD{{3, 2}});
  TD x(AD{{1, 2, 3}, {4, 5, 6}}, true);
  gather(x, -1, IndexArray{{2, 2}, {0, 1}}).backward(AD{{1, 2}, {3, 4}});
  CHECK(x.grad() == AD{{0, 0, 3}, {3, 4, 0}});
}

TEST_CASE("broadcast_to copies along the stretched axes and sums the gradient back") {
  TD a(column<double>({1, 2}), true);
  CHECK(broadcast_to(a, {2, 2, 3}).value() == AD{{{1, 1, 1}, {2, 2, 2}}, {{1, 1, 1}, {2, 2, 2}}});
  sum(broadcast_to(a, {2, 2, 3})).backward();
  CHECK(a.grad() == column<double>({6, 6}));
}

TEST_CASE("float and double forwards agree for every shape op") {
  check_agree("reshape", [](const auto& x) { return reshape(x, {4, -1}); });
  check_agree("unsqueeze", [](const auto& x) { return unsqueeze(x, 1); });
  check_agree("squeeze", [](const auto& x) { return squeeze(unsqueeze(x, 1), 1); });
  check_agree("transpose", [](const auto& x) { return transpose(x, 0, 2); });
  check_agree("permute", [](const auto& x) { return permute(x, {1, 2, 0}); });
  check_agree("slice", [](const auto& x) { return slice(x, 2, -3, 4, 2); });
  check_agree("concat", [](const auto& x) { return concat<typename std::decay_t<decltype(x.value())>::value_type>({x, x}, 1); });
  check_agree("stack", [](const auto& x) { return stack<typename std::decay_t<decltype(x.value())>::value_type>({x, x}, 1); });
  check_agree("split", [](const auto& x) { return split(x, {1, 3}, 2)[1]; });
  check_agree("index_select", [](const auto& x) { return index_select(x, 1, IndexArray{2, 0, 2}); });
  IndexArray gi{3, 0, 1, 2, 2, 0};
  gi.reshape({2, 3, 1});
  check_agree("gather", [gi](const auto& x) { return gather(x, 2, gi); });
  check_agree("broadcast_to", [](const auto& x) { return broadcast_to(x, {3, 2, 3, 4}); });
}

TEST_CASE("bad shapes, axes and indices throw ShapeError naming the op and the values") {
  const TD a = ramp({2, 3});
  CHECK_OP_ERROR("reshape", reshape(a, {4, 2}));
  const std::string r = error_of([&] { reshape(a, {4, 2}); });
  CHECK(contains(r, "(2,3)"));
  CHECK(contains(r, "(4,2)"));
  CHECK_OP_ERROR("reshape", reshape(a, {-1, -1}));
  CHECK_OP_ERROR("reshape", reshape(a, {4, -1}));
  CHECK_OP_ERROR("reshape", reshape(a, {-2, 3}));
  CHECK_OP_ERROR("unsqueeze", unsqueeze(a, 3));
  CHECK_OP_ERROR("unsqueeze", unsqueeze(a, -4));
  CHECK_OP_ERROR("squeeze", squeeze(a, 0));
  CHECK_OP_ERROR("squeeze", squeeze(a, 2));
  CHECK_OP_ERROR("transpose", transpose(a, 0, 2));
  CHECK_OP_ERROR("transpose", transpose(ramp({3})));
  CHECK_OP_ERROR("permute", permute(a, {0}));
  CHECK_OP_ERROR("permute", permute(a, {1, 1}));
  CHECK_OP_ERROR("permute", permute(a, {0, 2}));
  CHECK_OP_ERROR("slice", slice(a, 1, 0, 2, 0));
  CHECK_OP_ERROR("slice", slice(a, 1, 2, 0, -1));
  CHECK_OP_ERROR("slice", slice(a, 2, 0, 1));
  CHECK_OP_ERROR("concat", concat<double>({}, 0));
  CHECK_OP_ERROR("concat", concat<double>({a, ramp({3, 2})}, 0));
  CHECK(contains(error_of([&] { concat<double>({a, a, ramp({2, 2, 1})}, 1); }), "tensor 2"));
  CHECK_OP_ERROR("concat", concat<double>({a, a}, 2));
  CHECK_OP_ERROR("stack", stack<double>({}, 0));
  CHECK_OP_ERROR("stack", stack<double>({a, a, ramp({3, 2})}, 0));
  CHECK(contains(error_of([&] { stack<double>({a, a, ramp({3, 2})}, 0); }), "tensor 2"));
  CHECK_OP_ERROR("stack", stack<double>({a, a}, 3));
  CHECK_OP_ERROR("split", split(a, {1, 1}, 1));
  CHECK_OP_ERROR("split", split(a, {2, 2}, 1));
  CHECK_OP_ERROR("split", split(a, {3}, 2));
  CHECK_OP_ERROR("index_select", index_select(a, 1, IndexArray{0, 3}));
  const std::string ie = error_of([&] { index_select(a, 1, IndexArray{0, -1}); });
  CHECK(contains(ie, "index_select:"));
  CHECK(contains(ie, "index -1"));
  CHECK(contains(ie, "length 3"));
  CHECK(contains(error_of([&] { index_select(a, 0, IndexArray{5}); }), "index 5"));
  CHECK_OP_ERROR("index_select", index_select(a, 2, IndexArray{0}));
  CHECK_OP_ERROR("gather", gather(a, 1, IndexArray{0, 1}));
  CHECK_OP_ERROR("gather", gather(a, 1, IndexArray{{0, 3}}));
  CHECK_OP_ERROR("gather", gather(a, 1, column<Index>({-1})));
  CHECK_OP_ERROR("gather", gather(a, 0, IndexArray{{0, 0, 0, 0}}));
  CHECK_OP_ERROR("gather", gather(a, 2, column<Index>({0})));
  CHECK_OP_ERROR("broadcast_to", broadcast_to(a, {3, 3}));
  CHECK_OP_ERROR("broadcast_to", broadcast_to(a, {3}));
}

TEST_CASE("sizes whose product would wrap around are refused by name, before any memory is touched") {
  const std::size_t huge = std::size_t(1) << 32;
  CHECK(error_of([&] { Tensor<float>::zeros({huge, huge}); }) ==
        "zeros: shape (4294967296,4294967296) has more than 2^48 entries");
  CHECK(starts_with(error_of([&] { Tensor<float>::ones({huge, huge}); }), "ones: shape"));
  CHECK(starts_with(error_of([&] { Tensor<float>::full({huge, huge}, 1.0f); }), "full: shape"));
  Generator g(1);
  CHECK(starts_with(error_of([&] { Tensor<float>::rand({huge, huge}, g); }), "random_uniform: shape"));
  CHECK(starts_with(error_of([&] { Tensor<float>::randn({huge, huge}, g); }), "random_normal: shape"));
  // A zero beside huge sizes: no entries, but the strides would still wrap.
  CHECK(starts_with(error_of([&] { Tensor<float>::zeros({0, std::size_t(1) << 62, 4}); }), "zeros: shape"));
  const long big = (1L << 62) + 1;
  CHECK(starts_with(error_of([&] { reshape(TD::ones({4}), {big, 4}); }), "reshape: shape"));
  CHECK(starts_with(error_of([&] { reshape(TD::ones({4}), {big, -1}); }), "reshape: shape"));
  // Just inside the limit is a size, not an error.
  CHECK(checked_size("test", {std::size_t(1) << 24, std::size_t(1) << 24}) == max_elements);
  CHECK(checked_size("test", {0, std::size_t(1) << 40}) == 0);
}

TEST_CASE("arange refuses infinite, NaN and endless ranges") {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  CHECK(starts_with(error_of([&] { TD::arange(0.0, inf, 1.0); }), "arange: start 0, stop inf and step 1 must all be finite"));
  CHECK(starts_with(error_of([&] { TD::arange(nan); }), "arange:"));
  CHECK(starts_with(error_of([&] { TD::arange(0.0, 1.0, nan); }), "arange:"));
  CHECK(starts_with(error_of([&] { TD::arange(0.0, 1e300, 1e-300); }), "arange: start 0, stop 1e+300"));
  CHECK(TD::arange(0.0, 3.0, 1.0).size() == 3);
}

TEST_CASE("empty tensor handles throw ShapeError naming the op") {
  const TD none;
  const TD a = ramp({2, 3});
  CHECK_OP_ERROR("reshape", reshape(none, {1}));
  CHECK_OP_ERROR("unsqueeze", unsqueeze(none, 0));
  CHECK_OP_ERROR("squeeze", squeeze(none, 0));
  CHECK_OP_ERROR("transpose", transpose(none));
  CHECK_OP_ERROR("permute", permute(none, {0}));
  CHECK_OP_ERROR("slice", slice(none, 0, 0, 1));
  CHECK_OP_ERROR("concat", concat<double>({a, none}, 0));
  CHECK(contains(error_of([&] { concat<double>({a, none}, 0); }), "tensor 1"));
  CHECK_OP_ERROR("stack", stack<double>({none}, 0));
  CHECK_OP_ERROR("split", split(none, {1}, 0));
  CHECK_OP_ERROR("index_select", index_select(none, 0, IndexArray{0}));
  CHECK_OP_ERROR("gather", gather(none, 0, IndexArray{0}));
  CHECK_OP_ERROR("broadcast_to", broadcast_to(none, {2}));
}
