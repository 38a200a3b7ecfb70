// Metrics the lessons report: accuracy (with an ignored pad id), exact match and per-token
// accuracy over sequences, corpus BLEU (also per group of sentences, e.g. by length), and how
// often attention points at the true alignment (nn/alignment.hpp: the alignment error rate).
#pragma once

#include <cstddef>
#include <limits>
#include <string>
#include <vector>

#include "core/array.hpp"

namespace attnlab::nn {

inline constexpr Index kNoIgnore = std::numeric_limits<Index>::min();

// Fraction of positions where predictions == targets (same shape), skipping positions whose
// target is ignore_id (pass the pad id for padded sequences). ShapeError when nothing is left.
double accuracy(const IndexArray& predictions, const IndexArray& targets, Index ignore_id = kNoIgnore);

// The confusion matrix as rates (classes, classes): entry (t, p) is the share of the examples of
// true class t predicted as p, so each row sums to 1 (a class with no example keeps a row of 0)
// and the diagonal is the accuracy by class. Throws on different shapes or a class id outside
// 0 .. classes-1.
Array<double> confusion_rates(const IndexArray& targets, const IndexArray& predictions, std::size_t classes);

// Two classifiers' predictions `a` and `b` of the same examples' `labels`, compared example by
// example: how many only a gets right, how many only b, the gap accuracy(a) - accuracy(b), and its
// chance scale. With n examples on which the two disagree, chance alone moves the gap by about
// sqrt(n) examples, so noise = sqrt(only_a + only_b) / N: a gap beyond twice it is more than chance
// on this test set. ShapeError naming paired_comparison when the three differ in shape or are empty.
struct PairedComparison {
  std::size_t only_a = 0, only_b = 0;
  double gap = 0, noise = 0;
};
PairedComparison paired_comparison(const IndexArray& a, const IndexArray& b, const IndexArray& labels);

// Mean cross-entropy in nats, -1/N sum_i ln p(i, target_i), of class probabilities (N, C) against
// class ids (N). Each probability is floored at 1e-30, so one confident mistake costs 69 nats
// rather than making the mean infinite. Throws on other shapes or a class id outside 0 .. C-1.
template <class T>
double log_loss(const Array<T>& probabilities, const IndexArray& targets);

// Index of the largest score along the last axis: (..., C) -> (...). First index on ties.
template <class T>
IndexArray argmax_last(const Array<T>& scores);

// accuracy(argmax_last(scores), targets, ignore_id) for logits (..., C) and class ids (...).
template <class T>
double accuracy_from_scores(const Array<T>& scores, const IndexArray& targets, Index ignore_id = kNoIgnore);

// Fraction of hypotheses equal to their reference in full (S: std::string, a token-id
// sequence, or a word list).
template <class S>
double exact_match(const std::vector<S>& hypotheses, const std::vector<S>& references);

// Rows of (B, L) arrays that match at every position whose target is not ignore_id: the
// sequence-level accuracy of a teacher-forced batch (targets y <eos> padded with <pad>).
double exact_match_rows(const IndexArray& predictions, const IndexArray& targets, Index ignore_id = kNoIgnore);

// Position-wise matches over all reference tokens: sum_i #{t : hyp_i[t] == ref_i[t]} / sum_i |ref_i|.
// A hypothesis shorter than its reference misses the rest; extra hypothesis tokens cost nothing
// here (exact_match and BLEU's brevity/precision see them).
template <class S>
double token_accuracy(const std::vector<S>& hypotheses, const std::vector<S>& references);

// BLEU (Papineni et al. 2002), one reference per hypothesis, pooled over the corpus as
// sacrebleu's corpus_bleu does (without its tokenizer, and on a 0..1 scale instead of 0..100):
//   p_n = sum_i clipped matches of n-grams / sum_i n-grams in hypothesis i,
//         clipped: an n-gram counts at most as often as it occurs in the reference;
//   BP  = 1 if c > r else exp(1 - r / c)   (c, r: total hypothesis, reference lengths; BP = 0 if c = 0);
//   BLEU = BP * exp(mean_n log p_n), n = 1..max_order, and 0 if any p_n = 0.
// add_one smoothing (Lin & Och 2004; sacrebleu's "add-k" with k = 1) uses (m + 1) / (t + 1) for n >= 2.
enum class BleuSmoothing { none, add_one };

struct BleuScore {
  double score = 0;  // 0..1
  std::vector<double> precisions;
  std::vector<std::size_t> matches, totals;  // per order n = 1..max_order, before smoothing
  double brevity_penalty = 0;
  std::size_t hypothesis_length = 0, reference_length = 0;
};

template <class Tok>
BleuScore corpus_bleu(const std::vector<std::vector<Tok>>& hypotheses, const std::vector<std::vector<Tok>>& references,
                      BleuSmoothing smoothing = BleuSmoothing::none, int max_order = 4);

template <class Tok>
BleuScore sentence_bleu(const std::vector<Tok>& hypothesis, const std::vector<Tok>& reference,
                        BleuSmoothing smoothing = BleuSmoothing::none, int max_order = 4) {
  return corpus_bleu<Tok>({hypothesis}, {reference}, smoothing, max_order);
}

// Corpus BLEU of each group of sentences: sentence i belongs to group groups[i] (its source length,
// say, for BLEU against sentence length). One entry per group present, in increasing group order.
struct GroupBleu {
  std::size_t group = 0, sentences = 0;
  BleuScore bleu;
};

template <class Tok>
std::vector<GroupBleu> bleu_by_group(const std::vector<std::vector<Tok>>& hypotheses,
                                     const std::vector<std::vector<Tok>>& references,
                                     const std::vector<std::size_t>& groups,
                                     BleuSmoothing smoothing = BleuSmoothing::none, int max_order = 4);

// Fraction of target words whose attention row peaks on the source word they translate:
// attention (T, S) with rows = target positions (queries), columns = source positions (keys);
// alignment[j] = true source position of target word j. Rows past alignment.size() (an <eos>
// step) are not scored.
template <class T>
double alignment_accuracy(const Array<T>& attention, const std::vector<Index>& alignment);

}  // namespace attnlab::nn
