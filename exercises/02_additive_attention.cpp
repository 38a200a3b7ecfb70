// Exercises for lesson 02, additive (Bahdanau) attention. Grade them with build/bin/grade 02.
//
// Write each function in plain xtensor (loops, xt::tanh ...), not with the engine's ops;
// product(a, b) and transposed(a) (exercises/grading/exercise.hpp) multiply and transpose matrices.
#include <cmath>
#include <sstream>
#include <tuple>

#include <xtensor/xmanipulation.hpp>
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
// follow the same way; they are left out). Derive them on paper first: name the vector inside
// the tanh, z_ij = W_q q_i + W_k k_j, and go back from s_ij through the tanh to z_ij, then to
// q_i and k_j. Every score s_ij depends on q_i and on k_j: which pairs does each gradient sum?
using AdditiveGrads = std::tuple<Array<double>, Array<double>, Array<double>>;  // dQ, dK, dv
AdditiveGrads additive_backward(const Array<double>& Q, const Array<double>& K, const Array<double>& Wq,
                                const Array<double>& Wk, const Array<double>& v, const Array<double>& dS) {
  not_attempted();  // delete this line and write your answer
}

// ---- 02.3 Experiment: an additive score that finds the nearest key --------------------------------
// Dot-product scores grow with the key; attention pooling (lesson 01) wanted the NEAREST key. Can
// v . tanh(W_q q + W_k k) be made to want it? Queries and keys are numbers x in [0, 5], given to
// the score as the pair (x, 1) (dq = dk = 2: the constant 1 lets W_q and W_k add a shift). Return
// {W_q (h, 2), W_k (h, 2), v (h)} for a hidden size h of your choice. The grader loads them into
// nn::AdditiveScore (lessons 02 and 03's) and measures, on 600 random queries against 8 random
// keys each (three seeds), the share whose largest score is on the key nearest the query.
// Target: at least 0.95 (the first key, a guess, scores about 1/8).
using AdditiveParameters = std::tuple<Array<double>, Array<double>, Array<double>>;  // W_q, W_k, v
AdditiveParameters nearest_key_score() {
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
             "check tanh's derivative (written with its output u), and which index each gradient sums over");
}


// 02.3: the share of queries whose largest additive score is on their nearest key.
double nearest_key_share(const Array<double>& Wq, const Array<double>& Wk, const Array<double>& v, std::uint64_t seed) {
  const std::size_t h = v.size(), queries = 200, keys = 8;
  Generator gen(seed);
  nn::AdditiveScore<double> score(2, 2, h, gen);
  score.w_q.weight.mutable_value() = Wq, score.w_k.weight.mutable_value() = Wk;
  score.v.weight.mutable_value() = xt::reshape_view(v, {std::size_t(1), h});
  Array<double> q = xt::ones<double>({queries, std::size_t(1), std::size_t(2)});
  Array<double> k = xt::ones<double>({queries, keys, std::size_t(2)});
  for (std::size_t b = 0; b < queries; ++b) {
    q(b, 0, 0) = gen.uniform(0.0, 5.0);
    for (std::size_t j = 0; j < keys; ++j) k(b, j, 0) = gen.uniform(0.0, 5.0);
  }
  const NoGrad no_grad;
  const Array<double> s = score(Tensor<double>(q), Tensor<double>(k)).value();  // (queries, 1, keys)
  std::size_t hits = 0;
  for (std::size_t b = 0; b < queries; ++b) {
    std::size_t top = 0, nearest = 0;
    for (std::size_t j = 1; j < keys; ++j) {
      if (s(b, 0, j) > s(b, 0, top)) top = j;
      if (std::abs(k(b, j, 0) - q(b, 0, 0)) < std::abs(k(b, nearest, 0) - q(b, 0, 0))) nearest = j;
    }
    hits += top == nearest;
  }
  return double(hits) / double(queries);
}

void grade_nearest_key_score(const std::function<AdditiveParameters()>& answer, Grader& g) {
  const auto [Wq, Wk, v] = answer();
  const std::size_t h = v.size();
  const bool shapes = v.dimension() == 1 && h > 0 && Wq.shape() == Shape{h, 2} && Wk.shape() == Shape{h, 2};
  if (!g.check(shapes, "the shapes: W_q (h, 2), W_k (h, 2), v (h)",
               "yours: W_q " + std::to_string(Wq.size()) + " entries, W_k " + std::to_string(Wk.size()) + ", v " +
                   std::to_string(h),
               "column 0 multiplies x, column 1 the constant 1"))
    return;
  double share = 0.0;
  for (std::uint64_t seed : {201, 202, 203}) share += nearest_key_share(Wq, Wk, v, seed) / 3.0;
  std::ostringstream detail;
  detail.precision(3);
  detail << "measured: the largest score is on the nearest key for a share " << share
         << " of 600 queries; target at least 0.95";
  g.check(share >= 0.95, "your score on 600 queries against 8 keys each", detail.str(),
          "the score must depend on q - k only, and be largest at q - k = 0: tanh is odd, so how can a sum of tanh "
          "units make a bump?");
}

}  // namespace

EXERCISE(additive_scores, "Additive scores", grade_additive_scores);
EXERCISE(additive_backward, "The additive score's backward: dQ, dK, dv", grade_additive_backward);
HINT(additive_backward,
     "With u_ij = tanh(W_q q_i + W_k k_j) (a vector of h): dv = sum_ij dS_ij u_ij; dz_ij = dS_ij v * (1 - u_ij^2); "
     "dq_i = W_q^T sum_j dz_ij; dk_j = W_k^T sum_i dz_ij.");
EXERCISE(nearest_key_score, "Experiment: an additive score that finds the nearest key", grade_nearest_key_score);
HINT(nearest_key_score,
     "Two units, h = 2: u_1 = tanh(a (q - k) + b), u_2 = tanh(-a (q - k) + b), v = (1, 1). Their sum is even in "
     "q - k and, for b > 0, largest at q = k (2 tanh b) and falling towards 0 as |q - k| grows. In matrices: "
     "W_q = [[a, b], [-a, b]], W_k = [[-a, 0], [a, 0]], with for example a = 2, b = 1.");
