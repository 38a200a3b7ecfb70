// Metrics: accuracy with an ignored pad id, exact match, per-token accuracy, corpus BLEU on
// hand-computed cases, and alignment accuracy of attention maps.
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "nn/data/vocab.hpp"
#include "nn/metrics.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using Words = std::vector<std::string>;

namespace {
Words w(const std::string& s) { return data::word_tokens(s); }
}  // namespace

TEST_CASE("accuracy counts matches and skips the ignore id") {
  const IndexArray pred = {{1, 2, 3, 0}, {4, 4, 0, 0}};
  const IndexArray tgt = {{1, 2, 5, 0}, {4, 7, 0, 0}};
  // All 8 positions: matches at (0,0) (0,1) (0,3) (1,0) (1,2) (1,3) = 6 / 8.
  CHECK(accuracy(pred, tgt) == doctest::Approx(6.0 / 8.0));
  // Ignoring pad 0: real targets 1 2 5 4 7, matches 1 2 4 = 3 / 5.
  CHECK(accuracy(pred, tgt, 0) == doctest::Approx(3.0 / 5.0));
  CHECK_THROWS_AS(accuracy(pred, IndexArray{{1, 2, 3, 0}}), ShapeError);
  CHECK_THROWS_AS(accuracy(IndexArray{{0, 0}}, IndexArray{{0, 0}}, 0), ShapeError);  // nothing to score
}

TEST_CASE("argmax_last and accuracy_from_scores") {
  const Array<float> scores = {{{0.1f, 2.0f, 0.3f}, {5.0f, 1.0f, 1.0f}}, {{0.0f, 0.0f, 9.0f}, {1.0f, 3.0f, 2.0f}}};
  const IndexArray am = argmax_last(scores);
  CHECK(am == IndexArray{{1, 0}, {2, 1}});
  CHECK(argmax_last(Array<double>{1.0, 3.0, 3.0})() == 1);  // first index on ties
  CHECK(accuracy_from_scores(scores, IndexArray{{1, 0}, {0, 1}}) == doctest::Approx(0.75));
  CHECK(accuracy_from_scores(scores, IndexArray{{1, 0}, {0, 1}}, 1) == doctest::Approx(0.5));  // targets 0, 0 left
  CHECK_THROWS_AS(argmax_last(Array<double>::from_shape({2, 0})), ShapeError);
}

TEST_CASE("exact_match and token_accuracy over sequences") {
  const std::vector<std::string> hyp = {"1997-03-03", "2001-09-11", "1950-01-0"};
  const std::vector<std::string> ref = {"1997-03-03", "2001-09-12", "1950-01-01"};
  CHECK(exact_match(hyp, ref) == doctest::Approx(1.0 / 3.0));
  // Characters: 10/10 + 9/10 + 9/10 (the short hypothesis misses the last) = 28 / 30.
  CHECK(token_accuracy(hyp, ref) == doctest::Approx(28.0 / 30.0));
  const std::vector<std::vector<Index>> h = {{4, 5, 6}, {4, 5, 6, 7}}, r = {{4, 5, 6}, {4, 5, 6}};
  CHECK(exact_match(h, r) == doctest::Approx(0.5));  // the extra token breaks the match
  CHECK(token_accuracy(h, r) == doctest::Approx(1.0));  // but not the position-wise score
  CHECK_THROWS_AS(exact_match(h, std::vector<std::vector<Index>>{{1}}), ShapeError);
  CHECK_THROWS_AS(exact_match(std::vector<std::string>{}, std::vector<std::string>{}), ShapeError);
  CHECK_THROWS_AS(token_accuracy(std::vector<std::string>{""}, std::vector<std::string>{""}), ShapeError);
}

TEST_CASE("exact_match_rows over padded batches") {
  const IndexArray tgt = {{5, 6, 2, 0}, {7, 2, 0, 0}, {8, 9, 9, 2}};
  const IndexArray pred = {{5, 6, 2, 4}, {7, 3, 0, 0}, {8, 9, 9, 2}};
  // Row 0 differs only under padding: a match when pad 0 is ignored. Row 1 misses its <eos>.
  CHECK(exact_match_rows(pred, tgt, 0) == doctest::Approx(2.0 / 3.0));
  CHECK(exact_match_rows(pred, tgt) == doctest::Approx(1.0 / 3.0));
  CHECK_THROWS_AS(exact_match_rows(pred, IndexArray{5, 6}), ShapeError);
  CHECK_THROWS_AS(exact_match_rows(IndexArray{1, 2}, IndexArray{1, 2}), ShapeError);
}

