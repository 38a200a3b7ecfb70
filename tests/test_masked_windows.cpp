// Masked-LM windows over a stream (where every target sits, padding, fixed held-out masks) and the
// counted cloze baselines (unigram and neighbour probabilities by hand, scores, bad input).
#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <stdexcept>

#include "helpers.hpp"
#include <xtensor/xadapt.hpp>

#include "nn/data/masked_windows.hpp"

using namespace attnlab;
using namespace attnlab::nn::data;

namespace {
constexpr ClozeIds kIds{/*cls=*/5, /*mask=*/4, /*first=*/6, /*end=*/12};

std::vector<Index> stream_of(std::size_t n, Generator& gen) {
  std::vector<Index> s;
  for (std::size_t i = 0; i < n; ++i) s.push_back(i % 9 == 8 ? Index(2) : kIds.first + Index(gen.below(6)));  // 2: <eos>
  return s;
}
}  // namespace

TEST_CASE("masked_windows: [CLS] first, every target where the stream has it") {
  Generator gen(1);
  const std::vector<Index> stream = stream_of(200, gen);
  Generator mask_gen(2);
  const MaskedWindows b = masked_windows(kIds, stream, {0, 17, 150}, 16, mask_gen);
  REQUIRE(b.ids.shape() == std::vector<std::size_t>{3, 16});
  CHECK_FALSE(b.real.has_value());  // every window full
  REQUIRE(b.size() > 0);
  REQUIRE(b.positions.size() == b.size());
  REQUIRE(b.choices.size() == b.size());
  REQUIRE(b.at.size() == b.size());
  for (std::size_t r = 0; r < 3; ++r) CHECK(b.ids(r, 0) == kIds.cls);
  for (std::size_t k = 0; k < b.size(); ++k) {
    const std::size_t row = std::size_t(b.positions(k)) / 16, col = std::size_t(b.positions(k)) % 16;
    CHECK(col >= 1);
    CHECK(b.targets(k) == stream[b.at[k]]);  // the true token
    CHECK(b.at[k] == std::vector<std::size_t>{0, 17, 150}[row] + col - 1);
    CHECK(b.targets(k) >= kIds.first);  // <eos> is never a target
    if (b.choices[k] == MaskChoice::masked) CHECK(b.ids(row, col) == kIds.mask);
    if (b.choices[k] == MaskChoice::kept) CHECK(b.ids(row, col) == b.targets(k));
  }
}

TEST_CASE("masked_windows: a window at the stream's end is padded and marked") {
  Generator gen(3);
  const std::vector<Index> stream = stream_of(40, gen);
  Generator mask_gen(4);
  const MaskedWindows b = masked_windows(kIds, stream, {0, 35}, 10, mask_gen);
  REQUIRE(b.real.has_value());
  const Mask& real = b.real->mask();
  for (std::size_t l = 0; l < 10; ++l) CHECK(real(0, l));
  for (std::size_t l = 0; l < 10; ++l) CHECK(real(1, l) == (l <= 5));  // [CLS] and the 5 last tokens
  for (std::size_t l = 6; l < 10; ++l) CHECK(b.ids(1, l) == 0);
}

TEST_CASE("held_out_windows: the same targets every time, side by side, batched") {
  Generator gen(5);
  const std::vector<Index> stream = stream_of(500, gen);
  const auto a = held_out_windows(kIds, stream, 11, 23, 8, 99), again = held_out_windows(kIds, stream, 11, 23, 8, 99);
  const auto other = held_out_windows(kIds, stream, 11, 23, 8, 100);
  REQUIRE(a.size() == 3);  // 23 windows in batches of 8
  CHECK(a[2].ids.shape()[0] == 7);
  CHECK(count_targets(a) == count_targets(again));
  for (std::size_t i = 0; i < a.size(); ++i) {
    CHECK(a[i].ids == again[i].ids);
    CHECK(a[i].targets == again[i].targets);
  }
  CHECK(a[0].ids != other[0].ids);
  CHECK(a[1].at.front() >= 8 * 10);  // the ninth window starts at 80
}

