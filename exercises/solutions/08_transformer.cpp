// Solutions to exercises/08_transformer.cpp, and the mistakes the grader must catch.
#include <algorithm>
#include <cmath>
#include <vector>

#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

double noam_rate(double d_model, double warmup, double step) {
  return std::pow(d_model, -0.5) * std::min(std::pow(step, -0.5), step * std::pow(warmup, -1.5));
}
SOLUTION(noam_rate);

double noam_rate_no_scale(double d_model, double warmup, double step) {
  return std::min(std::pow(step, -0.5), step * std::pow(warmup, -1.5));
}
WRONG_ANSWER(noam_rate, noam_rate_no_scale, "forgets the d_model^-0.5");

double noam_rate_max(double d_model, double warmup, double step) {
  return std::pow(d_model, -0.5) * std::max(std::pow(step, -0.5), step * std::pow(warmup, -1.5));
}
WRONG_ANSWER(noam_rate, noam_rate_max, "the larger of the two terms: the rate never stops growing");

double noam_rate_ramp_to_one(double d_model, double warmup, double step) {
  return std::pow(d_model, -0.5) * std::min(std::pow(step, -0.5), step / warmup);
}
WRONG_ANSWER(noam_rate, noam_rate_ramp_to_one, "a ramp step / warmup up to 1, then the decay: a jump at the peak");

// The core of the alignment variants: links by row (or by column), <eos> peaks linked or not,
// and the rate as 1 - 2 hits / (|A| + |S|) or as 1 - recall.
double aer(const Array<double>& attention, const std::vector<Index>& alignment, bool by_column, bool eos_links,
           bool recall_only) {
  const std::size_t t = attention.shape()[0], words = attention.shape()[1] - 1;
  std::size_t made = 0, hits = 0;
  if (by_column) {
    for (std::size_t i = 0; i < words; ++i) {
      std::size_t best = 0;
      for (std::size_t j = 1; j < t; ++j)
        if (attention(j, i) > attention(best, i)) best = j;
      ++made;
      hits += alignment[best] == Index(i);
    }
  } else {
    for (std::size_t j = 0; j < t; ++j) {
      std::size_t best = 0;
      for (std::size_t i = 1; i <= words; ++i)
        if (attention(j, i) > attention(j, best)) best = i;
      if (best == words && !eos_links) continue;  // <eos>: no link
      if (best == words) best = words - 1;         // (the mistake: the last word instead)
      ++made;
      hits += alignment[j] == Index(best);
    }
  }
  const double sure = double(alignment.size());
  return recall_only ? 1.0 - double(hits) / sure : 1.0 - 2.0 * double(hits) / (double(made) + sure);
}

double alignment_error_rate(const Array<double>& attention, const std::vector<Index>& alignment) {
  return aer(attention, alignment, false, false, false);
}
SOLUTION(alignment_error_rate);

double aer_by_column(const Array<double>& attention, const std::vector<Index>& alignment) {
  return aer(attention, alignment, true, false, false);
}
WRONG_ANSWER(alignment_error_rate, aer_by_column, "links each source word (column) to its largest row");

double aer_eos_to_last_word(const Array<double>& attention, const std::vector<Index>& alignment) {
  return aer(attention, alignment, false, true, false);
}
WRONG_ANSWER(alignment_error_rate, aer_eos_to_last_word, "links an <eos> peak to the last source word");

double aer_recall_only(const Array<double>& attention, const std::vector<Index>& alignment) {
  return aer(attention, alignment, false, false, true);
}
WRONG_ANSWER(alignment_error_rate, aer_recall_only, "1 - |A and S| / |S|: the links made are not counted");

// 08.4: target character j of a reversal is source character length - 1 - j.
std::vector<Index> links_shifted(std::size_t length, Index shift, bool reversed) {
  std::vector<Index> links(length);
  for (std::size_t j = 0; j < length; ++j) {
    const Index to = reversed ? Index(length) - 1 - Index(j) + shift : Index(j) + shift;
    links[j] = std::clamp<Index>(to, 0, Index(length) - 1);
  }
  return links;
}

std::vector<Index> predicted_links(std::size_t length) { return links_shifted(length, 0, true); }
SOLUTION(predicted_links);

std::vector<Index> predicted_links_same_order(std::size_t length) { return links_shifted(length, 0, false); }
WRONG_ANSWER(predicted_links, predicted_links_same_order, "the same order, j to j, as a copy would look");

std::vector<Index> predicted_links_one_off(std::size_t length) { return links_shifted(length, 1, true); }
WRONG_ANSWER(predicted_links, predicted_links_one_off, "reversed but one off: length - j instead of length - 1 - j");

}  // namespace
