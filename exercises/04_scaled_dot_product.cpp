// Exercises for lesson 04, scaled dot-product attention. Grade them with build/bin/grade 04.
//
// Write each function in plain xtensor (xt::zeros, loops, xt::exp ...), not with the engine's
// ops: the point is to do by hand what scaled_dot_product_attention does for you.
#include <cmath>
#include <sstream>

#include <xtensor/xsort.hpp>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 04.1 A causal mask ---------------------------------------------------------------------
// In a decoder, the token at position i may look at positions 0, 1, ..., i and at nothing after
// it. Return the (n, n) mask with allowed(i, j) = true when query i may attend to key j.
Mask causal_mask(std::size_t n) {
  not_attempted();  // delete this line and write your answer
}

// ---- 04.2 Masked scaled dot-product attention -----------------------------------------------
// Q (Lq, d), K (Lk, d), V (Lk, dv), allowed (Lq, Lk). Return the output (Lq, dv) of
//     S = Q K^T / sqrt(d),  A = softmax of each row of S over its allowed keys only,  O = A V.
// A key that is not allowed gets weight exactly 0. A query with no allowed key at all gets an
// output row of zeros (not NaN: think about what a softmax over nothing would divide by).
// Subtract the row's largest allowed score before exp, so that large scores do not overflow.
Array<double> masked_attention(const Array<double>& Q, const Array<double>& K, const Array<double>& V,
                               const Mask& allowed) {
  not_attempted();  // delete this line and write your answer
}

// ---- 04.3 Experiment: predict how peaked attention starts ------------------------------------------
// At initialization a layer's queries and keys have independent entries of mean 0 and variance 1.
// Predict, for width d and 8 keys, the average over queries of the largest of the 8 attention
// weights: the scores q . k / sqrt(d) when `scaled`, q . k when not. 1/8 is attention spread evenly,
// 1 is a hard choice of one key. Work it out, or simulate it yourself; then the grader measures it
// with the engine's attention (1000 queries, standard normal q and k) at d = 1, 16 and 512, both
// ways, and compares. Target: every prediction within 0.05 of the measurement.
double predicted_top_weight(std::size_t d, bool scaled) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against the engine's own attention.
namespace {

// The engine's answer: which weights its causal attention leaves nonzero.
Mask engine_causal(std::size_t n) {
  const Tensor<double> x(random_array({n, 4}, 1));
  AttentionOptions<double> o;
  o.causal = true;
  return scaled_dot_product_attention(x, x, x, o).weights.value() > 0.0;
}

void grade_causal_mask(const std::function<Mask(std::size_t)>& answer, Grader& g) {
  const std::string hint = "row i is a query: it may see key j exactly when j <= i (itself included)";
  g.mask("n = 5 against the engine's causal attention", answer(5), engine_causal(5), hint);
  g.mask("n = 1", answer(1), engine_causal(1), hint);
  g.mask("n = 12", answer(12), engine_causal(12), hint);
}

Array<double> engine_attention(const Array<double>& q, const Array<double>& k, const Array<double>& v,
                               const Mask& allowed) {
  AttentionOptions<double> o;
  o.allowed = Allowed::where(allowed);
  return scaled_dot_product_attention(Tensor<double>(q), Tensor<double>(k), Tensor<double>(v), o).output.value();
}

void grade_masked_attention(
    const std::function<Array<double>(const Array<double>&, const Array<double>&, const Array<double>&, const Mask&)>&
        answer,
    Grader& g) {
  const Array<double> q = random_array({4, 8}, 2), k = random_array({6, 8}, 3), v = random_array({6, 3}, 4);
  const Mask everything = xt::ones<bool>({4, 6});
  g.close("no mask", answer(q, k, v, everything), engine_attention(q, k, v, everything), 1e-10,
          "S = Q K^T / sqrt(d) with d the width of Q (8 here); each row of A sums to 1");
  Mask padded = everything;
  for (std::size_t i = 0; i < 4; ++i) padded(i, 4) = padded(i, 5) = false;  // the last two keys are padding
  g.close("the last two keys masked", answer(q, k, v, padded), engine_attention(q, k, v, padded), 1e-10,
          "a masked key must get weight exactly 0: leave it out of the softmax's sum");
  Mask some_empty = padded;
  for (std::size_t j = 0; j < 6; ++j) some_empty(2, j) = false;  // query 2 sees nothing
  g.close("query 2 with no allowed key", answer(q, k, v, some_empty), engine_attention(q, k, v, some_empty), 1e-10,
          "a row with no allowed key is all zeros: its softmax has nothing to normalize");
  const Array<double> big_q = 5000.0 * q;  // scores in the thousands: exp overflows unless shifted
  g.close("scores in the thousands", answer(big_q, k, v, padded), engine_attention(big_q, k, v, padded), 1e-9,
          "subtract each row's largest allowed score before exp (softmax is unchanged by a shift)");
}


// 04.3: the mean largest weight of 1000 queries over 8 keys each, standard normal entries.
double measured_top_weight(std::size_t d, bool scaled) {
  Generator gen(400 + d);
  const Tensor<double> q(random_normal<double>({1000, 1, d}, gen)), k(random_normal<double>({1000, 8, d}, gen));
  AttentionOptions<double> o;
  if (!scaled) o.scale = 1.0;  // else the default 1/sqrt(d)
  return xt::mean(xt::amax(scaled_dot_product_attention(q, k, k, o).weights.value(), {2}))();
}

void grade_predicted_top_weight(const std::function<double(std::size_t, bool)>& answer, Grader& g) {
  for (const bool scaled : {true, false})
    for (const std::size_t d : {1, 16, 512}) {
      const double yours = answer(d, scaled), measured = measured_top_weight(d, scaled);
      std::ostringstream detail;
      detail.precision(3);
      detail << "yours " << yours << ", measured " << measured << " (target: within 0.05)";
      g.check(std::abs(yours - measured) <= 0.05,
              "d = " + std::to_string(d) + (scaled ? ", scores divided by sqrt(d)" : ", scores not scaled"),
              detail.str(),
              scaled ? "what is the spread of q . k / sqrt(d), and does it depend on d?"
                     : "how far apart are the 8 scores q . k when their standard deviation is sqrt(d)?");
    }
}

}  // namespace

EXERCISE(causal_mask, "A causal mask", grade_causal_mask);
EXERCISE(masked_attention, "Masked scaled dot-product attention", grade_masked_attention);
EXERCISE(predicted_top_weight, "Experiment: predict how peaked attention starts", grade_predicted_top_weight);
HINT(predicted_top_weight,
     "q . k is a sum of d products of variance 1: its standard deviation is sqrt(d). Scaled, the 8 scores have "
     "variance 1 whatever d, so the largest weight hardly depends on d (simulate it: about 0.3 to 0.36). Unscaled, "
     "the scores spread by sqrt(d): at d = 1 it is the scaled case, at d = 512 the gaps between scores are tens of "
     "units and the softmax is one-hot (close to 1). Simulate: draw q and 8 keys, softmax, take the max, average.");
