// Exercises for lesson 06, the backward pass of attention. Grade them with build/bin/grade 06.
//
// Each function is a backward: given the forward's inputs and dL/d(output), return dL/d(input)
// for every input, in plain xtensor (product(a, b) and transposed(a), in exercises/grading/
// exercise.hpp, multiply and transpose matrices). The grader compares your gradients with the
// engine's own backward, entry by entry, and runs the engine's gradient check (core/gradcheck:
// central differences with a random upstream gradient) on them.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <tuple>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 06.1 The softmax backward --------------------------------------------------------------
// y = softmax(x) along each row of x (n, m). Given y (not x: the forward's output is all you
// need) and dy = dL/dy, return dx = dL/dx. Derive it on paper first: the Jacobian of one row,
// dy_j/dx_i, and then dx_i = sum_j dy_j dy_j/dx_i. The result needs no (m, m) matrix.
Array<double> softmax_backward(const Array<double>& y, const Array<double>& dy) {
  not_attempted();  // delete this line and write your answer
}

// ---- 06.2 Attention's gradients: dQ, dK, dV ---------------------------------------------------
// The forward: S = Q K^T / sqrt(d), A = softmax(S) by rows, O = A V, with Q (n, d), K (m, d),
// V (m, dv). Given dO = dL/dO (n, dv), return {dQ, dK, dV}, in that order. Go backwards one step
// at a time: dA and dV from O = A V, dS from the softmax (06.1), then dQ and dK from S.
using AttentionGrads = std::tuple<Array<double>, Array<double>, Array<double>>;  // dQ, dK, dV
AttentionGrads attention_backward(const Array<double>& Q, const Array<double>& K, const Array<double>& V,
                                  const Array<double>& dO) {
  not_attempted();  // delete this line and write your answer
}

