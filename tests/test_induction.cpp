// The induction score of attention heads (nn/attention/induction): on hand-made patterns.
#include <doctest/doctest.h>

#include <xtensor/xview.hpp>

#include "nn/attention/induction.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using attnlab::nn::induction_mass;

TEST_CASE("induction_mass: weight on the token after the previous occurrence") {
  // ids  A B C A B   (positions 0..4). Position 3 (A) last saw A at 0: its induction target is 1.
  // Position 4 (B) last saw B at 1: target 2. Positions 1 and 2 have no earlier occurrence.
  const IndexArray ids = {{5, 6, 7, 5, 6}};
  Array<float> w = xt::zeros<float>({1, 3, 5, 5});
  for (std::size_t t = 0; t < 5; ++t) {
    w(0, 0, t, t) = 1.0f;                     // head 0: itself
    w(0, 1, t, t == 0 ? 0 : t - 1) = 1.0f;    // head 1: the previous token
  }
  w(0, 2, 3, 1) = 1.0f;  // head 2: induction at position 3
  w(0, 2, 4, 2) = 0.5f;  //         and half of it at position 4
  w(0, 2, 4, 4) = 0.5f;
  const std::vector<double> m = induction_mass(w, ids);
  REQUIRE(m.size() == 3);
  CHECK(m[0] == doctest::Approx(0.0));
  CHECK(m[1] == doctest::Approx(0.0));
  CHECK(m[2] == doctest::Approx((1.0 + 0.5) / 2));
  CHECK(induction_mass(w, ids, 4)[2] == doctest::Approx(0.5));  // position 4 alone
  // A repeated token right away (A A): the target is the query itself.
  const IndexArray twice = {{5, 5}};
  Array<float> self = xt::zeros<float>({1, 1, 2, 2});
  self(0, 0, 0, 0) = self(0, 0, 1, 1) = 1.0f;
  CHECK(induction_mass(self, twice)[0] == doctest::Approx(1.0));
  // No repeats: nothing to score.
  CHECK(induction_mass(xt::zeros<float>({1, 2, 3, 3}), IndexArray{{1, 2, 3}})[1] == 0.0);
  CHECK_THROWS_AS(induction_mass(w, IndexArray{{5, 6, 7}}), ShapeError);

  // Only the queries from first_query on count.
  CHECK(induction_mass(w, ids, 5)[2] == 0.0);
}