TEST_CASE("BLEU: a perfect match scores 1") {
  // 6 words: every n-gram matches, p_n = 6/6, 5/5, 4/4, 3/3; c = r = 6, BP = 1.
  const auto b = sentence_bleu(w("the cat sat on the mat"), w("the cat sat on the mat"));
  CHECK(b.score == doctest::Approx(1.0));
  CHECK(b.brevity_penalty == doctest::Approx(1.0));
  CHECK(b.matches == std::vector<std::size_t>{6, 5, 4, 3});
  CHECK(b.totals == std::vector<std::size_t>{6, 5, 4, 3});
}

TEST_CASE("BLEU: brevity penalty") {
  // Hypothesis "the cat sat on the" is a prefix of the 6-word reference: p_n = 5/5, 4/4, 3/3, 2/2,
  // all precisions 1, but c = 5 <= r = 6, so BP = exp(1 - 6/5) = exp(-0.2) = 0.818731.
  const auto b = sentence_bleu(w("the cat sat on the"), w("the cat sat on the mat"));
  for (double p : b.precisions) CHECK(p == doctest::Approx(1.0));
  CHECK(b.brevity_penalty == doctest::Approx(std::exp(-0.2)));
  CHECK(b.score == doctest::Approx(0.8187307530779819));
  // A longer hypothesis pays no brevity penalty (its cost is in the precisions).
  CHECK(sentence_bleu(w("the cat sat on the mat"), w("the cat sat on the")).brevity_penalty == doctest::Approx(1.0));
  // An empty hypothesis scores 0, not NaN.
  const auto e = sentence_bleu(Words{}, w("the cat"));
  CHECK(e.score == 0.0);
  CHECK(e.brevity_penalty == 0.0);
}

TEST_CASE("BLEU: clipped counts (Papineni's 'the the the' example)") {
  // Hypothesis: "the" x 7. Reference "the cat is on the mat" holds "the" twice, so the unigram
  // count is clipped to 2: p_1 = 2/7 (not 7/7). No bigram "the the" in the reference: p_2 = 0/6.
  const auto b = sentence_bleu(w("the the the the the the the"), w("the cat is on the mat"));
  CHECK(b.matches[0] == 2);
  CHECK(b.totals[0] == 7);
  CHECK(b.precisions[0] == doctest::Approx(2.0 / 7.0));
  CHECK(b.precisions[1] == 0.0);
  CHECK(b.score == 0.0);  // no smoothing: any zero precision gives 0
  // Add-one smoothing on n >= 2: p = 2/7, (0+1)/(6+1), (0+1)/(5+1), (0+1)/(4+1); c = 7 > r = 6, BP = 1.
  // BLEU = (2/7 * 1/7 * 1/6 * 1/5)^(1/4) = (2/1470)^(1/4) = 0.192056.
  const auto s = sentence_bleu(w("the the the the the the the"), w("the cat is on the mat"), BleuSmoothing::add_one);
  CHECK(s.precisions[1] == doctest::Approx(1.0 / 7.0));
  CHECK(s.precisions[3] == doctest::Approx(1.0 / 5.0));
  CHECK(s.brevity_penalty == doctest::Approx(1.0));
  CHECK(s.score == doctest::Approx(std::pow(2.0 / 1470.0, 0.25)));
  CHECK(s.score == doctest::Approx(0.19205612637498934));
}