// ---- 06.3 Experiment: the step of a gradient check in float -----------------------------------------
// The lesson checks every gradient by central differences, (F(x + h) - F(x - h)) / 2h, in double
// with h = 1e-5. The models train in float (7 digits, not 16). Return the step h you would use to
// check attention's dQ in float. The grader measures it: F(Q) = <attention(Q, K, V), U> computed
// by the engine in float (n = 6 queries, m = 7 keys, d = 8, entries of Q, K, V, U standard
// normal), each entry of Q moved by +-h in float, against the exact dQ of the engine's double
// backward; the error of the check is the largest |numeric - exact| / max(|exact|, 1) over the
// entries, averaged over three draws. It measures the same for every step of a grid (1, 10^-0.5,
// ..., 10^-8). Target: your error at most 4 times the best step's. Predict before you try: why does
// neither a large nor a tiny h do?
double float_check_step() {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against the engine's backward, and by
// central differences of the engine's forward.
namespace {

void grade_softmax_backward(const std::function<Array<double>(const Array<double>&, const Array<double>&)>& answer,
                            Grader& g) {
  const EngineForward forward = [](const std::vector<Tensor<double>>& x) { return softmax(x[0], -1); };
  const Backward yours = [&](const std::vector<Array<double>>& x, const Array<double>& dy) {
    const Array<double> y = softmax(Tensor<double>(x[0]), -1).value();
    return std::vector<Array<double>>{answer(y, dy)};
  };
  const std::string hint = "write dy_j/dx_i for i = j and for i != j, then sum dy_j times it over j";
  g.backward("rows of 5", forward, yours, {random_array({3, 5}, 11, -2, 2)}, {"x"}, hint);
  g.backward("one row of 1", forward, yours, {random_array({1, 1}, 12)}, {"x"},
             "a softmax over one entry is the constant 1: its gradient is 0");
  g.backward("scores up to 20", forward, yours, {random_array({4, 6}, 13, -20, 20)}, {"x"}, hint);
}

void grade_attention_backward(const std::function<AttentionGrads(const Array<double>&, const Array<double>&,
                                                                 const Array<double>&, const Array<double>&)>& answer,
                              Grader& g) {
  const EngineForward forward = [](const std::vector<Tensor<double>>& x) {
    return scaled_dot_product_attention(x[0], x[1], x[2]).output;
  };
  const Backward yours = [&](const std::vector<Array<double>>& x, const Array<double>& dO) {
    const auto [dQ, dK, dV] = answer(x[0], x[1], x[2], dO);
    return std::vector<Array<double>>{dQ, dK, dV};
  };
  const std::string hint =
      "get dV right first (it needs only A and dO), then dA, then dS through the softmax as in 06.1, then dQ and "
      "dK: check each one's shape, and where the 1/sqrt(d) of the forward goes";
  g.backward("n = 3, m = 4, d = 5, dv = 2", forward, yours,
             {random_array({3, 5}, 21), random_array({4, 5}, 22), random_array({4, 2}, 23)}, {"Q", "K", "V"}, hint);
  g.backward("one query, one key", forward, yours,
             {random_array({1, 3}, 24), random_array({1, 3}, 25), random_array({1, 3}, 26)}, {"Q", "K", "V"},
             "with one key A = 1 whatever the scores: dQ and dK are 0, dV = dO");
}


// 06.3: the error of a float central-difference check of dQ at step h, on one seeded draw.
double float_check_error(double h, std::uint64_t seed) {
  Generator gen(seed);
  const Array<double> Q = random_normal<double>({6, 8}, gen), K = random_normal<double>({7, 8}, gen),
                      V = random_normal<double>({7, 8}, gen), U = random_normal<double>({6, 8}, gen);
  const Tensor<double> Qd(Q, true);
  sum(mul(scaled_dot_product_attention(Qd, Tensor<double>(K), Tensor<double>(V)).output, Tensor<double>(U))).backward();
  const Array<double> exact = Qd.grad();
  const Tensor<float> Kf(Array<float>(xt::cast<float>(K))), Vf(Array<float>(xt::cast<float>(V)));
  auto F = [&](const Array<float>& q) {  // the forward in float; the sum with U in double, exactly
    const Array<float> o = scaled_dot_product_attention(Tensor<float>(q), Kf, Vf).output.value();
    double f = 0.0;
    for (std::size_t i = 0; i < o.size(); ++i) f += double(o.flat(i)) * U.flat(i);
    return f;
  };
  const NoGrad no_grad;
  double worst = 0.0;
  for (std::size_t i = 0; i < Q.size(); ++i) {
    Array<float> up = xt::cast<float>(Q), down = up;
    up.flat(i) += float(h), down.flat(i) -= float(h);
    const double numeric = (F(up) - F(down)) / (2.0 * h);
    worst = std::max(worst, std::abs(numeric - exact.flat(i)) / std::max(std::abs(exact.flat(i)), 1.0));
  }
  return worst;
}

double mean_float_check_error(double h) {
  double e = 0.0;
  for (std::uint64_t seed : {61, 62, 63}) e += float_check_error(h, seed) / 3.0;
  return e;
}

void grade_float_check_step(const std::function<double()>& answer, Grader& g) {
  const double h = answer();
  if (!g.check(std::isfinite(h) && h > 0.0 && h <= 1.0, "a step h in (0, 1]", "yours " + std::to_string(h),
               "h is how far each entry of Q moves: a positive number"))
    return;
  double best = INFINITY, best_h = 0.0;
  for (int k = 0; k <= 16; ++k) {
    const double step = std::pow(10.0, -0.5 * k), e = mean_float_check_error(step);
    if (e < best) best = e, best_h = step;
  }
  const double yours = mean_float_check_error(h);
  std::ostringstream detail;
  detail.precision(3);
  detail << "h = " << h << ": measured error " << yours << "; the grid's best step h = " << best_h << " gives " << best
         << "; target at most 4 x " << best << " = " << 4.0 * best;
  g.check(yours <= 4.0 * best, "a float check of dQ at your step", detail.str(),
          "two errors compete: the rounding of F in float, divided by 2h, and the curvature the secant misses, "
          "growing with h");
}

}  // namespace

EXERCISE(softmax_backward, "The softmax backward", grade_softmax_backward);
HINT(softmax_backward,
     "dy_j/dx_i = y_j (delta_ij - y_i), so dx = y * (dy - s) with s = sum over the row of dy * y, one number per row");
EXERCISE(attention_backward, "Attention's gradients dQ, dK, dV", grade_attention_backward);
HINT(attention_backward,
     "dV = A^T dO; dA = dO V^T; dS = A * (dA - rowsum(dA * A)) (06.1 on each row); dQ = dS K / sqrt(d); "
     "dK = dS^T Q / sqrt(d).");
EXERCISE(float_check_step, "Experiment: the step of a gradient check in float", grade_float_check_step);
HINT(float_check_step,
     "The rounding error of F is about eps |F| with eps = 6e-8 in float, and the difference divides it by 2h: it "
     "grows as eps / h. The secant's own error grows as h^2 times the third derivative / 6. Their sum is smallest "
     "near h = eps^(1/3), about 4e-3 for values of order 1 (here the best lies between 3e-3 and 3e-2); the double "
     "default, 1e-6, is far too small for float.");
