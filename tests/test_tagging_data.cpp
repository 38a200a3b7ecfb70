// Tagging data sets and their baseline: the running maximum of a digit string (lesson 04), the
// shift task (lesson 05) and the bag-of-tokens rule, the best a tagger without positions can do by
// one simple rule (lesson 05).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <xtensor/xbuilder.hpp>

#include "core/error.hpp"
#include "nn/data/shift_tags.hpp"
#include "nn/data/tagged.hpp"
#include "nn/metrics.hpp"

using namespace attnlab;
using namespace attnlab::nn::data;

TEST_CASE("running_max_digits: distinct digit strings tagged with their running maximum") {
  Generator g1(5), g2(5);
  const Tagged t = running_max_digits(300, 6, g1);
  REQUIRE(t.size() == 300);
  REQUIRE(t.length() == 6);
  CHECK(t.inputs == running_max_digits(300, 6, g2).inputs);  // same seed, same strings
  std::set<std::string> strings;
  for (std::size_t r = 0; r < t.size(); ++r) {
    std::string s;
    Index largest = -1;
    for (std::size_t i = 0; i < t.length(); ++i) {
      CHECK(t.inputs(r, i) >= 0);
      CHECK(t.inputs(r, i) <= 9);
      largest = std::max(largest, t.inputs(r, i));
      CHECK(t.targets(r, i) == largest);
      s += char('0' + t.inputs(r, i));
    }
    strings.insert(s);
  }
  CHECK(strings.size() == 300);  // no string twice: a slice for training and one held out share none
}

TEST_CASE("running_max_digits: every string of one digit, and clear errors") {
  Generator gen(1);
  const Tagged all = running_max_digits(10, 1, gen);  // all ten strings of one digit exist
  CHECK(std::set<Index>(all.inputs.begin(), all.inputs.end()).size() == 10);
  CHECK(all.targets == all.inputs);
  CHECK_THROWS_WITH_AS(running_max_digits(11, 1, gen), doctest::Contains("running_max_digits"), ShapeError);
  CHECK_THROWS_AS(running_max_digits(0, 4, gen), ShapeError);
  CHECK_THROWS_AS(running_max_digits(4, 0, gen), ShapeError);
}

TEST_CASE("most_frequent_other_tags: the most frequent of the other tokens, lowest id on ties") {
  const IndexArray inputs = {{2, 2, 5, 5, 5}, {1, 0, 3, 3, 7}};
  const IndexArray expected = {{5, 5, 2, 2, 2},   // position 2 sees 2, 2, 5, 5: a tie, the lower id
                               {3, 3, 0, 0, 3}};  // position 2 sees 1, 0, 3, 7: all once, the lowest id
  CHECK(most_frequent_other_tags(inputs, 8) == expected);
  CHECK_THROWS_WITH_AS(most_frequent_other_tags(inputs, 6), doctest::Contains("outside the vocabulary"), ShapeError);
  const IndexArray one_token = xt::zeros<Index>({2, 1});  // no other token to count
  CHECK_THROWS_WITH_AS(most_frequent_other_tags(one_token, 4), doctest::Contains("most_frequent_other_tags"), ShapeError);
}

TEST_CASE("shift_tags: the token k places to the left, '_' before it, splits that share no string, the bag rule") {
  Generator gen(7);
  const ShiftTags t = shift_tags(3, 8, 16, 200, 50, gen);
  REQUIRE(t.train.size() == 200);
  REQUIRE(t.test.size() == 50);
  REQUIRE(t.test_long.size() == 50);
  CHECK(t.train.length() == 8);
  CHECK(t.test_long.length() == 16);
  CHECK(t.vocab.size() == Vocab::num_specials + 11);
  const Index filler = t.vocab.id("_");
  for (const Tagged* set : {&t.train, &t.test, &t.test_long})
    for (std::size_t r = 0; r < set->size(); ++r)
      for (std::size_t i = 0; i < set->length(); ++i)
        CHECK(set->targets(r, i) == (i < 3 ? filler : set->inputs(r, i - 3)));
  std::set<std::vector<Index>> train_rows;
  for (std::size_t r = 0; r < t.train.size(); ++r)
    train_rows.insert(std::vector<Index>(&t.train.inputs(r, 0), &t.train.inputs(r, 0) + 8));
  for (std::size_t r = 0; r < t.test.size(); ++r)
    CHECK(train_rows.count(std::vector<Index>(&t.test.inputs(r, 0), &t.test.inputs(r, 0) + 8)) == 0);
  // The example is the first test string, as text: its tags read back from the vocabulary.
  CHECK(t.example.source.size() == 8);
  CHECK(t.example.target == "___" + t.example.source.substr(0, 5));
  CHECK(t.vocab.id(std::string(1, t.example.source[0])) == t.test.inputs(0, 0));
  CHECK(t.bag_rule == doctest::Approx(nn::accuracy(most_frequent_other_tags(t.test.inputs, t.vocab.size()), t.test.targets)));
  CHECK(t.bag_rule < 0.5);  // a bag cannot say which token sits 3 places to the left
  Generator again(7);
  CHECK(shift_tags(3, 8, 16, 200, 50, again).test_long.inputs == t.test_long.inputs);  // the same draws
  CHECK_THROWS_WITH_AS(shift_tags(0, 8, 16, 10, 10, gen), doctest::Contains("shift_tags"), ShapeError);
  CHECK_THROWS_WITH_AS(shift_tags(8, 8, 16, 10, 10, gen), doctest::Contains("the shift must be 1..length-1 = 7, got 8"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(shift_tags(3, 8, 4, 10, 10, gen), doctest::Contains("long length 4"), ShapeError);
  CHECK_THROWS_WITH_AS(shift_tags(3, 8, 16, 0, 10, gen), doctest::Contains("shift_tags"), ShapeError);
  CHECK_THROWS_AS(shift_tags(1, 2, 2, 200, 10, gen), ShapeError);  // only 100 strings of two digits exist
}
