// Exercises for lesson 01, attention pooling (Nadaraya-Watson regression). Grade them with
// build/bin/grade 01.
//
// Write each function in plain xtensor (loops, xt::exp ...), not with the engine's ops;
// product(a, b) and transposed(a) (exercises/grading/exercise.hpp) multiply and transpose matrices.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 01.1 Gaussian attention weights ----------------------------------------------------------
// Queries q (n) and keys k (m) are numbers. Return the (n, m) weights
//     a(q_r, k_i) = softmax over i of s_i,   s_i = -((q_r - k_i) w)^2 / 2,
// each row a distribution over the keys. Subtract the row's largest score before exp: with a
// large w every exp(s_i) underflows to 0 and a plain ratio would be 0 / 0.
Array<double> gaussian_weights(const Array<double>& queries, const Array<double>& keys, double w) {
  not_attempted();  // delete this line and write your answer
}

// ---- 01.2 The Nadaraya-Watson estimate ---------------------------------------------------------
// f(q_r) = sum_i a(q_r, k_i) v_i: the attention-weighted average of the values v (m), one per
// key. Return f at every query (n). (Call your gaussian_weights.)
Array<double> nadaraya_watson(const Array<double>& queries, const Array<double>& keys, const Array<double>& values,
                              double w) {
  not_attempted();  // delete this line and write your answer
}

// ---- 01.3 The gradient that learns the width ---------------------------------------------------
// The lesson learns w by gradient descent on L(w) = mean over r of (f(q_r) - t_r)^2, with f the
// estimate of 01.2 at the queries q and t the targets (n of each). Return dL/dw, derived by hand
// with the chain rule: through the loss to each f_r, through the weighted average to the softmax,
// through the softmax to the scores, and from the scores to w.
double width_gradient(const Array<double>& queries, const Array<double>& keys, const Array<double>& values,
                      const Array<double>& targets, double w) {
  not_attempted();  // delete this line and write your answer
}

