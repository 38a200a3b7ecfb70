// Exercises for lesson 13, induction heads. Grade them with build/bin/grade 13.
//
// Write each function in plain C++ (loops, std::vector, xt::zeros ...), not with the engine's ops.
#include <cmath>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "nn/attention/induction.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 13.1 Make one head copy ----------------------------------------------------------------
// An experiment, graded by running it. tokens (L) is one sequence as lesson 13 draws them: <bos>
// (id 0), then a segment of random tokens repeated (its length unknown to you).
// Design the attention pattern of a single causal head that, reading each token's own id as its
// value, predicts the NEXT token: return allowed (L, L), where allowed(i, j) says that query i
// puts weight on key j (the head spreads its weight evenly over the allowed keys; keys after i are
// the future, which a causal head must not see; a query whose row allows nothing is an error, so
// give it <bos>). The grader runs the head on 256 fresh sequences of 32 tokens (segments of 8 to
// 16 tokens from 64 symbols), takes the id with the most weight as the prediction, and measures
// how often it is the next token where the query and the next token are both repeats (at least
// 0.8 of the time: a token that occurs twice within one segment misleads a good rule about one
// time in seven), and the lesson's induction score of your head (at least 0.9).
Mask induction_pattern(const std::vector<Index>& tokens) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): the engine's masked softmax and nn::induction_mass.
namespace {

// Lesson 13's task: <bos>, a segment of `period` tokens from ids 1 .. symbols, repeated to fill
// 2 half tokens.
std::vector<Index> repeated_segment(std::size_t period, std::size_t half, std::size_t symbols, Generator& gen) {
  std::vector<Index> segment(period), ids{0};
  for (Index& v : segment) v = Index(1 + gen.below(symbols));
  for (std::size_t i = 0; i < 2 * half; ++i) ids.push_back(segment[i % period]);
  return ids;
}

void grade_induction_pattern(const std::function<Mask(const std::vector<Index>&)>& answer, Grader& g) {
  const std::size_t sequences = 256, half = 16, L = 2 * half + 1, symbols = 64;
  Generator gen(11);
  IndexArray ids = IndexArray::from_shape({sequences, L});
  Array<float> weights = xt::zeros<float>({sequences, std::size_t(1), L, L});
  std::vector<std::size_t> periods;
  std::size_t future = 0, empty = 0;
  for (std::size_t b = 0; b < sequences; ++b) {
    const std::size_t period = half / 2 + gen.below(half / 2 + 1);
    const std::vector<Index> tokens = repeated_segment(period, half, symbols, gen);
    periods.push_back(period);
    for (std::size_t t = 0; t < L; ++t) ids(b, t) = tokens[t];
    const Mask allowed = answer(tokens);
    if (allowed.shape().size() != 2 || allowed.shape()[0] != L || allowed.shape()[1] != L) {
      g.check(false, "the pattern is (L, L)", with_digits(4, "L = ", L, ", yours ", shape_str(allowed.shape())));
      return;
    }
    for (std::size_t i = 0; i < L; ++i) {
      bool any = false;
      for (std::size_t j = 0; j < L; ++j) any = any || allowed(i, j), future += j > i && allowed(i, j);
      empty += !any;
    }
    if (future || empty) continue;
    const Array<float> w = masked_softmax(Tensor<float>(Array<float>(xt::zeros<float>({L, L}))), Allowed::where(allowed)).value();
    xt::view(weights, b, 0) = w;
  }
  if (!g.check(future == 0, "no query sees a key after it (a causal head)", with_digits(4, future, " future keys allowed"),
               "allowed(i, j) with j > i reads the answer"))
    return;
  if (!g.check(empty == 0, "every query sees at least one key", with_digits(4, empty, " rows allow no key"),
               "a query with nowhere to look can look at <bos>, position 0"))
    return;
  // The head's prediction at t: the id with the most weight (its value is one-hot in the id).
  std::size_t copies = 0, right = 0;
  for (std::size_t b = 0; b < sequences; ++b)
    for (std::size_t t = periods[b] + 1; t + 1 < L; ++t) {  // the query is a repeat, and so is the next token
      std::vector<double> vote(symbols + 1, 0.0);
      for (std::size_t j = 0; j <= t; ++j) vote[std::size_t(ids(b, j))] += weights(b, 0, t, j);
      std::size_t best = 0;
      for (std::size_t v = 1; v <= symbols; ++v)
        if (vote[v] > vote[best]) best = v;
      ++copies, right += Index(best) == ids(b, t + 1);
    }
  const double accuracy = double(right) / double(copies);
  g.check(accuracy >= 0.8, "the head predicts the next token in the repeat",
          with_digits(4, "measured ", accuracy, " of ", copies, " copies; target at least 0.8"),
          "where in the first pass does the token that comes next sit, relative to the current token's earlier "
          "occurrence?");
  const double score = nn::induction_mass(weights, ids, 1)[0];
  g.check(score >= 0.9, "the lesson's induction score of your head",
          with_digits(4, "measured ", score, "; target at least 0.9"),
          "the score is the weight on the position right after the MOST RECENT earlier occurrence of the query's token");
}

}  // namespace

EXERCISE(induction_pattern, "Make one head copy", grade_induction_pattern);
HINT(induction_pattern,
     "allowed(i, j) for j = s + 1, where s < i is the most recent earlier position with tokens[s] == tokens[i]; "
     "when the token has not occurred before, allowed(i, 0) (<bos>)");
