// lessons/kit/late_change: how much a series moved over its last tenth, a small share in words,
// and bad input named.
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "lessons/kit/late_change.hpp"
#include "tests/helpers.hpp"

using namespace attnlab::lessons;
using attnlab::testing::error_of;

TEST_CASE("late_change: from the entry at nine tenths to the end, as a share of the end") {
  std::vector<double> loss(20, 4.0);
  loss[18] = 3.0, loss[19] = 2.0;  // entry 18 = 20 * 9 / 10
  CHECK(late_change(loss, loss.back()) == doctest::Approx(0.5));   // fell from 3 to 2
  CHECK(late_change(loss, 4.0) == doctest::Approx(-0.25));         // rose from 3 to an end of 4
  CHECK(late_change({5.0}, 5.0) == 0.0);                           // one entry: itself
  CHECK(error_of<std::invalid_argument>([] { late_change({}, 1.0); }) ==
        "late_change: a series of 0 values ending at 1 (needs values and a nonzero end)");
  CHECK(error_of<std::invalid_argument>([] { late_change({1.0, 2.0}, 0.0); }) ==
        "late_change: a series of 2 values ending at 0 (needs values and a nonzero end)");
}

TEST_CASE("small_percent: three decimals, or less than 0.001%") {
  CHECK(small_percent(0.00014) == "0.014%");
  CHECK(small_percent(0.5) == "50.000%");
  CHECK(small_percent(9e-6) == "less than 0.001%");
  CHECK(small_percent(0.0) == "less than 0.001%");
}
