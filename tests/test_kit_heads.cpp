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
