// Reading heads by their attention patterns (lessons/kit/heads): the offset score on a hand-made
// pattern, and the head it picks among several.
#include <doctest/doctest.h>

#include <xtensor/xview.hpp>

#include "lessons/kit/heads.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

TEST_CASE("head_for_offset: the head with the most weight one position back") {
  Array<float> w = xt::zeros<float>({1, 3, 5, 5});
  for (std::size_t t = 0; t < 5; ++t) {
    w(0, 0, t, t) = 1.0f;                     // head 0: itself
    w(0, 1, t, t == 0 ? 0 : t - 1) = 1.0f;    // head 1: the previous token
  }
  w(0, 2, 3, 1) = 1.0f;
  const std::vector<double> m = offset_mass(w, 1);
  REQUIRE(m.size() == 3);
  CHECK(m[0] == doctest::Approx(0.0));
  CHECK(m[1] == doctest::Approx(1.0));
  const std::vector<Tensor<float>> layers{Tensor<float>(Array<float>(xt::view(w, xt::all(), xt::range(0, 2)))),
                                          Tensor<float>(w)};
  const HeadPick previous = head_for_offset(layers, 1);
  CHECK(previous.layer == 0);
  CHECK(previous.head == 1);
  CHECK(previous.weights(2, 1) == doctest::Approx(1.0));
  CHECK_THROWS_AS(offset_mass(xt::zeros<float>({3, 3}), 1), ShapeError);
}

TEST_CASE("side_mass: the weight left and right of each query, from a given place on; bad shapes named") {
  Array<float> w = xt::zeros<float>({1, 2, 4, 4});
  for (std::size_t i = 0; i < 4; ++i) {
    w(0, 0, i, i == 0 ? 0 : i - 1) = 1.0f;  // head 0: the token before (query 0: itself)
    w(0, 1, i, 0) = 0.5f;                   // head 1: half on the first token, half on the last
    w(0, 1, i, 3) += 0.5f;
  }
  const SideMass all = side_mass(w), after_first = side_mass(w, 1);
  CHECK(all.left[0] == doctest::Approx(3.0));   // queries 1, 2, 3
  CHECK(all.right[0] == doctest::Approx(0.0));
  CHECK(all.left[1] == doctest::Approx(1.5));   // queries 1, 2, 3 on token 0
  CHECK(all.right[1] == doctest::Approx(1.5));  // queries 0, 1, 2 on token 3
  CHECK(after_first.left[0] == doctest::Approx(2.0));  // query 1's key is token 0: left out
  CHECK(after_first.left[1] == doctest::Approx(0.0));
  CHECK(after_first.right[1] == doctest::Approx(1.0));  // queries 1 and 2 on token 3
  CHECK_THROWS_WITH_AS(side_mass(xt::zeros<float>({1, 2, 4, 3})), doctest::Contains("side_mass"), ShapeError);
}