TEST_CASE("BLEU: corpus BLEU pools counts, unlike the mean of sentence BLEUs") {
  // Sentence A: "a b c d e f" = reference: matches/totals 6/6, 5/5, 4/4, 3/3, BLEU_A = 1.
  // Sentence B: "a b x c d" vs "a b y c d": unigrams a b c d match, 4/5; bigrams ab, cd of
  // ab bx xc cd, 2/4; trigrams abx bxc xcd, 0/3; 4-grams 0/2; BLEU_B = 0.
  // Mean of sentence BLEUs = (1 + 0) / 2 = 0.5.
  // Corpus: p = 10/11, 7/9, 4/7, 3/5; c = r = 11, BP = 1;
  // BLEU = (10*7*4*3 / (11*9*7*5))^(1/4) = (840/3465)^(1/4) = 0.701688.
  const std::vector<Words> hyps = {w("a b c d e f"), w("a b x c d")};
  const std::vector<Words> refs = {w("a b c d e f"), w("a b y c d")};
  const double a = sentence_bleu(hyps[0], refs[0]).score, b = sentence_bleu(hyps[1], refs[1]).score;
  CHECK(a == doctest::Approx(1.0));
  CHECK(b == 0.0);
  const auto c = corpus_bleu(hyps, refs);
  CHECK(c.matches == std::vector<std::size_t>{10, 7, 4, 3});
  CHECK(c.totals == std::vector<std::size_t>{11, 9, 7, 5});
  CHECK(c.score == doctest::Approx(std::pow(840.0 / 3465.0, 0.25)));
  CHECK(c.score == doctest::Approx(0.7016879391277371));
  CHECK(std::abs(c.score - 0.5 * (a + b)) > 0.1);
}

TEST_CASE("BLEU: corpus brevity penalty uses total lengths, and token ids work too") {
  // Lengths 4 vs 3 and 2 vs 3: c = 6, r = 6, BP = 1, although sentence 2 alone is short.
  const std::vector<std::vector<Index>> hyps = {{5, 6, 7, 8}, {5, 6}};
  const std::vector<std::vector<Index>> refs = {{5, 6, 7}, {5, 6, 9}};
  const auto b = corpus_bleu(hyps, refs, BleuSmoothing::none, 2);
  CHECK(b.brevity_penalty == doctest::Approx(1.0));
  // Unigrams 3/4 + 2/2 = 5/6, bigrams 2/3 + 1/1 = 3/4; BLEU-2 = sqrt(5/6 * 3/4) = sqrt(0.625).
  CHECK(b.score == doctest::Approx(std::sqrt(0.625)));
  CHECK(sentence_bleu(hyps[1], refs[1], BleuSmoothing::none, 2).brevity_penalty == doctest::Approx(std::exp(1.0 - 1.5)));
  CHECK_THROWS_AS(corpus_bleu(hyps, std::vector<std::vector<Index>>{{1}}), ShapeError);
  CHECK_THROWS_AS(corpus_bleu(std::vector<std::vector<Index>>{}, std::vector<std::vector<Index>>{}), ShapeError);
  CHECK_THROWS_AS(corpus_bleu(hyps, refs, BleuSmoothing::none, 0), ShapeError);
}

TEST_CASE("alignment_accuracy scores where attention peaks") {
  // 3 target words over 4 source columns (the last an <eos>); true alignment 2, 0, 1.
  const Array<double> attn = {{0.1, 0.1, 0.7, 0.1}, {0.6, 0.2, 0.1, 0.1}, {0.5, 0.3, 0.1, 0.1}, {0, 0, 0, 1}};
  CHECK(alignment_accuracy(attn, {2, 0, 1}) == doctest::Approx(2.0 / 3.0));
  CHECK(alignment_accuracy(Array<float>(attn), {2, 0, 0}) == doctest::Approx(1.0));
  CHECK_THROWS_AS(alignment_accuracy(attn, {2, 0, 9}), ShapeError);
  CHECK_THROWS_AS(alignment_accuracy(attn, {0, 0, 0, 0, 0}), ShapeError);
  CHECK_THROWS_AS(alignment_accuracy(Array<double>{1.0, 2.0}, {0}), ShapeError);
}

