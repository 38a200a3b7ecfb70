// The offset-tuple tagging task of lesson 07 and its per-digit accuracy.
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "core/error.hpp"
#include "nn/data/offset_tuples.hpp"

using namespace attnlab;
using namespace attnlab::nn::data;

TEST_CASE("offset_tuples: distinct strings, each position tagged with the ordered tuple of earlier tokens") {
  Generator gen(3);
  const Tagged t = offset_tuples(200, 9, 6, {1, 4}, -100, gen);
  REQUIRE(t.size() == 200);
  REQUIRE(t.length() == 9);
  CHECK(offset_tuple_classes(6, 2) == 36);
  std::set<std::string> seen;
  for (std::size_t s = 0; s < t.size(); ++s) {
    std::string key;
    for (std::size_t i = 0; i < 9; ++i) {
      const Index x = t.inputs(s, i);
      CHECK((x >= 0 && x < 6));
      key += char('0' + x);
      if (i < 4) CHECK(t.targets(s, i) == -100);  // the tuple would reach before the start
      else CHECK(t.targets(s, i) == t.inputs(s, i - 1) * 6 + t.inputs(s, i - 4));  // x[i-1] the high digit
    }
    seen.insert(key);
  }
  CHECK(seen.size() == 200);
}

TEST_CASE("offset_tuples: order of the offsets is the order of the digits, and bad arguments are named") {
  Generator g1(9), g2(9);
  const Tagged a = offset_tuples(20, 6, 4, {2, 3}, -1, g1), b = offset_tuples(20, 6, 4, {3, 2}, -1, g2);
  CHECK(a.inputs == b.inputs);  // the same strings from the same seed
  CHECK(a.targets(0, 5) == a.inputs(0, 3) * 4 + a.inputs(0, 2));
  CHECK(b.targets(0, 5) == b.inputs(0, 2) * 4 + b.inputs(0, 3));
  Generator g(1);
  CHECK_THROWS_WITH_AS(offset_tuples(10, 6, 1, {1}, -1, g), doctest::Contains("offset_tuples"), ShapeError);
  CHECK_THROWS_WITH_AS(offset_tuples(10, 6, 6, {}, -1, g), doctest::Contains("no offsets"), ShapeError);
  CHECK_THROWS_WITH_AS(offset_tuples(10, 6, 6, {6}, -1, g), doctest::Contains("up to 6"), ShapeError);
  CHECK_THROWS_WITH_AS(offset_tuples(10, 6, 6, {0, 2}, -1, g), doctest::Contains("down to 0"), ShapeError);
  CHECK_THROWS_AS(offset_tuples(20, 2, 2, {1}, -1, g), ShapeError);  // only 4 strings of 2 binary digits
}

TEST_CASE("tuple_digit_accuracy: the share of tagged positions where each digit is right") {
  IndexArray targets = {{-1, 2 * 6 + 3, 5 * 6 + 1}, {-1, 0 * 6 + 4, 1 * 6 + 1}};
  IndexArray predictions = {{7, 2 * 6 + 0, 5 * 6 + 1}, {9, 3 * 6 + 4, 2 * 6 + 0}};
  const std::vector<double> r = tuple_digit_accuracy(predictions, targets, 6, 2, -1);
  REQUIRE(r.size() == 2);
  CHECK(r[0] == doctest::Approx(2.0 / 4));  // high digits right at (0,1) and (0,2)
  CHECK(r[1] == doctest::Approx(2.0 / 4));  // low digits right at (0,2) and (1,1)
  CHECK_THROWS_WITH_AS(tuple_digit_accuracy(IndexArray{{1, 2}}, targets, 6, 2, -1), doctest::Contains("differ in shape"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(tuple_digit_accuracy(IndexArray{{1, 2}}, IndexArray{{-1, -1}}, 6, 2, -1),
                       doctest::Contains("no tagged position"), ShapeError);
}
