// Exercises for lesson 02, additive (Bahdanau) attention. Grade them with build/bin/grade 02.
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

// ---- 02.1 Additive scores ------------------------------------------------------------------
// Queries Q (n, dq) (the decoder's states), keys K (m, dk) (the encoder's), and the score's
// parameters W_q (h, dq), W_k (h, dk), v (h). Return the (n, m) scores
//     s_ij = v . tanh(W_q q_i + W_k k_j).
// Project every query once and every key once (n + m products, not n m): the sum inside tanh
// only pairs them up.
Array<double> additive_scores(const Array<double>& Q, const Array<double>& K, const Array<double>& Wq,
                              const Array<double>& Wk, const Array<double>& v) {
  not_attempted();  // delete this line and write your answer
}

// ---- 02.2 Their backward: dQ, dK and dv --------------------------------------------------------
// Given dS = dL/ds (n, m), return {dQ, dK, dv}, in that order (the gradients for W_q and W_k
// follow the same way; they are left out). With u_ij = tanh(W_q q_i + W_k k_j) (a vector of h):
//     dv = sum_ij dS_ij u_ij,   dz_ij = dS_ij v * (1 - u_ij^2),
//     dq_i = W_q^T sum_j dz_ij,  dk_j = W_k^T sum_i dz_ij.
using AdditiveGrads = std::tuple<Array<double>, Array<double>, Array<double>>;  // dQ, dK, dv
AdditiveGrads additive_backward(const Array<double>& Q, const Array<double>& K, const Array<double>& Wq,
                                const Array<double>& Wk, const Array<double>& v, const Array<double>& dS) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against the engine's AdditiveScore module.
namespace {

// The module of lessons 02 and 03 with seeded weights, and those weights as plain arrays.
struct Score {
  Generator gen{41};
  nn::AdditiveScore<double> module{5, 4, 6, gen};  // dq 5, dk 4, hidden 6
  Array<double> Wq = module.w_q.weight.value(), Wk = module.w_k.weight.value(),
                v = xt::view(module.v.weight.value(), 0);
};

void grade_additive_scores(const std::function<Array<double>(const Array<double>&, const Array<double>&,
                                                             const Array<double>&, const Array<double>&,
                                                             const Array<double>&)>& answer,
                           Grader& g) {
  const Score s;
  for (std::size_t n : {3, 1}) {
    const Array<double> Q = random_array({n, 5}, 42 + n), K = random_array({7, 4}, 43);
    const Array<double> expected =
        xt::view(s.module(unsqueeze(Tensor<double>(Q), 0), unsqueeze(Tensor<double>(K), 0)).value(), 0);
    g.close(std::to_string(n) + " queries, 7 keys, against nn::AdditiveScore", answer(Q, K, s.Wq, s.Wk, s.v), expected,
            1e-10, "W_q (h, dq) times q_i is a vector of h: add W_k k_j, tanh each entry, then the dot product with v");
  }
}

void grade_additive_backward(const std::function<AdditiveGrads(const Array<double>&, const Array<double>&,
                                                               const Array<double>&, const Array<double>&,
                                                               const Array<double>&, const Array<double>&)>& answer,
                             Grader& g) {
  const Score s;
  // The scores by the engine's ops, as functions of Q, K and v (W_q and W_k held fixed).
  const EngineForward forward = [&](const std::vector<Tensor<double>>& x) {
    const Tensor<double> pq = matmul(x[0], Tensor<double>(s.Wq), false, true), pk = matmul(x[1], Tensor<double>(s.Wk), false, true);
    const Tensor<double> u = attnlab::tanh(add(unsqueeze(pq, 1), unsqueeze(pk, 0)));  // (n, m, h)
    return squeeze(matmul(u, unsqueeze(x[2], 1)), -1);
  };
  const Backward yours = [&](const std::vector<Array<double>>& x, const Array<double>& dS) {
    const auto [dQ, dK, dv] = answer(x[0], x[1], s.Wq, s.Wk, x[2], dS);
    return std::vector<Array<double>>{dQ, dK, dv};
  };
  g.backward("3 queries, 7 keys", forward, yours, {random_array({3, 5}, 44), random_array({7, 4}, 45), s.v},
             {"Q", "K", "v"},
             "1 - u^2 is tanh's derivative at u = tanh(z); dq_i sums over the keys j, dk_j over the queries i");
}

}  // namespace

EXERCISE(additive_scores, "Additive scores", grade_additive_scores);
EXERCISE(additive_backward, "The additive score's backward: dQ, dK, dv", grade_additive_backward);