TEST_CASE("bleu_by_group: corpus BLEU of each group, groups in increasing order") {
  // Groups 7 and 3 (given out of order): group 3 holds sentences 1 and 3, group 7 sentence 0 and 2.
  const std::vector<Words> hyps = {w("a b c d"), w("x y"), w("a b c e"), w("x z")};
  const std::vector<Words> refs = {w("a b c d"), w("x y"), w("a b c d"), w("x y")};
  const auto g = bleu_by_group(hyps, refs, {7, 3, 7, 3}, BleuSmoothing::none, 2);
  REQUIRE(g.size() == 2);
  CHECK(g[0].group == 3);
  CHECK(g[0].sentences == 2);
  CHECK(g[1].group == 7);
  // Each group equals corpus_bleu on its own sentences.
  const auto three = corpus_bleu(std::vector<Words>{hyps[1], hyps[3]}, std::vector<Words>{refs[1], refs[3]},
                                 BleuSmoothing::none, 2);
  CHECK(g[0].bleu.score == doctest::Approx(three.score));
  // Group 3: unigrams 2/2 + 1/2 = 3/4, bigrams 1/1 + 0/1 = 1/2: sqrt(3/8).
  CHECK(g[0].bleu.score == doctest::Approx(std::sqrt(3.0 / 8.0)));
  // Group 7: unigrams 7/8, bigrams 5/6.
  CHECK(g[1].bleu.score == doctest::Approx(std::sqrt(7.0 / 8.0 * 5.0 / 6.0)));
  CHECK_THROWS_AS(bleu_by_group(hyps, refs, {1, 2}), ShapeError);
}

TEST_CASE("log_loss: the mean of -ln p(target), floored at 1e-30, and its errors") {
  const Array<double> p = {{0.5, 0.5, 0.0}, {0.25, 0.25, 0.5}};
  CHECK(log_loss(p, IndexArray{1, 2}) == doctest::Approx(std::log(2.0)));
  CHECK(log_loss(p, IndexArray{2, 2}) == doctest::Approx((-std::log(1e-30) + std::log(2.0)) / 2));  // 69 nats, not inf
  CHECK_THROWS_WITH(log_loss(p, IndexArray{1}), doctest::Contains("log_loss: expected probabilities (N, C)"));
  CHECK_THROWS_WITH(log_loss(p, IndexArray{1, 3}), doctest::Contains("class ids must lie in 0 .. 2, got 3 at 1"));
  CHECK_THROWS_WITH(log_loss(Array<double>(xt::zeros<double>({0, 3})), IndexArray(xt::zeros<Index>({0}))),
                    doctest::Contains("log_loss"));
}

TEST_CASE("confusion_rates: rows are the true classes and sum to 1, the diagonal is the accuracy by class") {
  const IndexArray truth{0, 0, 0, 1, 1, 2}, predicted{0, 1, 0, 1, 1, 0};
  const Array<double> r = confusion_rates(truth, predicted, 4);
  CHECK(r.shape() == std::vector<std::size_t>{4, 4});
  CHECK(r(0, 0) == doctest::Approx(2.0 / 3));
  CHECK(r(0, 1) == doctest::Approx(1.0 / 3));
  CHECK(r(1, 1) == 1.0);
  CHECK(r(2, 0) == 1.0);
  CHECK(xt::sum(xt::view(r, 3))() == 0.0);  // class 3 has no example
  CHECK_THROWS_WITH(confusion_rates(truth, IndexArray{0, 1}, 4), doctest::Contains("confusion_rates: predictions"));
  CHECK_THROWS_WITH(confusion_rates(truth, predicted, 2), doctest::Contains("class ids must lie in 0 .. 1"));
}

TEST_CASE("paired_comparison: who alone gets an example right, the gap and its chance scale; shapes named") {
  const IndexArray labels{0, 1, 2, 0, 1, 2, 0, 1};
  const IndexArray a{0, 1, 2, 0, 1, 0, 0, 0}, b{0, 1, 0, 1, 0, 2, 0, 1};  // a: 6 right, b: 5
  const PairedComparison p = paired_comparison(a, b, labels);
  CHECK(p.only_a == 3);  // examples 2, 3, 4
  CHECK(p.only_b == 2);  // examples 5, 7
  CHECK(p.gap == doctest::Approx(6.0 / 8 - 5.0 / 8));
  CHECK(p.noise == doctest::Approx(std::sqrt(5.0) / 8));
  const PairedComparison same = paired_comparison(a, a, labels);
  CHECK(same.only_a == 0);
  CHECK(same.gap == 0.0);
  CHECK(same.noise == 0.0);
  CHECK_THROWS_WITH_AS(paired_comparison(a, IndexArray{0, 1}, labels),
                       doctest::Contains("paired_comparison: predictions (8) and (2) of labels (8)"), ShapeError);
  CHECK_THROWS_AS(paired_comparison(IndexArray(xt::zeros<Index>({0})), IndexArray(xt::zeros<Index>({0})),
                                    IndexArray(xt::zeros<Index>({0}))), ShapeError);
}
