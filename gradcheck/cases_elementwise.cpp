// Gradient checks of the elementwise ops, with broadcasting in each direction.
#include "gradcheck/cases.hpp"

namespace attnlab::cases {

GRADCHECK_CASE("add same shape", "(3,4) + (3,4)", [] {
  return gradcheck([](const Inputs& x) { return add(x[0], x[1]); }, {rnd({3, 4}, 1), rnd({3, 4}, 2)});
});
GRADCHECK_CASE("add broadcast right", "(2,3,4) + (4)", [] {
  return gradcheck([](const Inputs& x) { return add(x[0], x[1]); }, {rnd({2, 3, 4}, 1), rnd({4}, 2)});
});
GRADCHECK_CASE("add broadcast both", "(3,1) + (1,4)", [] {
  return gradcheck([](const Inputs& x) { return add(x[0], x[1]); }, {rnd({3, 1}, 1), rnd({1, 4}, 2)});
});
GRADCHECK_CASE("mul broadcast left", "(4) * (2,3,4)", [] {
  return gradcheck([](const Inputs& x) { return mul(x[0], x[1]); }, {rnd({4}, 1), rnd({2, 3, 4}, 2)});
});
GRADCHECK_CASE("mul reuse", "a * a", [] {
  return gradcheck([](const Inputs& x) { return mul(x[0], x[0]); }, {rnd({3, 4}, 1)});
});

}  // namespace attnlab::cases