// ---- 01.4 Experiment: choose the width from the training data -----------------------------------
// The lesson's data: 50 training points (x_i, y_i), x uniform in [0, 5], y = 2 sin x + x^0.8 plus
// noise of standard deviation 0.5. Return the Gaussian width h (w = 1/h) that the estimate of
// 01.2, with the training points as keys and values, should use on NEW inputs. You see only the
// training points. The grader draws three such data sets (seeds it does not tell you), calls you
// on each, and measures the MSE of your width's estimate on 500 held-out noisy points; it also
// measures every width of a fine grid (0.02 to 3) and takes the best of them in hindsight. Target:
// your mean held-out MSE at most 1.1 times the best width's. (Try your idea on a data set of your
// own first: what does the training error say about a width, and where does it mislead?)
double choose_width(const Array<double>& x_train, const Array<double>& y_train) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against the engine's softmax and autograd.
namespace {

// s_ri = -((q_r - k_i) w)^2 / 2 with the engine's ops: the lesson's learned model.
Tensor<double> engine_weights(const Tensor<double>& q, const Tensor<double>& k, const Tensor<double>& w) {
  const Tensor<double> diff = sub(unsqueeze(q, 1), unsqueeze(k, 0));
  const Tensor<double> scaled = mul(diff, w);
  return softmax(mul(mul(scaled, scaled), -0.5), -1);
}

Tensor<double> engine_estimate(const Tensor<double>& q, const Tensor<double>& k, const Tensor<double>& v,
                               const Tensor<double>& w) {
  return squeeze(matmul(engine_weights(q, k, w), unsqueeze(v, 1)), 1);
}

struct Data {
  Array<double> queries = random_array({6}, 31, 0, 5), keys = random_array({9}, 32, 0, 5),
                values = random_array({9}, 33, -2, 2), targets = random_array({6}, 34, -2, 2);
};

void grade_gaussian_weights(const std::function<Array<double>(const Array<double>&, const Array<double>&, double)>& answer,
                            Grader& g) {
  const Data d;
  for (double w : {0.5, 2.0}) {
    const Array<double> expected =
        engine_weights(Tensor<double>(d.queries), Tensor<double>(d.keys), Tensor<double>(Array<double>{w})).value();
    g.close("w = " + std::to_string(w).substr(0, 3) + " against the engine's softmax", answer(d.queries, d.keys, w),
            expected, 1e-10, "row r is query r: normalize over the keys (the columns), so that each row sums to 1");
  }
  const Array<double> sharp =
      engine_weights(Tensor<double>(d.queries), Tensor<double>(d.keys), Tensor<double>(Array<double>{60.0})).value();
  g.close("w = 60: every exp underflows unless shifted", answer(d.queries, d.keys, 60.0), sharp, 1e-10,
          "subtract each row's largest score before exp: the softmax is unchanged, and the largest term is exp(0) = 1");
}

void grade_nadaraya_watson(
    const std::function<Array<double>(const Array<double>&, const Array<double>&, const Array<double>&, double)>& answer,
    Grader& g) {
  const Data d;
  for (double w : {0.5, 3.0}) {
    const Array<double> expected = engine_estimate(Tensor<double>(d.queries), Tensor<double>(d.keys),
                                                   Tensor<double>(d.values), Tensor<double>(Array<double>{w}))
                                       .value();
    g.close("w = " + std::to_string(w).substr(0, 3) + " against the engine", answer(d.queries, d.keys, d.values, w),
            expected, 1e-10, "f(q) = sum_i a(q, k_i) v_i with weights that sum to 1: an average of the values");
  }
}

void grade_width_gradient(const std::function<double(const Array<double>&, const Array<double>&, const Array<double>&,
                                                     const Array<double>&, double)>& answer,
                          Grader& g) {
  const Data d;
  // L(w) by the engine; your dL/dw as its backward (times the upstream gradient of the scalar L).
  const EngineForward loss = [&](const std::vector<Tensor<double>>& x) {
    const Tensor<double> f = engine_estimate(Tensor<double>(d.queries), Tensor<double>(d.keys), Tensor<double>(d.values), x[0]);
    return mse(f, Tensor<double>(d.targets));
  };
  const Backward yours = [&](const std::vector<Array<double>>& x, const Array<double>& upstream) {
    const double dw = answer(d.queries, d.keys, d.values, d.targets, x[0](0));
    return std::vector<Array<double>>{Array<double>{upstream() * dw}};
  };
  const std::string hint =
      "compare your dL/dw with a central difference (L(w + h) - L(w - h)) / 2h of your own 01.2: a ratio of 2 or n "
      "means a factor of the loss's derivative is missing";
  g.backward("w = 1.5", loss, yours, {Array<double>{1.5}}, {"w"}, hint);
  g.backward("w = 0.3", loss, yours, {Array<double>{0.3}}, {"w"}, hint);
}


// 01.4: the lesson's data (lessons/01_attention_pooling.cpp draws the same: 50 training inputs
// uniform in [0, 5], targets 2 sin x + x^0.8 plus N(0, 0.5^2) noise), here with 500 held-out points.
struct Sample {
  Array<double> x_train, y_train, x_val, y_val;
};

Sample lesson_sample(std::uint64_t seed) {
  Generator gen(seed);
  auto draw = [&](std::size_t n, Array<double>& x, Array<double>& y) {
    x = xt::zeros<double>({n});
    for (double& v : x) v = gen.uniform(0.0, 5.0);
    y = 2.0 * xt::sin(x) + xt::pow(x, 0.8);
    for (double& v : y) v += gen.normal(0.0, 0.5);
  };
  Sample s;
  draw(50, s.x_train, s.y_train);
  draw(500, s.x_val, s.y_val);
  return s;
}

// The held-out MSE of the engine's Nadaraya-Watson estimate at width h.
double held_out_mse(const Sample& s, double h) {
  const Tensor<double> f = engine_estimate(Tensor<double>(s.x_val), Tensor<double>(s.x_train),
                                           Tensor<double>(s.y_train), Tensor<double>(Array<double>{1.0 / h}));
  return mse(f, Tensor<double>(s.y_val)).item();
}

void grade_choose_width(const std::function<double(const Array<double>&, const Array<double>&)>& answer, Grader& g) {
  double yours = 0.0, best = 0.0;
  std::ostringstream widths;
  widths.precision(3);
  for (std::uint64_t seed : {101, 102, 103}) {
    const Sample s = lesson_sample(seed);
    const double h = answer(s.x_train, s.y_train);
    widths << (seed == 101 ? "" : ", ") << h;
    if (!g.check(std::isfinite(h) && h > 0.0, "data set " + std::to_string(seed - 100) + ": a width above 0",
                 "yours " + widths.str(), "h is a length on the x axis: a positive number"))
      return;
    double best_here = INFINITY;
    for (double grid = 0.02; grid <= 3.0; grid *= 1.05) best_here = std::min(best_here, held_out_mse(s, grid));
    yours += held_out_mse(s, h) / 3.0, best += best_here / 3.0;
  }
  std::ostringstream detail;
  detail.precision(4);
  detail << "your widths " << widths.str() << ": mean held-out MSE " << yours << "; the best width in hindsight "
         << best << "; target at most 1.1 x " << best << " = " << 1.1 * best << " (the noise alone costs 0.25)";
  g.check(yours <= 1.1 * best, "three data sets: held-out MSE of your widths", detail.str(),
          "is the training error of a width a fair estimate of its error on new points? What does a point that may "
          "look at its own key learn?");
}

}  // namespace

EXERCISE(gaussian_weights, "Gaussian attention weights", grade_gaussian_weights);
EXERCISE(nadaraya_watson, "The Nadaraya-Watson estimate", grade_nadaraya_watson);
EXERCISE(width_gradient, "The gradient that learns the width", grade_width_gradient);
HINT(width_gradient,
     "dL/df_r = 2 (f_r - t_r) / n; df_r/dw = sum_i a_ri (v_i - f_r) ds_ri/dw (the softmax's derivative, weighted by "
     "the values); ds_ri/dw = -(q_r - k_i)^2 w. So dL/dw = sum_r 2 (f_r - t_r) / n * sum_i a_ri (v_i - f_r) "
     "(-(q_r - k_i)^2 w).");
EXERCISE(choose_width, "Experiment: choose the width from the training data", grade_choose_width);
HINT(choose_width,
     "Leave one out: score each candidate width (a grid from 0.02 to 3) by predicting every training target from the "
     "OTHER 49 points (weight 0 on its own key), and keep the width with the smallest of these errors. With its own "
     "key visible, the narrowest width copies every noisy target and looks perfect.");
