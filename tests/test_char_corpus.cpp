// The fortunes corpus as characters (nn/data/char_corpus): splits and caps, the encoding and the
// training stream, the characters a model predicts, random windows, and the errors.
#include <doctest/doctest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "nn/data/char_corpus.hpp"

using namespace attnlab;
using namespace attnlab::nn::data;
using attnlab::testing::contains;
using attnlab::testing::error_of;

namespace {
std::vector<Fortune> made_up(std::size_t n) {
  std::vector<Fortune> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back({"entry " + std::to_string(i) + " says hi", "made-up"});
  return out;
}
}  // namespace

TEST_CASE("char_corpus: disjoint splits, the training vocabulary, the stream") {
  const CharCorpus c = char_corpus(made_up(60), {0.1, 3, 0, 0});
  CHECK(c.split.validation.size() == 6);
  CHECK(c.split.test.size() == 6);
  CHECK(c.split.train.size() == 48);
  std::set<std::string> seen;
  for (const auto* s : {&c.split.train, &c.split.validation, &c.split.test})
    for (const Fortune& f : *s) CHECK(seen.insert(f.text).second);  // no entry in two splits
  REQUIRE(c.train.size() == 48);
  CHECK(c.train[0] == encode_fortune(c.vocab, c.split.train[0].text));
  CHECK(c.train[0].size() == c.split.train[0].text.size());
  // The stream: <bos> text <eos> for every training entry, in order.
  std::size_t expected = 0;
  for (const auto& e : c.train) expected += e.size() + 2;
  REQUIRE(c.stream.size() == expected);
  CHECK(c.stream.front() == Vocab::bos);
  CHECK(c.stream[c.train[0].size() + 1] == Vocab::eos);
  CHECK(c.stream[1] == c.train[0][0]);
  CHECK(predicted_characters(c.train) == expected - c.train.size());  // every character and each <eos>
  // The same seed gives the same split; the caps keep the first entries of each split.
  const CharCorpus again = char_corpus(made_up(60), {0.1, 3, 0, 0});
  CHECK(again.split.validation[0].text == c.split.validation[0].text);
  const CharCorpus small = char_corpus(made_up(60), {0.1, 3, 5, 2});
  CHECK(small.train.size() == 5);
  CHECK(small.validation.size() == 2);
  CHECK(small.test.size() == 2);
  CHECK(small.split.train[0].text == c.split.train[0].text);
}

TEST_CASE("char_corpus: errors name the function and the value") {
  CHECK(contains(error_of<std::invalid_argument>([] { char_corpus(made_up(10), {0.5, 1, 0, 0}); }), "char_corpus"));
  CHECK(contains(error_of<std::invalid_argument>([] { char_corpus(made_up(10), {-0.1, 1, 0, 0}); }), "-0.1"));
  CHECK(contains(error_of<std::invalid_argument>([] { char_corpus({}, {0.1, 1, 0, 0}); }), "no training entry"));
}

TEST_CASE("random_windows: targets are the inputs shifted by one") {
  std::vector<Index> stream(50);
  for (std::size_t i = 0; i < stream.size(); ++i) stream[i] = Index(i);
  Generator gen(5);
  const auto [ids, targets] = random_windows(stream, 8, 6, gen);
  REQUIRE(ids.shape()[0] == 8);
  REQUIRE(ids.shape()[1] == 6);
  std::set<Index> starts;
  for (std::size_t b = 0; b < 8; ++b) {
    starts.insert(ids(b, 0));
    for (std::size_t t = 0; t < 6; ++t) {
      CHECK(targets(b, t) == ids(b, t) + 1);
      if (t > 0) CHECK(ids(b, t) == ids(b, t - 1) + 1);
    }
    CHECK(targets(b, 5) < Index(stream.size()));
  }
  CHECK(starts.size() > 1);  // drawn, not fixed
  const std::string why = error_of<std::invalid_argument>([&] { random_windows(std::vector<Index>(7), 1, 6, gen); });
  CHECK(contains(why, "random_windows"));
  CHECK(contains(why, "7"));
}
