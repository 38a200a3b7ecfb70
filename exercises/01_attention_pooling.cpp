// Exercises for lesson 01, attention pooling (Nadaraya-Watson regression). Grade them with
// build/bin/grade 01.
//
// Write each function in plain xtensor (loops, xt::exp ...), not with the engine's ops;
// product(a, b) and transposed(a) (exercises/grading/exercise.hpp) multiply and transpose matrices.
#include <cmath>

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
// The lesson learns w by gradient descent on L(w) = mean over r of (f(q_r) - t_r)^2. Return
// dL/dw, by hand: dL/df_r = 2 (f_r - t_r) / n; df_r/dw = sum_i a_ri (v_i - f_r) ds_ri/dw (the
// softmax's derivative, weighted by the values); ds_ri/dw = -(q_r - k_i)^2 w.
double width_gradient(const Array<double>& queries, const Array<double>& keys, const Array<double>& values,
                      const Array<double>& targets, double w) {
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
      "dL/dw = sum_r 2 (f_r - t_r) / n * sum_i a_ri (v_i - f_r) * (-(q_r - k_i)^2 w): check the 2 and the 1/n";
  g.backward("w = 1.5", loss, yours, {Array<double>{1.5}}, {"w"}, hint);
  g.backward("w = 0.3", loss, yours, {Array<double>{0.3}}, {"w"}, hint);
}

}  // namespace

EXERCISE(gaussian_weights, "Gaussian attention weights", grade_gaussian_weights);
EXERCISE(nadaraya_watson, "The Nadaraya-Watson estimate", grade_nadaraya_watson);
EXERCISE(width_gradient, "The gradient that learns the width", grade_width_gradient);
