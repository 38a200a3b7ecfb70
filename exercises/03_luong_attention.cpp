// Exercises for lesson 03, Luong's scores. Grade them with build/bin/grade 03.
//
// Write each function in plain xtensor (loops, xt::tanh ...), not with the engine's ops;
// product(a, b) and transposed(a) (exercises/grading/exercise.hpp) multiply and transpose matrices.
#include <tuple>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "nn/attention/scores.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 03.1 The general score ---------------------------------------------------------------------
// Q (n, dq), K (m, dk), W (dq, dk). Return the (n, m) scores s_ij = q_i^T W k_j: one matrix
// product for every pair at once, S = Q W K^T.
Array<double> general_scores(const Array<double>& Q, const Array<double>& K, const Array<double>& W) {
  not_attempted();  // delete this line and write your answer
}

// ---- 03.2 The general score's backward: dQ, dK, dW ---------------------------------------------
// Given dS = dL/dS (n, m) for S = Q W K^T, return {dQ, dK, dW}, in that order. Each is a product
// of the other two factors with dS; let the shapes tell you where the transposes go:
// dQ is (n, dq), dK is (m, dk), dW is (dq, dk).
using GeneralGrads = std::tuple<Array<double>, Array<double>, Array<double>>;  // dQ, dK, dW
GeneralGrads general_backward(const Array<double>& Q, const Array<double>& K, const Array<double>& W,
                              const Array<double>& dS) {
  not_attempted();  // delete this line and write your answer
}

// ---- 03.3 The concat score ----------------------------------------------------------------------
// Q (n, dq), K (m, dk), W (h, dq + dk), v (h). Return the (n, m) scores
//     s_ij = v . tanh(W [q_i; k_j])
// where [q; k] stacks q above k (dq + dk numbers). W [q; k] = W[:, :dq] q + W[:, dq:] k, so, as
// for the additive score, each query and each key needs projecting only once.
Array<double> concat_scores(const Array<double>& Q, const Array<double>& K, const Array<double>& W,
                            const Array<double>& v) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against the engine's score modules.
namespace {

Array<double> engine_scores(const nn::Score<double>& score, const Array<double>& Q, const Array<double>& K) {
  return xt::view(score(unsqueeze(Tensor<double>(Q), 0), unsqueeze(Tensor<double>(K), 0)).value(), 0);
}

void grade_general_scores(const std::function<Array<double>(const Array<double>&, const Array<double>&,
                                                            const Array<double>&)>& answer,
                          Grader& g) {
  Generator gen(51);
  const nn::GeneralScore<double> score(5, 3, gen);  // its W k is Linear(dk -> dq): weight (dq, dk) = W
  const Array<double> W = score.w.weight.value(), Q = random_array({4, 5}, 52), K = random_array({6, 3}, 53);
  g.close("4 queries (dq 5), 6 keys (dk 3), against nn::GeneralScore", answer(Q, K, W), engine_scores(score, Q, K), 1e-10,
          "s_ij = sum over a, c of Q(i, a) W(a, c) K(j, c): W sits between the query and the key");
}

void grade_general_backward(const std::function<GeneralGrads(const Array<double>&, const Array<double>&,
                                                             const Array<double>&, const Array<double>&)>& answer,
                            Grader& g) {
  const EngineForward forward = [](const std::vector<Tensor<double>>& x) {
    return matmul(matmul(x[0], x[2]), x[1], false, true);
  };
  const Backward yours = [&](const std::vector<Array<double>>& x, const Array<double>& dS) {
    const auto [dQ, dK, dW] = answer(x[0], x[1], x[2], dS);
    return std::vector<Array<double>>{dQ, dK, dW};
  };
  g.backward("4 queries (dq 5), 6 keys (dk 3)", forward, yours,
             {random_array({4, 5}, 54), random_array({6, 3}, 55), random_array({5, 3}, 56)}, {"Q", "K", "W"},
             "S = Q (W K^T), so dQ = dS (W K^T)^T; read S = (Q W) K^T and S = Q W K^T the same way for dK and dW");
}

void grade_concat_scores(const std::function<Array<double>(const Array<double>&, const Array<double>&,
                                                           const Array<double>&, const Array<double>&)>& answer,
                         Grader& g) {
  Generator gen(57);
  const nn::ConcatScore<double> score(5, 3, 7, gen);  // dq 5, dk 3, hidden 7
  const Array<double> W = score.w.weight.value(), v = xt::view(score.v.weight.value(), 0);
  const Array<double> Q = random_array({4, 5}, 58), K = random_array({6, 3}, 59);
  g.close("4 queries (dq 5), 6 keys (dk 3), against nn::ConcatScore", answer(Q, K, W, v), engine_scores(score, Q, K),
          1e-10, "the first dq columns of W multiply the query, the last dk the key; tanh of their sum, then . v");
}

}  // namespace

EXERCISE(general_scores, "The general score q^T W k", grade_general_scores);
EXERCISE(general_backward, "The general score's backward: dQ, dK, dW", grade_general_backward);
EXERCISE(concat_scores, "The concat score v^T tanh(W [q; k])", grade_concat_scores);
