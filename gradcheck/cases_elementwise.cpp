// Gradient checks of the elementwise ops, with broadcasting in each direction.
#include "gradcheck/cases.hpp"

namespace attnlab::cases {

namespace {
// A positive input, for the ops defined only there (log, sqrt, pow, and divisors).
TD pos(const Shape& shape, std::uint64_t seed) { return rnd(shape, seed, 0.5, 2.0); }

// A fixed pattern of true and false, different per seed.
Mask pattern(const Shape& shape, std::uint64_t seed) {
  Generator g(seed);
  Mask m = Mask::from_shape(shape);
  for (auto& v : m) v = g.uniform() < 0.5;
  return m;
}
}  // namespace

// ---- binary, broadcasting both ways

GRADCHECK_CASE("add same shape", "(3,4) + (3,4)", [] {
  return gradcheck([](const Inputs& x) { return add(x[0], x[1]); }, {rnd({3, 4}, 1), rnd({3, 4}, 2)});
});
GRADCHECK_CASE("add broadcast right", "(2,3,4) + (4)", [] {
  return gradcheck([](const Inputs& x) { return add(x[0], x[1]); }, {rnd({2, 3, 4}, 1), rnd({4}, 2)});
});
GRADCHECK_CASE("add broadcast left", "(3,1) + (2,3,4)", [] {
  return gradcheck([](const Inputs& x) { return add(x[0], x[1]); }, {rnd({3, 1}, 1), rnd({2, 3, 4}, 2)});
});
GRADCHECK_CASE("add broadcast both", "(3,1) + (1,4)", [] {
  return gradcheck([](const Inputs& x) { return add(x[0], x[1]); }, {rnd({3, 1}, 1), rnd({1, 4}, 2)});
});
GRADCHECK_CASE("sub same shape", "(3,4) - (3,4)", [] {
  return gradcheck([](const Inputs& x) { return sub(x[0], x[1]); }, {rnd({3, 4}, 1), rnd({3, 4}, 2)});
});
GRADCHECK_CASE("sub broadcast right", "(2,3,4) - (3,1)", [] {
  return gradcheck([](const Inputs& x) { return sub(x[0], x[1]); }, {rnd({2, 3, 4}, 1), rnd({3, 1}, 2)});
});
GRADCHECK_CASE("sub broadcast left", "() - (2,3)", [] {
  return gradcheck([](const Inputs& x) { return sub(x[0], x[1]); }, {rnd({}, 1), rnd({2, 3}, 2)});
});
GRADCHECK_CASE("sub broadcast both", "(2,1,4) - (3,1)", [] {
  return gradcheck([](const Inputs& x) { return sub(x[0], x[1]); }, {rnd({2, 1, 4}, 1), rnd({3, 1}, 2)});
});
GRADCHECK_CASE("mul same shape", "(3,4) * (3,4)", [] {
  return gradcheck([](const Inputs& x) { return mul(x[0], x[1]); }, {rnd({3, 4}, 1), rnd({3, 4}, 2)});
});
GRADCHECK_CASE("mul broadcast right", "(2,3,4) * (1,4)", [] {
  return gradcheck([](const Inputs& x) { return mul(x[0], x[1]); }, {rnd({2, 3, 4}, 1), rnd({1, 4}, 2)});
});
GRADCHECK_CASE("mul broadcast left", "(4) * (2,3,4)", [] {
  return gradcheck([](const Inputs& x) { return mul(x[0], x[1]); }, {rnd({4}, 1), rnd({2, 3, 4}, 2)});
});
GRADCHECK_CASE("mul broadcast both", "(2,1,4) * (3,1)", [] {
  return gradcheck([](const Inputs& x) { return mul(x[0], x[1]); }, {rnd({2, 1, 4}, 1), rnd({3, 1}, 2)});
});
GRADCHECK_CASE("mul reuse", "a * a", [] {
  return gradcheck([](const Inputs& x) { return mul(x[0], x[0]); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("div same shape", "(3,4) / (3,4)", [] {
  return gradcheck([](const Inputs& x) { return div(x[0], x[1]); }, {rnd({3, 4}, 1), pos({3, 4}, 2)});
});
GRADCHECK_CASE("div broadcast right", "(2,3,4) / (4)", [] {
  return gradcheck([](const Inputs& x) { return div(x[0], x[1]); }, {rnd({2, 3, 4}, 1), pos({4}, 2)});
});
GRADCHECK_CASE("div broadcast left", "(3,1) / (2,3,4)", [] {
  return gradcheck([](const Inputs& x) { return div(x[0], x[1]); }, {rnd({3, 1}, 1), pos({2, 3, 4}, 2)});
});
GRADCHECK_CASE("div broadcast both", "(3,1) / (1,4)", [] {
  return gradcheck([](const Inputs& x) { return div(x[0], x[1]); }, {rnd({3, 1}, 1), pos({1, 4}, 2)});
});
GRADCHECK_CASE("pow tensor exponent", "(3,4) ^ (3,4)", [] {
  return gradcheck([](const Inputs& x) { return pow(x[0], x[1]); }, {pos({3, 4}, 1), rnd({3, 4}, 2, -2, 2)});
});
GRADCHECK_CASE("pow tensor exponent broadcast both", "(3,1) ^ (1,4)", [] {
  return gradcheck([](const Inputs& x) { return pow(x[0], x[1]); }, {pos({3, 1}, 1), rnd({1, 4}, 2, -2, 2)});
});

// ---- scalar forms

GRADCHECK_CASE("add scalar", "(3,4) + 2.5", [] {
  return gradcheck([](const Inputs& x) { return add(x[0], 2.5); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("sub scalar", "(3,4) - 2.5", [] {
  return gradcheck([](const Inputs& x) { return sub(x[0], 2.5); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("sub scalar left", "2.5 - (3,4)", [] {
  return gradcheck([](const Inputs& x) { return sub(2.5, x[0]); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("mul scalar", "(3,4) * -1.5", [] {
  return gradcheck([](const Inputs& x) { return mul(x[0], -1.5); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("div scalar", "(3,4) / 0.7", [] {
  return gradcheck([](const Inputs& x) { return div(x[0], 0.7); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("div scalar left", "1.3 / (3,4)", [] {
  return gradcheck([](const Inputs& x) { return div(1.3, x[0]); }, {pos({3, 4}, 1)});
});
GRADCHECK_CASE("pow scalar exponent", "(3,4) ^ 2.7", [] {
  return gradcheck([](const Inputs& x) { return pow(x[0], 2.7); }, {pos({3, 4}, 1)});
});
GRADCHECK_CASE("pow scalar exponent negative", "(2,3,2) ^ -1.5", [] {
  return gradcheck([](const Inputs& x) { return pow(x[0], -1.5); }, {pos({2, 3, 2}, 1)});
});

// ---- unary

GRADCHECK_CASE("neg", "(3,4)", [] {
  return gradcheck([](const Inputs& x) { return neg(x[0]); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("exp", "(3,4)", [] {
  return gradcheck([](const Inputs& x) { return exp(x[0]); }, {rnd({3, 4}, 1, -2, 2)});
});
GRADCHECK_CASE("exp 3-d", "(2,3,2)", [] {
  return gradcheck([](const Inputs& x) { return exp(x[0]); }, {rnd({2, 3, 2}, 2, -2, 2)});
});
GRADCHECK_CASE("log", "(3,4)", [] {
  return gradcheck([](const Inputs& x) { return log(x[0]); }, {pos({3, 4}, 1)});
});
GRADCHECK_CASE("log 1-d", "(5)", [] {
  return gradcheck([](const Inputs& x) { return log(x[0]); }, {pos({5}, 2)});
});
GRADCHECK_CASE("sqrt", "(3,4)", [] {
  return gradcheck([](const Inputs& x) { return sqrt(x[0]); }, {pos({3, 4}, 1)});
});
GRADCHECK_CASE("tanh", "(3,4)", [] {
  return gradcheck([](const Inputs& x) { return tanh(x[0]); }, {rnd({3, 4}, 1, -3, 3)});
});
GRADCHECK_CASE("sigmoid", "(3,4)", [] {
  return gradcheck([](const Inputs& x) { return sigmoid(x[0]); }, {rnd({3, 4}, 1, -5, 5)});
});
GRADCHECK_CASE("sigmoid 3-d", "(2,2,3)", [] {
  return gradcheck([](const Inputs& x) { return sigmoid(x[0]); }, {rnd({2, 2, 3}, 2, -5, 5)});
});
GRADCHECK_CASE("relu", "(3,4)", [] {
  return gradcheck([](const Inputs& x) { return relu(x[0]); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("leaky_relu", "(3,4), slope 0.2", [] {
  return gradcheck([](const Inputs& x) { return leaky_relu(x[0], 0.2); }, {rnd({3, 4}, 3)});
});
GRADCHECK_CASE("relu 3-d", "(2,3,4)", [] {
  return gradcheck([](const Inputs& x) { return relu(x[0]); }, {rnd({2, 3, 4}, 2)});
});
GRADCHECK_CASE("gelu erf", "(3,4)", [] {
  return gradcheck([](const Inputs& x) { return gelu(x[0], GeluForm::Erf); }, {rnd({3, 4}, 1, -3, 3)});
});
// A given-up input (here the temporary x + 0.5): the slope is kept in that input's array.
GRADCHECK_CASE("gelu erf, given-up input", "(3,4)", [] {
  return gradcheck([](const Inputs& x) { return gelu(add(x[0], 0.5), GeluForm::Erf); }, {rnd({3, 4}, 1, -3, 3)});
});
GRADCHECK_CASE("gelu tanh", "(3,4)", [] {
  return gradcheck([](const Inputs& x) { return gelu(x[0], GeluForm::Tanh); }, {rnd({3, 4}, 1, -3, 3)});
});
GRADCHECK_CASE("gelu erf 3-d", "(2,3,2)", [] {
  return gradcheck([](const Inputs& x) { return gelu(x[0], GeluForm::Erf); }, {rnd({2, 3, 2}, 2, -3, 3)});
});

// ---- selection

GRADCHECK_CASE("where same shape", "(3,4) ? (3,4) : (3,4)", [] {
  const Mask c = pattern({3, 4}, 7);
  return gradcheck([c](const Inputs& x) { return attnlab::where(c, x[0], x[1]); }, {rnd({3, 4}, 1), rnd({3, 4}, 2)});
});
GRADCHECK_CASE("where broadcast", "(3,1) ? (4) : (2,1,1)", [] {
  const Mask c = pattern({3, 1}, 7);
  return gradcheck([c](const Inputs& x) { return attnlab::where(c, x[0], x[1]); }, {rnd({4}, 1), rnd({2, 1, 1}, 2)});
});
GRADCHECK_CASE("where reuse", "(2,3) ? a : a * a", [] {
  const Mask c = pattern({2, 3}, 8);
  return gradcheck([c](const Inputs& x) { return attnlab::where(c, x[0], mul(x[0], x[0])); }, {rnd({2, 3}, 1)});
});
GRADCHECK_CASE("masked_fill same shape", "(3,4) mask (3,4)", [] {
  // A moderate fill: the gradient does not depend on it, and -1e9 would swamp the finite
  // differences of <f(x), g> in rounding error.
  const Mask m = pattern({3, 4}, 7);
  return gradcheck([m](const Inputs& x) { return masked_fill(x[0], m, -5.0); }, {rnd({3, 4}, 1)});
});
GRADCHECK_CASE("masked_fill broadcast mask", "(2,3,4) mask (3,1)", [] {
  const Mask m = pattern({3, 1}, 7);
  return gradcheck([m](const Inputs& x) { return masked_fill(x[0], m, 0.0); }, {rnd({2, 3, 4}, 1)});
});

}  // namespace attnlab::cases
