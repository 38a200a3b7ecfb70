// lessons/kit/forward_backward_time: forward and backward timed apart, round by round, the warm-up
// not counted, the inputs reset between rounds, and bad input named.
#include <doctest/doctest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

#include "core/ops.hpp"
#include "lessons/kit/forward_backward_time.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using doctest::Contains;

TEST_CASE("forward_backward_medians: each phase timed apart, every round reset, the warm-up not counted") {
  const Tensor<float> x(Array<float>{1.0f, 2.0f, 3.0f}, true);
  int forwards = 0, resets = 0;
  // The forward sleeps 50 ms, its backward (an op recorded by hand) 2 ms: the medians tell them apart.
  const auto forward = [&] {
    ++forwards;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    return record<float>("slow_identity", Array<float>(x.value()), {&x}, [](Node<float>& n) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
      n.add_grad(0, Array<float>(n.grad));
    });
  };
  const ForwardBackwardTime t = forward_backward_medians(forward, Array<float>{1.0f, 1.0f, 1.0f}, [&] {
    CHECK(x.grad()(0) == 1.0f);  // one backward since the last reset
    x.zero_grad();
    ++resets;
  }, 3);
  CHECK(forwards == 4);  // one warm-up and three counted rounds
  CHECK(resets == 4);
  CHECK(t.forward_ms >= 49.0);
  CHECK(t.backward_ms >= 1.9);
  CHECK(t.backward_ms < t.forward_ms);
}

TEST_CASE("forward_backward_medians: rounds below 1 and an upstream of the wrong shape are named") {
  const Tensor<float> x(Array<float>{1.0f, 2.0f}, true);
  const auto forward = [&] { return mul(x, 2.0f); };
  CHECK_THROWS_WITH_AS(forward_backward_medians(forward, Array<float>{1.0f, 1.0f}, {}, 0),
                       Contains("forward_backward_medians: rounds must be at least 1, got 0"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(forward_backward_medians(forward, Array<float>{1.0f}, {}, 1),
                       Contains("the upstream gradient (1) is not the shape of the output (2)"), std::invalid_argument);
}
