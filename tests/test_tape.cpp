// The tape: creation, backward order, accumulation, freeing, errors.
#include <doctest/doctest.h>

#include "core/ops.hpp"

using namespace attnlab;
using TD = Tensor<double>;

TEST_CASE("a tensor used twice receives the sum of both contributions") {
  TD a(Array<double>{1.0, 2.0, 3.0}, true);
  TD y = mul(a, a);  // d/da a^2 = 2a
  y.backward(Array<double>{1.0, 1.0, 1.0});
  CHECK(a.grad() == Array<double>{2.0, 4.0, 6.0});
}
