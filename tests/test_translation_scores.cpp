// nn/translation_scores: what lesson 08 reads off its translations and attention (BLEU of a split,
// mean words, agreement of two decodings, the best swept beam, true alignments, the same-order
// guess, AER tables and the sentences it shows).
#include <doctest/doctest.h>

#include <stdexcept>
#include <vector>

#include "nn/data/translation_task.hpp"
#include "nn/translation_scores.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using attnlab::testing::contains;
using attnlab::testing::error_of;

namespace {

data::EncodedPairs references() {
  data::EncodedPairs p;
  p.source = {{4, 5, 6, 7}, {5, 6, 7, 8}};
  p.target = {{4, 5, 6, 7}, {8, 7, 6, 5}};
  return p;
}

data::TranslationPair pair_of(std::vector<Index> alignment) {
  data::TranslationPair p;
  for (std::size_t i = 0; i < alignment.size(); ++i) p.source += (i ? " w" : "w"), p.target += (i ? " v" : "v");
  p.alignment = std::move(alignment);
  return p;
}

}  // namespace

TEST_CASE("bleu_of is corpus BLEU against the split's targets; 1 for the references themselves") {
  const data::EncodedPairs split = references();
  CHECK(bleu_of(split.target, split) == doctest::Approx(1.0));
  const std::vector<data::Sequence> half = {{4, 5, 6, 7}, {4, 4, 4, 4}};
  CHECK(bleu_of(half, split) == doctest::Approx(corpus_bleu(half, split.target).score));
  CHECK(bleu_of(half, split) < 1.0);
  CHECK(contains(error_of<std::invalid_argument>([&] { bleu_of({{4}}, split); }), "bleu_of: 1 translations for 2"));
  CHECK(contains(error_of<std::invalid_argument>([&] { bleu_of({}, data::EncodedPairs{}); }), "bleu_of: no sentences"));
}

TEST_CASE("mean_words and same_count") {
  CHECK(mean_words({{1, 2, 3}, {1}, {}}) == doctest::Approx(4.0 / 3));
  CHECK(contains(error_of<std::invalid_argument>([] { mean_words({}); }), "mean_words"));
  CHECK(same_count({{1, 2}, {3}, {4}}, {{1, 2}, {3, 3}, {4}}) == 2);
  CHECK(contains(error_of<std::invalid_argument>([] { same_count({{1}}, {{1}, {2}}); }), "same_count: 1 sentences for 2"));
}

TEST_CASE("best_beam: the highest BLEU of the sweep, the narrower width and smaller alpha on ties") {
  const data::EncodedPairs split = references();
  const std::vector<data::Sequence> wrong = {{4, 4, 4, 4}, {5, 5, 5, 5}}, half = {{4, 5, 6, 7}, {4, 4, 4, 4}};
  BeamSweep sweep;
  sweep.greedy = wrong;
  sweep.beam[{1, 0.0}] = wrong;
  sweep.beam[{1, 1.0}] = half;
  sweep.beam[{2, 0.0}] = split.target;
  sweep.beam[{2, 1.0}] = split.target;  // a tie: the first of them wins
  sweep.beam[{3, 0.0}] = half;
  const BestBeam b = best_beam(sweep, split);
  CHECK(b.width == 2);
  CHECK(b.alpha == 0.0);
  CHECK(b.bleu == doctest::Approx(1.0));
  sweep.beam.erase({2, 0.0}), sweep.beam.erase({2, 1.0});
  CHECK(best_beam(sweep, split).width == 1);
  CHECK(best_beam(sweep, split).alpha == 1.0);  // half beats wrong; width 3's equal half comes later
  CHECK(contains(error_of<std::invalid_argument>([&] { best_beam(BeamSweep{}, split); }), "best_beam"));
}

TEST_CASE("true_alignments, same_order_counts and error_rates") {
  // Two sentences: the first in the same order, the second reversed (3 words).
  const std::vector<Mask> truths = true_alignments({pair_of({0, 1, 2}), pair_of({2, 1, 0})});
  REQUIRE(truths.size() == 2);
  CHECK(truths[1](0, 2));
  CHECK(!truths[1](0, 0));
  const AlignmentCounts c = same_order_counts(truths);
  CHECK(c.hypothesis == 6);
  CHECK(c.sure == 6);
  CHECK(c.hit_sure == 3 + 1);  // all of the first; the middle word of the reversed one
  CHECK(c.error_rate() == doctest::Approx(1.0 - 8.0 / 12));
  CHECK_THROWS_AS(same_order_counts({Mask::from_shape({2, 3})}), ShapeError);

  std::vector<std::vector<AlignmentCounts>> counts(2, std::vector<AlignmentCounts>(3));
  counts[1][2] = c;
  for (auto& layer : counts)
    for (auto& head : layer)
      if (head.hypothesis == 0) head.hypothesis = head.sure = 4;  // no hit: AER 1
  const xt::xarray<double> aer = error_rates(counts);
  CHECK(aer.shape(0) == 2);
  CHECK(aer.shape(1) == 3);
  CHECK(aer(0, 0) == doctest::Approx(1.0));
  CHECK(aer(1, 2) == doctest::Approx(c.error_rate()));
  counts[1].pop_back();
  CHECK(contains(error_of<std::invalid_argument>([&] { error_rates(counts); }), "layer 1 has 2 heads, layer 0 has 3"));
  CHECK(contains(error_of<std::invalid_argument>([] { error_rates({}); }), "error_rates"));
}

TEST_CASE("first_with_words and longest_pair pick sentences by their number of words") {
  const std::vector<data::TranslationPair> pairs = {pair_of({0, 1}), pair_of({0, 2, 1, 3}), pair_of({1, 0, 2}),
                                                    pair_of({3, 2, 1, 0})};
  CHECK(first_with_words(pairs, 3, 4) == 1);
  CHECK(first_with_words(pairs, 3, 3) == 2);
  CHECK(longest_pair(pairs) == 1);  // the first of the two longest
  CHECK(contains(error_of<std::invalid_argument>([&] { first_with_words(pairs, 5, 9); }),
                 "first_with_words: none of the 4 pairs has 5 to 9 words"));
  CHECK(contains(error_of<std::invalid_argument>([] { longest_pair({}); }), "longest_pair"));
}
