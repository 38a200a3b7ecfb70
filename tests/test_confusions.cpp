// nn::most_confused (the most frequent mistakes of a classifier), nn::first_correct_per_class (one
// right answer per class) and nn::grid_similarity (how much of a grid a table of position vectors
// holds), on cases worked out by hand.
#include <doctest/doctest.h>

#include <xtensor/xview.hpp>

#include "nn/confusions.hpp"
#include "nn/positional/grid_similarity.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using doctest::Contains;

TEST_CASE("most_confused: pairs by count, ties in class order, the examples in order, right answers left out") {
  const IndexArray targets = {0, 1, 1, 2, 2, 2, 0, 1, 2};
  const IndexArray predicted = {0, 2, 2, 1, 0, 2, 1, 0, 1};
  const std::vector<Confusion> c = most_confused(targets, predicted, 3, 10);
  REQUIRE(c.size() == 5);  // (1->2) x2, (2->1) x2, then (0->1), (1->0), (2->0) once each
  CHECK(c[0].truth == 1);
  CHECK(c[0].predicted == 2);
  CHECK(c[0].examples == std::vector<std::size_t>{1, 2});
  CHECK(c[1].truth == 2);
  CHECK(c[1].predicted == 1);
  CHECK(c[1].examples == std::vector<std::size_t>{3, 8});
  CHECK(c[2].truth == 0);
  CHECK(c[3].truth == 1);
  CHECK(c[4].examples == std::vector<std::size_t>{4});
  CHECK(most_confused(targets, predicted, 3, 1).size() == 1);
  CHECK(most_confused(targets, targets, 3, 5).empty());
}

TEST_CASE("most_confused refuses shapes that differ and class ids out of range") {
  CHECK_THROWS_WITH_AS(most_confused(IndexArray{0, 1}, IndexArray{0}, 2, 1), Contains("most_confused: needs targets and predictions of one shape"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(most_confused(IndexArray{0, 3}, IndexArray{0, 1}, 3, 1), Contains("row 1 has target 3 and prediction 1, outside 0..2"),
                       ShapeError);
}

TEST_CASE("first_correct_per_class: one right answer per class, in class order; classes without one left out") {
  const IndexArray targets = {2, 0, 1, 0, 2, 1, 0};
  const IndexArray predicted = {1, 1, 1, 0, 2, 1, 0};
  CHECK(first_correct_per_class(targets, predicted, 3) == std::vector<std::size_t>{3, 2, 4});
  CHECK(first_correct_per_class(targets, IndexArray{0, 1, 0, 1, 0, 0, 1}, 3).empty());
  CHECK(first_correct_per_class(targets, IndexArray{2, 2, 2, 2, 2, 2, 2}, 3) == std::vector<std::size_t>{0});
  CHECK_THROWS_WITH_AS(first_correct_per_class(IndexArray{0, 1}, IndexArray{0}, 2),
                       Contains("first_correct_per_class: needs targets and predictions of one shape"), ShapeError);
  CHECK_THROWS_WITH_AS(first_correct_per_class(IndexArray{0, 1}, IndexArray{0, 2}, 2),
                       Contains("first_correct_per_class: row 1 has target 1 and prediction 2, outside 0..1"), ShapeError);
}

TEST_CASE("grid_similarity: a table that encodes (row, column) has alike neighbours; cosines on the diagonal are 1") {
  // Position (r, c) of a 4 x 4 grid as (cos, sin) of r and of c on a quarter turn: neighbours differ by one small angle.
  Array<float> table = xt::zeros<float>({16, 4});
  for (std::size_t a = 0; a < 16; ++a) {
    const double r = double(a / 4) * 0.5, c = double(a % 4) * 0.5;
    table(a, 0) = float(std::cos(r)), table(a, 1) = float(std::sin(r)), table(a, 2) = float(std::cos(c)), table(a, 3) = float(std::sin(c));
  }
  const GridSimilarity g = grid_similarity(table, 4, 4);
  for (std::size_t a = 0; a < 16; ++a) CHECK(g.cosine(a, a) == doctest::Approx(1.0));
  CHECK(g.neighbours == doctest::Approx((1.0 + std::cos(0.5)) / 2));  // one pair turned by 0.5, the other equal
  CHECK(g.far < g.neighbours - 0.1);
  CHECK(g.cosine(0, 1) == doctest::Approx(g.cosine(1, 0)));
}

TEST_CASE("grid_similarity refuses a count that is not rows x cols, a zero vector and a grid too small for `far`") {
  CHECK_THROWS_WITH_AS(grid_similarity(xt::ones<float>({15, 3}), 4, 4), Contains("grid_similarity: needs 4 x 4 = 16 vectors (N, d), got (15,3)"),
                       ShapeError);
  Array<float> zero = xt::ones<float>({4, 2});
  xt::view(zero, 2) = 0.0f;
  CHECK_THROWS_WITH_AS(grid_similarity(zero, 2, 2, 2), Contains("vector 2 has norm 0"), ShapeError);
  CHECK_THROWS_WITH_AS(grid_similarity(xt::ones<float>({4, 2}), 2, 2, 3), Contains("no two positions of a 2 x 2 grid are 3 steps apart"),
                       ShapeError);
}
