// What a translation lesson reads off its models' translations and attention, but does not teach:
//
//   bleu_of(translations, split)     corpus BLEU-4 on words against split.target, 0 to 1
//   mean_words(sentences)            words per sentence
//   same_count(a, b)                 sentences two decodings translate alike
//   best_beam(sweep, split)          the (width, alpha) of a beam sweep with the highest BLEU
//   true_alignments(pairs)           every pair's true link matrix, (target words, source words)
//   same_order_counts(truths)        the links of the guess "target word j translates source word j"
//   error_rates(counts)              AER of every [layer][head] of a HeadAlignment, as (layers, heads)
//   first_with_words(pairs, lo, hi)  a sentence of a given length; longest_pair(pairs): the longest
//
// Translations are nn::translate's: the generated ids before the first <eos>.
#pragma once

#include <cstddef>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xbuilder.hpp>

#include "nn/alignment.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/translation.hpp"
#include "nn/translate.hpp"

namespace attnlab::nn {

// std::invalid_argument naming the function when the sizes differ or there are no sentences.
double bleu_of(const std::vector<data::Sequence>& translations, const data::EncodedPairs& split);
double mean_words(const std::vector<data::Sequence>& sentences);
std::size_t same_count(const std::vector<data::Sequence>& a, const std::vector<data::Sequence>& b);

// The swept (width, alpha) whose translations score the highest BLEU on split, in the sweep's order
// (narrower widths first, then smaller alphas), a later one winning only by more than 1e-12.
// std::invalid_argument naming the function for an empty sweep or a split of another size.
struct BestBeam {
  std::size_t width = 0;
  double alpha = 0.0, bleu = 0.0;
};
BestBeam best_beam(const BeamSweep& sweep, const data::EncodedPairs& split);

std::vector<Mask> true_alignments(const std::vector<data::TranslationPair>& pairs);

// Link counts of the identity alignment (no reordering) against each truth, pooled: the AER a
// word aligner must beat in a language that reorders. ShapeError naming the truth that is not square.
AlignmentCounts same_order_counts(const std::vector<Mask>& truths);

// (layers, heads) of counts[l][h].error_rate(); std::invalid_argument naming the function when the
// layers have different numbers of heads or there are none.
xt::xarray<double> error_rates(const std::vector<std::vector<AlignmentCounts>>& counts);

// The first pair of lo to hi words (both included); std::invalid_argument naming the function and
// the range when there is none.
std::size_t first_with_words(const std::vector<data::TranslationPair>& pairs, std::size_t lo, std::size_t hi);
// The first of the pairs with the most words; std::invalid_argument naming the function for none.
std::size_t longest_pair(const std::vector<data::TranslationPair>& pairs);

}  // namespace attnlab::nn