TEST_CASE("masked_windows and random_starts: bad input names the function and the values") {
  Generator gen(6);
  const std::vector<Index> stream = stream_of(30, gen);
  CHECK_THROWS_WITH_AS(masked_windows(kIds, stream, {30}, 8, gen), doctest::Contains("masked_windows: start 30"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(masked_windows(kIds, stream, {0}, 1, gen), doctest::Contains("context 1"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(masked_windows({7, 4, 6, 12}, stream, {0}, 8, gen), doctest::Contains("[CLS] (7)"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(random_starts(3, 30, 30, gen), doctest::Contains("random_starts: a stream of 30"), std::invalid_argument);
  for (std::size_t s : random_starts(50, 30, 8, gen)) CHECK(s < 22);
}

TEST_CASE("CountedCloze: unigram and neighbour probabilities as counted by hand") {
  // a b a c a b a, with ids a = 6, b = 7, c = 8 in [6, 9); the specials below 6 never counted.
  const std::vector<Index> train = {6, 7, 6, 8, 6, 7, 6, 2};
  const CountedCloze counts(train, 6, 9);
  // counts +1 each: a 5, b 3, c 2 of 10
  CHECK(counts.unigram(6) == doctest::Approx(0.5));
  CHECK(counts.unigram(7) == doctest::Approx(0.3));
  CHECK(counts.unigram(8) == doctest::Approx(0.2));
  CHECK(counts.unigram(2) == 0.0);
  CHECK(counts.most_frequent() == 6);
  // between a and a: b twice, c once (n = 3); with alpha = 1: (2 + 0.3) / 4
  CHECK(counts.neighbours(6, 7, 6, 1.0) == doctest::Approx(2.3 / 4));
  CHECK(counts.neighbours(6, 8, 6, 1.0) == doctest::Approx(1.2 / 4));
  // never seen between b and b: the unigram; between b and c only a once: (0 + 2 * 0.2) / (1 + 2) for c
  CHECK(counts.neighbours(7, 8, 7, 2.0) == doctest::Approx(0.2));
  CHECK(counts.neighbours(7, 8, 8, 2.0) == doctest::Approx(0.4 / 3));
  double total = 0;
  for (Index c = 6; c < 9; ++c) total += counts.neighbours(6, c, 6, 0.5);
  CHECK(total == doctest::Approx(1.0));
}

TEST_CASE("CountedCloze: scores over windows; the neighbours beat the unigram on a patterned stream") {
  std::vector<Index> train;
  for (int i = 0; i < 300; ++i) train.insert(train.end(), {6, 7, 8, 9, 10, 11, 6, 6});  // each token fixed by its neighbours
  const CountedCloze counts(train, 6, 12);
  const ClozeIds ids{5, 4, 6, 12};
  const auto set = held_out_windows(ids, train, 17, 40, 16, 1);
  const ClozeScores uni = counts.score_unigram(set), nb = counts.score_neighbours(set, train, 1.0);
  CHECK(uni.accuracy < 0.5);
  CHECK(nb.accuracy > 0.95);
  CHECK(nb.loss < uni.loss);
  CHECK(uni.count_by_choice[1] + uni.count_by_choice[2] + uni.count_by_choice[3] == count_targets(set));
  CHECK(counts.best_alpha(set, train, {0.01, 100.0}) == 0.01);
  CHECK_THROWS_AS(counts.best_alpha(set, train, {}), std::invalid_argument);
  CHECK_THROWS_WITH_AS(counts.score_neighbours(set, {6, 7}, 1.0), doctest::Contains("past the stream"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(CountedCloze({6, 13}, 6, 12), doctest::Contains("training id 13 at 1"),
                       std::invalid_argument);
}

TEST_CASE("ClozeTally: means by choice, zeros when empty") {
  ClozeTally t;
  CHECK(t.scores().accuracy == 0.0);
  t.add(std::log(0.5), true, MaskChoice::masked);
  t.add(std::log(0.25), false, MaskChoice::masked);
  t.add(std::log(1.0), true, MaskChoice::kept);
  const ClozeScores s = t.scores();
  CHECK(s.loss == doctest::Approx((std::log(2.0) + std::log(4.0)) / 3));
  CHECK(s.accuracy == doctest::Approx(2.0 / 3));
  CHECK(s.accuracy_on(MaskChoice::masked) == doctest::Approx(0.5));
  CHECK(s.accuracy_on(MaskChoice::kept) == doctest::Approx(1.0));
  CHECK(s.count_by_choice[std::size_t(MaskChoice::random)] == 0);
}

// ----------------------------------------------------------------------------- the cloze corpus

#include "nn/data/cloze_corpus.hpp"

namespace {
FortuneSplits tiny_splits() {
  FortuneSplits s;
  s.train = {{"ab", "x"}, {"ba ab", "y"}, {"abba", "x"}, {"b", "y"}, {"aaa", "x"}};
  s.validation = {{"ab c", "x"}, {"b", "y"}};
  s.test = {{"a\nb", "y"}};
  return s;
}
}  // namespace

TEST_CASE("cloze_corpus: streams end entries with <eos>; [MASK] and [CLS] after the characters") {
  const ClozeCorpus c = cloze_corpus(tiny_splits());
  CHECK(c.ids.first == Index(Vocab::num_specials));
  CHECK(c.ids.end == c.ids.first + 3);  // 'a', 'b', ' '
  CHECK(c.ids.mask == c.ids.end);
  CHECK(c.ids.cls == c.ids.end + 1);
  CHECK(c.train.size() == 2 + 5 + 4 + 1 + 3 + 5);  // characters and one <eos> each
  CHECK(c.train[2] == Vocab::eos);
  CHECK(c.validation[3] == Vocab::unk);  // 'c' is not a training character
  const std::vector<Index> e = entry_ids(c, "ab");
  REQUIRE(e.size() == 4);
  CHECK(e.front() == c.ids.cls);
  CHECK(e.back() == Vocab::eos);
  CHECK(&one_line_entry(c.split.test, 1, 10) == &c.split.test.front());  // none on one line: the first
  CHECK(one_line_entry(c.split.train, 4, 4).text == "abba");
  CHECK_THROWS_WITH_AS(cloze_corpus({}), doctest::Contains("cloze_corpus"), std::invalid_argument);
}

TEST_CASE("topic_set and topic_batch: balanced, interleaved, cut to the context, padded") {
  const ClozeCorpus c = cloze_corpus(tiny_splits());
  const TopicSet s = topic_set(c, c.split.train, {"x", "y"});
  REQUIRE(s.size() == 4);  // two of each: y has two entries
  CHECK(s.labels == IndexArray{0, 1, 0, 1});
  CHECK(s.entries[1] == entry_ids(c, "ba ab"));
  CHECK(topic_set(c, c.split.train, {"x", "y"}, 1).size() == 2);
  CHECK_THROWS_WITH_AS(topic_set(c, c.split.train, {"x", "z"}), doctest::Contains("'z'"), std::invalid_argument);
  const TopicBatch b = topic_batch(s, {1, 0}, 4, nullptr);  // "ba ab" cut to [CLS] b a ' '
  REQUIRE(b.ids.shape() == std::vector<std::size_t>{2, 4});
  CHECK(b.ids(0, 1) == s.entries[1][1]);
  CHECK(b.ids(0, 3) == s.entries[1][3]);
  CHECK(b.ids(1, 3) == Vocab::eos);  // "ab": [CLS] a b <eos>, whole
  CHECK(b.labels == IndexArray{1, 0});
  const TopicBatch short_rows = topic_batch(s, {3}, 10, nullptr);  // "b": [CLS] b <eos>
  CHECK(short_rows.ids.shape()[1] == 3);
  Generator gen(1);
  for (int k = 0; k < 20; ++k) {  // a random window keeps [CLS] and 3 consecutive tokens
    const TopicBatch r = topic_batch(s, {1}, 4, &gen);
    CHECK(r.ids(0, 0) == c.ids.cls);
    bool found = false;
    for (std::size_t st = 1; st + 3 <= s.entries[1].size(); ++st)
      found = found || (r.ids(0, 1) == s.entries[1][st] && r.ids(0, 2) == s.entries[1][st + 1] && r.ids(0, 3) == s.entries[1][st + 2]);
    CHECK(found);
  }
  CHECK_THROWS_WITH_AS(topic_batch(s, {4}, 4, nullptr), doctest::Contains("row 4"), std::invalid_argument);
  const Array<float> f = character_frequencies(s, c.vocab.size(), 100);
  CHECK(f(0, std::size_t(c.ids.first)) == doctest::Approx(0.5));  // "ab": a and b
  CHECK(xt::sum(xt::view(f, 1))() == doctest::Approx(1.0));
}

TEST_CASE("measure_masking: BERT's 15 % and 80/10/10 over many windows; the same draws give the same shares") {
  Generator gen(11);
  const std::vector<Index> stream = stream_of(5000, gen);
  Generator a(12), b(12);
  const MaskingShares m = measure_masking(kIds, stream, 33, 400, a), again = measure_masking(kIds, stream, 33, 400, b);
  CHECK(m.chosen == doctest::Approx(0.15).epsilon(0.1));  // round(0.15 n) of the 28 or 29 eligible tokens a window
  CHECK(m.masked == doctest::Approx(0.8).epsilon(0.05));
  CHECK(m.random == doctest::Approx(0.1).epsilon(0.25));
  CHECK(m.kept == doctest::Approx(0.1).epsilon(0.25));
  CHECK(m.masked + m.random + m.kept == doctest::Approx(1.0));
  CHECK(m.chosen == again.chosen);
  CHECK(m.kept == again.kept);
  CHECK_THROWS_WITH_AS(measure_masking(kIds, stream, 33, 0, a), doctest::Contains("measure_masking: 0 windows"),
                       std::invalid_argument);
}

TEST_CASE("topic_subset: per_topic of each topic, interleaved, nested for one seed, errors named") {
  TopicSet s;
  std::vector<Index> labels;
  for (Index i = 0; i < 30; ++i) {  // topic 0 has 20 entries, topic 1 has 10: entry i is {i}
    s.entries.push_back({i});
    labels.push_back(i % 3 == 2 ? 1 : 0);
  }
  s.labels = xt::adapt(labels, {labels.size()});
  const TopicSet few = topic_subset(s, 2, 3, 7), more = topic_subset(s, 2, 8, 7), other = topic_subset(s, 2, 8, 8);
  REQUIRE(few.size() == 6);
  REQUIRE(more.size() == 16);
  for (std::size_t i = 0; i < more.size(); ++i) {
    CHECK(more.labels(i) == Index(i % 2));  // interleaved topic by topic
    CHECK(s.labels(std::size_t(more.entries[i][0])) == more.labels(i));  // each entry keeps its label
  }
  for (std::size_t i = 0; i < few.size(); ++i) CHECK(few.entries[i] == more.entries[i]);  // nested
  std::set<Index> drawn;
  for (const auto& e : more.entries) drawn.insert(e[0]);
  CHECK(drawn.size() == 16);  // no entry twice
  bool differs = false;
  for (std::size_t i = 0; i < more.size(); ++i) differs = differs || more.entries[i] != other.entries[i];
  CHECK(differs);  // another seed, another draw
  CHECK_THROWS_WITH_AS(topic_subset(s, 2, 11, 7), doctest::Contains("topic 1 has 10"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(topic_subset(s, 2, 0, 7), doctest::Contains("topic_subset: 0 entries"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(topic_subset(s, 1, 2, 7), doctest::Contains("label 1"), std::invalid_argument);
}

TEST_CASE("reading_windows: [CLS] then the stream as it is, context - 1 apart, wrapping; bad input named") {
  const std::vector<Index> stream = {6, 7, 8, 9, 10};
  const IndexArray w = reading_windows(kIds.cls, stream, 3, 3);  // two tokens a window: 6 7 | 8 9 | 10 6
  REQUIRE(w.shape() == std::vector<std::size_t>{3, 3});
  const std::vector<Index> expected = {5, 6, 7, 5, 8, 9, 5, 10, 6};
  CHECK(std::vector<Index>(w.begin(), w.end()) == expected);
  CHECK_THROWS_WITH_AS(reading_windows(kIds.cls, {}, 3, 3), doctest::Contains("reading_windows: 3 windows of context 3 over a stream of 0"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(reading_windows(kIds.cls, stream, 0, 3), doctest::Contains("reading_windows: 0 windows"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(reading_windows(kIds.cls, stream, 2, 1), doctest::Contains("context 1"), std::invalid_argument);
}
