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

TEST_CASE("far_mass: the weight on keys at least a distance away, averaged over every query") {
  Array<float> w = xt::zeros<float>({2, 2, 4, 4});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 4; ++i) {
      w(b, 0, i, i) = 1.0f;                 // head 0: itself, never far
      w(b, 1, i, 0) = 0.5f, w(b, 1, i, 3) += 0.5f;  // head 1: half on each end
    }
  const std::vector<double> far = far_mass(w, 2);
  REQUIRE(far.size() == 2);
  CHECK(far[0] == doctest::Approx(0.0));
  // Head 1, distance >= 2: query 0 reaches key 3 (0.5), query 1 key 3 (0.5), query 2 key 0 (0.5),
  // query 3 key 0 (0.5): 2.0 over the 4 queries of each example.
  CHECK(far[1] == doctest::Approx(0.5));
  CHECK(far_mass(w, 0)[1] == doctest::Approx(1.0));  // every key is at least 0 away
  CHECK(far_mass(w, 4)[1] == doctest::Approx(0.0));  // no key is 4 away in 4 positions
  CHECK_THROWS_AS(far_mass(xt::zeros<float>({1, 2, 3, 4}), 1), ShapeError);
  CHECK_THROWS_WITH_AS(far_mass(xt::zeros<float>({2, 3}), 1), doctest::Contains("far_mass"), ShapeError);
}

TEST_CASE("mean_distance_back: how far back each head reads; max_weight_above_diagonal: what a mask lets through") {
  Array<float> w = xt::zeros<float>({2, 2, 4, 4});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t t = 0; t < 4; ++t) {
      w(b, 0, t, t) = 1.0f;  // head 0: itself, distance 0
      w(b, 1, t, 0) = 1.0f;  // head 1: the first position, distance t
    }
  const std::vector<double> d = mean_distance_back(w);
  REQUIRE(d.size() == 2);
  CHECK(d[0] == doctest::Approx(0.0));
  CHECK(d[1] == doctest::Approx((0 + 1 + 2 + 3) / 4.0));
  CHECK(max_weight_above_diagonal({Tensor<float>(w)}) == 0.0);
  w(1, 1, 1, 3) = 0.25f;
  CHECK(max_weight_above_diagonal({Tensor<float>(w), Tensor<float>(w)}) == doctest::Approx(0.25));
  CHECK_OP_ERROR("mean_distance_back", mean_distance_back(xt::zeros<float>({1, 2, 3, 4})));
  CHECK_OP_ERROR("max_weight_above_diagonal", max_weight_above_diagonal({Tensor<float>(xt::zeros<float>({3, 3}))}));
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
