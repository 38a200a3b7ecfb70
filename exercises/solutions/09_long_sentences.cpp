// Solutions to exercises/09_long_sentences.cpp, and the mistakes the grader must catch.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <set>
#include <vector>

#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// Head h (0-based) has slope 2^(-8 (h + shift) / heads): shift 1 is the paper's, 0 a mistake.
Array<double> penalty(std::size_t heads, std::size_t length, int shift, double sign) {
  Array<double> out = xt::zeros<double>({heads, length, length});
  for (std::size_t h = 0; h < heads; ++h) {
    const double slope = std::pow(2.0, -8.0 * double(h + shift) / double(heads));
    for (std::size_t i = 0; i < length; ++i)
      for (std::size_t j = 0; j < length; ++j) out(h, i, j) = sign * slope * std::abs(double(i) - double(j));
  }
  return out;
}

Array<double> alibi_penalty(std::size_t heads, std::size_t length) { return penalty(heads, length, 1, -1.0); }
SOLUTION(alibi_penalty);

Array<double> alibi_penalty_first_slope_one(std::size_t heads, std::size_t length) {
  return penalty(heads, length, 0, -1.0);
}
WRONG_ANSWER(alibi_penalty, alibi_penalty_first_slope_one, "slopes 2^(-8h/heads) from h = 0: head 0 gets slope 1");

Array<double> alibi_penalty_bonus(std::size_t heads, std::size_t length) { return penalty(heads, length, 1, 1.0); }
WRONG_ANSWER(alibi_penalty, alibi_penalty_bonus, "+m |i - j|: a bonus for distance, not a penalty");

// rounded: std::round (a mistake) instead of std::floor; halves false: one half for both directions (a mistake).
std::size_t bucket(long relative, std::size_t num_buckets, std::size_t max_distance, bool bidirectional,
                   bool rounded, bool halves) {
  std::size_t offset = 0, n = num_buckets, d = 0;
  if (bidirectional) {
    n = num_buckets / 2;
    if (relative > 0 && halves) offset = n;
    d = std::size_t(std::labs(relative));
  } else {
    d = relative < 0 ? std::size_t(-relative) : 0;
  }
  const std::size_t half = n / 2;
  if (d < half) return offset + d;
  const double scaled = std::log(double(d) / double(half)) / std::log(double(max_distance) / double(half)) * double(n - half);
  const std::size_t large = half + std::size_t(rounded ? std::round(scaled) : std::floor(scaled));
  return offset + std::min(large, n - 1);
}

std::size_t t5_bucket(long relative, std::size_t num_buckets, std::size_t max_distance, bool bidirectional) {
  return bucket(relative, num_buckets, max_distance, bidirectional, false, true);
}
SOLUTION(t5_bucket);

std::size_t t5_bucket_one_half(long relative, std::size_t num_buckets, std::size_t max_distance, bool bidirectional) {
  return bucket(relative, num_buckets, max_distance, bidirectional, false, false);
}
WRONG_ANSWER(t5_bucket, t5_bucket_one_half, "keys before and after the query share the lower half of the buckets");

std::size_t t5_bucket_rounded(long relative, std::size_t num_buckets, std::size_t max_distance, bool bidirectional) {
  return bucket(relative, num_buckets, max_distance, bidirectional, true, true);
}
WRONG_ANSWER(t5_bucket, t5_bucket_rounded, "rounds the log position to the nearest bucket instead of down");

// seen_up_to: the largest |r| counted as seen, trained_length - 1 (right) or trained_length (a mistake).
std::vector<std::size_t> buckets_new(std::size_t trained_length, std::size_t length, bool bidirectional,
                                     std::size_t seen_up_to) {
  std::set<std::size_t> seen, reached;
  for (long r = -long(length) + 1; r < long(length); ++r)
    (std::size_t(std::labs(r)) <= seen_up_to ? seen : reached).insert(t5_bucket(r, 32, 128, bidirectional));
  std::vector<std::size_t> out;
  for (std::size_t b : reached)
    if (!seen.count(b)) out.push_back(b);
  return out;
}

std::vector<std::size_t> untrained_buckets(std::size_t trained_length, std::size_t length, bool bidirectional) {
  return buckets_new(trained_length, length, bidirectional, trained_length - 1);
}
SOLUTION(untrained_buckets);

std::vector<std::size_t> untrained_buckets_one_too_far(std::size_t trained_length, std::size_t length,
                                                       bool bidirectional) {
  return buckets_new(trained_length, length, bidirectional, trained_length);
}
WRONG_ANSWER(untrained_buckets, untrained_buckets_one_too_far,
             "counts |r| = trained_length as seen: a sequence of n tokens reaches only n - 1");

std::vector<std::size_t> untrained_buckets_all_reached(std::size_t trained_length, std::size_t length,
                                                       bool bidirectional) {
  std::set<std::size_t> reached;
  for (long r = -long(length) + 1; r < long(length); ++r) reached.insert(t5_bucket(r, 32, 128, bidirectional));
  (void)trained_length;
  return {reached.begin(), reached.end()};
}
WRONG_ANSWER(untrained_buckets, untrained_buckets_all_reached, "every bucket the long sequence reaches, seen or not");

}  // namespace
