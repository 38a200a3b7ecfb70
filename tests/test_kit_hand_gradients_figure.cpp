// lessons/kit/hand_gradients_figure: a row of two panels per gradient, and bad input named.
#include <doctest/doctest.h>

#include <stdexcept>

#include "lessons/kit/hand_gradients_figure.hpp"
#include "plots/error.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

TEST_CASE("hand_gradients_figure: two panels per gradient; empty input, shapes that differ and wrong ticks refused") {
  const xt::xarray<double> a{{1.0, -2.0, 0.5}, {0.0, 3.0, -1.0}};
  const HandGradient dq{"dQ", a, a + 1e-12, {"q1", "q2"}, {"c1", "c2", "c3"}};
  const plots::Figure fig = hand_gradients_figure("Gradients", {dq, dq});
  CHECK(fig.rows() == 2);
  CHECK(fig.cols() == 2);
  CHECK(fig.panel(1, 0).plot() != nullptr);
  CHECK(fig.panel(1, 1).plot() != nullptr);
  CHECK_THROWS_WITH_AS(hand_gradients_figure("none", {}), doctest::Contains("hand_gradients_figure: no gradients"),
                       std::invalid_argument);
  const HandGradient off{"dK", a, xt::xarray<double>{1.0, 2.0}, {"k1", "k2"}, {"c1", "c2", "c3"}};
  CHECK_THROWS_WITH_AS(hand_gradients_figure("bad", {off}), doctest::Contains("hand_gradients_figure: dK by hand is (2,3)"),
                       std::invalid_argument);
  const HandGradient ticks{"dV", a, a, {"k1"}, {"c1", "c2", "c3"}};
  CHECK_THROWS_AS(hand_gradients_figure("ticks", {ticks}), plots::PlotError);
}
