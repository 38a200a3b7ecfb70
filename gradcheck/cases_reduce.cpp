// Gradient checks of the reductions: all axes, one axis, several, negative, kept or dropped.
#include "gradcheck/cases.hpp"

namespace attnlab::cases {

namespace {
// Distinct values (a shuffled, jittered ramp) so that max has one arg-max per group and no tie
// within the finite-difference step.
TD distinct(const Shape& shape, std::uint64_t seed) {
  Generator g(seed);
  Array<double> a = Array<double>::from_shape(shape);
  std::vector<std::size_t> order(a.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  shuffle(order, g);
  for (std::size_t i = 0; i < order.size(); ++i) a.data()[i] = 0.1 * double(order[i]) + 0.01 * g.uniform();
  return TD(a, true);
}
}  // namespace

GRADCHECK_CASE("sum all axes", "(3,4) -> ()", [] {
  return gradcheck([](const Inputs& x) { return sum(x[0]); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("sum axis 1", "(2,3,4) -> (2,4)", [] {
  return gradcheck([](const Inputs& x) { return sum(x[0], {1}); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("sum axis -1 keepdims", "(2,3,4) -> (2,3,1)", [] {
  return gradcheck([](const Inputs& x) { return sum(x[0], {-1}, true); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("sum axes 0,2", "(2,3,4) -> (3)", [] {
  return gradcheck([](const Inputs& x) { return sum(x[0], {0, 2}); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("sum axes 0,-1 keepdims", "(2,3,4) -> (1,3,1)", [] {
  return gradcheck([](const Inputs& x) { return sum(x[0], {0, -1}, true); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("mean all axes", "(3,4) -> ()", [] {
  return gradcheck([](const Inputs& x) { return mean(x[0]); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("mean axis 0", "(3,4) -> (4)", [] {
  return gradcheck([](const Inputs& x) { return mean(x[0], {0}); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("mean axis -2 keepdims", "(2,3,4) -> (2,1,4)", [] {
  return gradcheck([](const Inputs& x) { return mean(x[0], {-2}, true); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("mean axes 1,2", "(2,3,4) -> (2)", [] {
  return gradcheck([](const Inputs& x) { return mean(x[0], {1, 2}); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("max all axes distinct values", "(3,4) -> ()", [] {
  return gradcheck([](const Inputs& x) { return max(x[0]); }, {distinct({3, 4}, 1)});
});
GRADCHECK_CASE("max axis 1 distinct values", "(2,3,4) -> (2,4)", [] {
  return gradcheck([](const Inputs& x) { return max(x[0], {1}); }, {distinct({2, 3, 4}, 1)});
});
GRADCHECK_CASE("max axis -1 keepdims distinct values", "(2,3,4) -> (2,3,1)", [] {
  return gradcheck([](const Inputs& x) { return max(x[0], {-1}, true); }, {distinct({2, 3, 4}, 2)});
});
GRADCHECK_CASE("max axes 0,2 distinct values", "(2,3,4) -> (3)", [] {
  return gradcheck([](const Inputs& x) { return max(x[0], {0, 2}); }, {distinct({2, 3, 4}, 3)});
});
GRADCHECK_CASE("var all axes", "(3,4) -> ()", [] {
  return gradcheck([](const Inputs& x) { return var(x[0]); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("var unbiased all axes", "(3,4) -> ()", [] {
  return gradcheck([](const Inputs& x) { return var(x[0], true); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("var axis -1", "(2,3,4) -> (2,3)", [] {
  return gradcheck([](const Inputs& x) { return var(x[0], Axes{-1}); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("var unbiased axis 1", "(2,3,4) -> (2,4)", [] {
  return gradcheck([](const Inputs& x) { return var(x[0], {1}, false, true); }, {rnd({2, 3, 4}, 1)});
});
GRADCHECK_CASE("var axes 0,2 keepdims", "(2,3,4) -> (1,3,1)", [] {
  return gradcheck([](const Inputs& x) { return var(x[0], {0, 2}, true); }, {rnd({2, 3, 4}, 1)});
});

}  // namespace attnlab::cases
