#include "nn/translation_scores.hpp"

#include <stdexcept>
#include <string>

#include "nn/data/translation_task.hpp"
#include "nn/metrics.hpp"

namespace attnlab::nn {

namespace {

void check_sizes(const char* fn, std::size_t a, std::size_t b, const char* what_a, const char* what_b) {
  if (a != b)
    throw std::invalid_argument(std::string(fn) + ": " + std::to_string(a) + " " + what_a + " for " + std::to_string(b) +
                                " " + what_b);
  if (a == 0) throw std::invalid_argument(std::string(fn) + ": no sentences");
}

}  // namespace

double bleu_of(const std::vector<data::Sequence>& translations, const data::EncodedPairs& split) {
  check_sizes("bleu_of", translations.size(), split.target.size(), "translations", "references");
  return corpus_bleu(translations, split.target).score;
}

double mean_words(const std::vector<data::Sequence>& sentences) {
  if (sentences.empty()) throw std::invalid_argument("mean_words: no sentences");
  double n = 0;
  for (const auto& s : sentences) n += double(s.size());
  return n / double(sentences.size());
}

std::size_t same_count(const std::vector<data::Sequence>& a, const std::vector<data::Sequence>& b) {
  check_sizes("same_count", a.size(), b.size(), "sentences", "sentences");
  std::size_t same = 0;
  for (std::size_t i = 0; i < a.size(); ++i) same += a[i] == b[i];
  return same;
}

BestBeam best_beam(const BeamSweep& sweep, const data::EncodedPairs& split) {
  if (sweep.beam.empty()) throw std::invalid_argument("best_beam: the sweep has no beam");
  BestBeam best{0, 0.0, -1.0};
  for (const auto& [key, translations] : sweep.beam) {  // ordered by (width, alpha)
    const double b = bleu_of(translations, split);
    if (b > best.bleu + 1e-12) best = {key.first, key.second, b};
  }
  return best;
}

std::vector<Mask> true_alignments(const std::vector<data::TranslationPair>& pairs) {
  std::vector<Mask> out;
  out.reserve(pairs.size());
  for (const data::TranslationPair& p : pairs) out.push_back(data::alignment_matrix(p));
  return out;
}

AlignmentCounts same_order_counts(const std::vector<Mask>& truths) {
  AlignmentCounts c;
  for (const Mask& t : truths) c += count_links(Mask(xt::eye<bool>(t.shape(0))), t, t);
  return c;
}

xt::xarray<double> error_rates(const std::vector<std::vector<AlignmentCounts>>& counts) {
  if (counts.empty() || counts.front().empty()) throw std::invalid_argument("error_rates: no layers or no heads");
  const std::size_t L = counts.size(), H = counts.front().size();
  xt::xarray<double> out = xt::zeros<double>({L, H});
  for (std::size_t l = 0; l < L; ++l) {
    if (counts[l].size() != H)
      throw std::invalid_argument("error_rates: layer " + std::to_string(l) + " has " + std::to_string(counts[l].size()) +
                                  " heads, layer 0 has " + std::to_string(H));
    for (std::size_t h = 0; h < H; ++h) out(l, h) = counts[l][h].error_rate();
  }
  return out;
}

std::size_t first_with_words(const std::vector<data::TranslationPair>& pairs, std::size_t lo, std::size_t hi) {
  for (std::size_t i = 0; i < pairs.size(); ++i)
    if (data::word_count(pairs[i]) >= lo && data::word_count(pairs[i]) <= hi) return i;
  throw std::invalid_argument("first_with_words: none of the " + std::to_string(pairs.size()) + " pairs has " +
                              std::to_string(lo) + " to " + std::to_string(hi) + " words");
}

std::size_t longest_pair(const std::vector<data::TranslationPair>& pairs) {
  if (pairs.empty()) throw std::invalid_argument("longest_pair: no pairs");
  std::size_t pick = 0;
  for (std::size_t i = 0; i < pairs.size(); ++i)
    if (data::word_count(pairs[i]) > data::word_count(pairs[pick])) pick = i;
  return pick;
}

}  // namespace attnlab::nn
