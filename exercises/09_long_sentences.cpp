// Exercises for lesson 09, positions that carry a Transformer past the training lengths. Grade them
// with build/bin/grade 09.
//
// Write each function in plain C++ and xtensor (loops, std::pow, std::log ...), not with the
// engine's ops or nn/: these are the two ways of giving attention distances that the lesson
// compares, done by hand, and the reason one of them has rows that training never reaches.
#include <cmath>
#include <cstddef>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "exercises/grading/exercise.hpp"
#include "nn/positional/alibi.hpp"
#include "nn/positional/relative.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 09.1 The ALiBi penalty ----------------------------------------------------------------
// ALiBi (Press et al. 2022) adds to the score of query i and key j of head h a penalty that grows
// with their distance, the same at any length and learnt from nothing: -m_h |i - j|. Each head has
// its own slope m_h, a geometric sequence that starts at 2^(-8 / heads) and is multiplied by
// 2^(-8 / heads) from one head to the next. For `heads` a power of two, return the penalties of a
// sequence of `length` tokens: an array (heads, length, length), entry [h, i, j] the one above.
Array<double> alibi_penalty(std::size_t heads, std::size_t length) {
  not_attempted();  // delete this line and write your answer
}

// ---- 09.2 The T5 bucket of a distance -------------------------------------------------------
// T5's relative bias learns one number per head for each of `num_buckets` buckets of the offset
// r = j - i (key minus query). With `bidirectional`, keys after the query (r > 0) use the upper half
// of the buckets and the others the lower half (each half then has num_buckets / 2 buckets, and
// the distance is |r|); without, only keys before the query count (distance max(-r, 0)), over all
// the buckets. Within the buckets of one direction, n of them: the first n / 2 hold the distances
// 0, 1, ..., n/2 - 1 one each; the others cover the distances from n/2 to max_distance in steps
// equal on a log scale (bucket n/2 + floor of the fraction of the way from log(n/2) to
// log(max_distance), times n/2); every distance beyond shares the last bucket of the direction.
// Return the bucket of r (0 .. num_buckets - 1).
std::size_t t5_bucket(long relative, std::size_t num_buckets, std::size_t max_distance, bool bidirectional) {
  not_attempted();  // delete this line and write your answer
}

// ---- 09.3 The buckets training never reaches -----------------------------------------------
// The lesson's table: 32 buckets up to distance 128. A model trained on sequences of at most
// `trained_length` tokens meets the offsets with |r| < trained_length; sequences of `length` tokens
// reach |r| < length. Return, in increasing order, the buckets (of 09.2) that some offset of a
// sequence of `length` reaches and no offset of a sequence of `trained_length` does: the rows of
// the learnt table that keep their initial values, however long the model trains.
std::vector<std::size_t> untrained_buckets(std::size_t trained_length, std::size_t length, bool bidirectional) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against nn/positional (alibi_bias,
// relative_position_bucket, unseen_buckets).
namespace {

void grade_alibi_penalty(const std::function<Array<double>(std::size_t, std::size_t)>& answer, Grader& g) {
  for (const std::size_t heads : {2, 4, 8}) {
    const Array<double> engine = xt::view(nn::alibi_bias<double>(heads, 7, 7).value(), 0);  // (1, H, L, L)
    g.close(with_digits(4, heads, " heads, 7 tokens, against nn::alibi_bias"), answer(heads, 7), engine, 1e-12,
            "head 0's slope is 2^(-8/heads) itself, not 1; the penalty is negative and symmetric in i and j");
  }
}

void grade_t5_bucket(const std::function<std::size_t(long, std::size_t, std::size_t, bool)>& answer, Grader& g) {
  struct Table {
    std::size_t buckets, max_distance;
    bool bidirectional;
  };
  for (const Table& t : {Table{32, 128, true}, Table{32, 128, false}, Table{16, 40, true}}) {
    std::size_t wrong = 0;
    std::string first;
    for (long r = -300; r <= 300; ++r) {
      const std::size_t got = answer(r, t.buckets, t.max_distance, t.bidirectional),
                        want = nn::relative_position_bucket(r, t.buckets, t.max_distance, t.bidirectional);
      if (got != want && wrong++ == 0)
        first = with_digits(4, "first at r = ", r, ": yours ", got, ", expected ", want);
    }
    g.check(wrong == 0,
            with_digits(4, t.buckets, " buckets up to ", t.max_distance, t.bidirectional ? ", both directions" : ", keys before the query",
                        ": every r from -300 to 300"),
            with_digits(4, wrong, " of 601 offsets in another bucket; ", first),
            "check the small distances (one bucket each), then the sign of r (which half), then the first "
            "distances past n/2 and the clamp at the last bucket");
  }
}

std::string listed(const std::vector<std::size_t>& v) {
  std::string s = "{";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "}";
}

void grade_untrained_buckets(const std::function<std::vector<std::size_t>(std::size_t, std::size_t, bool)>& answer,
                             Grader& g) {
  struct Case {
    std::size_t trained, length;
    bool bidirectional;
    std::string what;
  };
  for (const Case& c : {Case{10, 15, true, "the lesson's encoder: 10 words in training, 15 after"},
                        Case{11, 16, false, "the lesson's decoder: <bos> and 10 words, then <bos> and 15"},
                        Case{20, 40, true, "20 tokens in training, 40 after"},
                        Case{12, 12, true, "the same length: nothing new"}}) {
    const std::vector<std::size_t> got = answer(c.trained, c.length, c.bidirectional),
                                   want = nn::unseen_buckets(c.trained, c.length, 32, 128, c.bidirectional);
    g.check(got == want, c.what, "yours " + listed(got) + ", expected " + listed(want),
            "a sequence of n tokens has offsets -(n - 1) .. n - 1; a bucket is untrained only if no offset of the "
            "shorter sequence lands in it");
  }
}

}  // namespace

EXERCISE(alibi_penalty, "The ALiBi penalty", grade_alibi_penalty);
HINT(alibi_penalty, "m_h = 2^(-8 (h + 1) / heads) for h = 0 .. heads - 1; entry [h, i, j] = -m_h |i - j|.");
EXERCISE(t5_bucket, "The T5 bucket of a distance", grade_t5_bucket);
HINT(t5_bucket,
     "n = num_buckets / 2 and offset n for r > 0 when bidirectional (else n = num_buckets); d = |r| (or max(-r, 0)); "
     "half = n / 2; d < half: bucket d; else half + floor(log(d / half) / log(max_distance / half) * (n - half)), "
     "at most n - 1; plus the offset.");
EXERCISE(untrained_buckets, "The buckets training never reaches", grade_untrained_buckets);
HINT(untrained_buckets,
     "seen = the buckets of r for |r| < trained_length; reached = those for |r| < length; return reached minus seen, "
     "sorted (a std::set does it).");
