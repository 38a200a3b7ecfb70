// The associative recall task of lesson 18: every query's target is the value its key was given in
// the first half, keys are distinct within a sequence, nothing else is asked, bad sizes refused.
#include <doctest/doctest.h>

#include <map>
#include <set>

#include <xtensor/xview.hpp>

#include "nn/data/recall.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn::data;

TEST_CASE("recall: facts in the first half, each asked once in the second, targets are their values") {
  RecallConfig c;
  c.length = 40;
  c.keys = 12;
  c.values = 5;
  c.pairs = 7;
  Generator gen(3);
  const Recall r = make_recall(c, 50, gen);
  REQUIRE(r.size() == 50);
  REQUIRE(r.length() == 40);
  for (std::size_t s = 0; s < r.size(); ++s) {
    std::map<Index, Index> facts;
    std::set<Index> asked;
    for (std::size_t i = 0; i < 20; ++i) {
      CHECK(r.targets(s, i) == kNotAsked);
      if (r.keys(s, i) == 12) {
        CHECK(r.values(s, i) == 5);  // a filler shows no value
        continue;
      }
      CHECK(r.values(s, i) < 5);
      CHECK(facts.count(r.keys(s, i)) == 0);  // distinct keys
      facts[r.keys(s, i)] = r.values(s, i);
    }
    CHECK(facts.size() == 7);
    for (std::size_t i = 20; i < 40; ++i) {
      CHECK(r.values(s, i) == 5);  // the second half shows no values
      if (r.keys(s, i) == 12) {
        CHECK(r.targets(s, i) == kNotAsked);
        continue;
      }
      REQUIRE(facts.count(r.keys(s, i)) == 1);
      CHECK(r.targets(s, i) == facts[r.keys(s, i)]);
      asked.insert(r.keys(s, i));
    }
    CHECK(asked.size() == 7);  // each fact asked exactly once
  }
  const Recall two = r.rows({3, 1});
  CHECK(xt::view(two.keys, 0) == xt::view(r.keys, 3));
  CHECK(xt::view(two.targets, 1) == xt::view(r.targets, 1));
  Generator again(3);
  CHECK(make_recall(c, 50, again).keys == r.keys);  // seeded
}

TEST_CASE("recall: sizes that cannot hold the pairs are refused, naming them") {
  Generator gen(1);
  RecallConfig c;
  c.length = 10;
  c.pairs = 6;
  CHECK_THROWS_WITH_AS(make_recall(c, 1, gen), doctest::Contains("make_recall: 6 pairs need 6 distinct keys"), ShapeError);
  c.pairs = 4;
  c.keys = 3;
  CHECK_THROWS_WITH_AS(make_recall(c, 1, gen), doctest::Contains("keys 3, length 10"), ShapeError);
  c.values = 0;
  CHECK_THROWS_WITH_AS(make_recall(c, 1, gen), doctest::Contains("sizes must be positive"), ShapeError);
}
