// Exercises for lesson 03, Luong's scores. Grade them with build/bin/grade 03.
//
// Write each function in plain xtensor (loops, xt::tanh ...), not with the engine's ops;
// product(a, b) and transposed(a) (exercises/grading/exercise.hpp) multiply and transpose matrices.
#include <cmath>
#include <memory>
#include <sstream>
#include <tuple>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "nn/attention/local_m.hpp"
#include "nn/attention/scores.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 03.1 The general score ---------------------------------------------------------------------
// Q (n, dq), K (m, dk), W (dq, dk). Return the (n, m) scores s_ij = q_i^T W k_j, every pair at
// once without a loop over the pairs (product(a, b) and transposed(a) are all you need).
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
// where [q; k] stacks q above k (dq + dk numbers). Do not build the n m stacked vectors: as for
// the additive score, each query and each key can be projected once.
Array<double> concat_scores(const Array<double>& Q, const Array<double>& K, const Array<double>& W,
                            const Array<double>& v) {
  not_attempted();  // delete this line and write your answer
}

// ---- 03.4 Experiment: learn W from examples ------------------------------------------------------
// Queries and keys of d = 16 numbers, but the keys are written in another coordinate system: the key
// that matches query q is (nearly) R q for a rotation R nobody tells you. The dot score q . k is
// then blind: it compares coordinates that mean different things. The general score q^T W k can
// undo R, if W is right. You get 200 example pairs, row i of `queries` (200, 16) and row i of
// `keys` (200, 16) matching. Return W (16, 16). The grader loads it into nn::GeneralScore and
// measures, for 300 new queries each against 16 keys (its match and 15 others, all rotated by the
// same R), the share whose largest score is the match, on three rotations. Target: at least 0.9
// (the dot score, W = I, gets about 1/16).
Array<double> general_from_examples(const Array<double>& queries, const Array<double>& keys) {
  not_attempted();  // delete this line and write your answer
}

// ---- 03.5 Local-m's weights ----------------------------------------------------------------------
// scores (T, S): score(h_t, hbar_s) of one example's T output steps against its S input positions
// (all real). Local-m centres a window of half-width D at the output step itself, p_t = t, but never
// past the last input position. Return the (T, S) weights: inside the window, the softmax of the
// scores over the window's positions only, scaled down by a Gaussian around p_t of sigma = D / 2
// (1 at p_t itself); outside the window, exactly 0.
Array<double> local_m_weights(const Array<double>& scores, std::size_t D) {
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
          "W sits between the query and the key: check which index of W meets the query, and which the key");
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
             "group the product two ways, S = Q (W K^T) and S = (Q W) K^T: each is one matrix product, whose "
             "backward you know; match the shapes");
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


// 03.5: against nn::local_m_attention with the dot score, on one example: more input positions
// than output steps, then fewer (the centre stops at the last input position).
void grade_local_m_weights(const std::function<Array<double>(const Array<double>&, std::size_t)>& answer, Grader& g) {
  Generator gen(61);
  const std::unique_ptr<nn::Score<double>> score = nn::make_score<double>("dot", 4, 4, gen, 1);
  for (const auto& [steps, inputs, D] : {std::tuple{6, 9, 2}, std::tuple{6, 4, 1}}) {
    const Array<double> Q = random_array({std::size_t(steps), 4}, 62), K = random_array({std::size_t(inputs), 4}, 63);
    const Tensor<double> q(Array<double>(xt::expand_dims(Q, 0))), k(Array<double>(xt::expand_dims(K, 0)));
    const Allowed all = Allowed::where(Mask(xt::ones<bool>({std::size_t(1), std::size_t(inputs)})));
    const Array<double> engine = xt::view(nn::local_m_attention(*score, q, k, k, all, D, 0).weights.value(), 0);
    g.close(std::to_string(steps) + " output steps, " + std::to_string(inputs) + " inputs, D = " + std::to_string(D) +
                ", against nn::local_m_attention",
            answer(engine_scores(*score, Q, K), std::size_t(D)), engine, 1e-10,
            "the softmax runs over the window only, the Gaussian multiplies after it, and the centre stops at S - 1");
  }
}

// 03.4: a random rotation (Gram-Schmidt on a normal matrix), its examples and its retrieval test.
Array<double> random_rotation(std::size_t d, Generator& gen) {
  Array<double> r = random_normal<double>({d, d}, gen);
  for (std::size_t i = 0; i < d; ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      double dot = 0.0;
      for (std::size_t c = 0; c < d; ++c) dot += r(i, c) * r(j, c);
      for (std::size_t c = 0; c < d; ++c) r(i, c) -= dot * r(j, c);
    }
    double norm = 0.0;
    for (std::size_t c = 0; c < d; ++c) norm += r(i, c) * r(i, c);
    for (std::size_t c = 0; c < d; ++c) r(i, c) /= std::sqrt(norm);
  }
  return r;
}

// Rows of x (n, d) rotated by r, plus N(0, 0.1^2) noise: the keys.
Array<double> rotated(const Array<double>& x, const Array<double>& r, Generator& gen) {
  return product(x, transposed(r)) + random_normal<double>({x.shape()[0], x.shape()[1]}, gen, 0.0, 0.1);
}

void grade_general_from_examples(const std::function<Array<double>(const Array<double>&, const Array<double>&)>& answer,
                                 Grader& g) {
  constexpr std::size_t d = 16, queries = 300, keys = 16;
  double share = 0.0;
  for (std::uint64_t seed : {301, 302, 303}) {
    Generator gen(seed);
    const Array<double> r = random_rotation(d, gen), examples = random_normal<double>({200, d}, gen);
    const Array<double> W = answer(examples, rotated(examples, r, gen));
    if (!g.check(W.shape() == Shape{d, d}, "W is (16, 16)", "yours has " + std::to_string(W.size()) + " entries",
                 "q^T W k with q and k of 16 numbers"))
      return;
    nn::GeneralScore<double> score(d, d, gen);
    score.w.weight.mutable_value() = W;
    // Query b's match is key 0 of its row before the shuffle: at a random place among the 16.
    const Array<double> q = random_normal<double>({queries, d}, gen);
    Array<double> k = rotated(random_normal<double>({queries * keys, d}, gen), r, gen);
    k.reshape({queries, keys, d});
    const Array<double> match = rotated(q, r, gen);
    std::vector<std::size_t> where(queries);
    for (std::size_t b = 0; b < queries; ++b) {
      where[b] = std::size_t(gen.uniform(0.0, double(keys))) % keys;
      for (std::size_t c = 0; c < d; ++c) k(b, where[b], c) = match(b, c);
    }
    const NoGrad no_grad;
    const Array<double> s = score(Tensor<double>(Array<double>(xt::reshape_view(q, {queries, std::size_t(1), d}))),
                                  Tensor<double>(k)).value();  // (queries, 1, keys)
    std::size_t hits = 0;
    for (std::size_t b = 0; b < queries; ++b) {
      std::size_t top = 0;
      for (std::size_t j = 1; j < keys; ++j)
        if (s(b, 0, j) > s(b, 0, top)) top = j;
      hits += top == where[b];
    }
    share += double(hits) / double(queries) / 3.0;
  }
  std::ostringstream detail;
  detail.precision(3);
  detail << "measured: the match has the largest score for a share " << share
         << " of 900 queries (three rotations); target at least 0.9";
  g.check(share >= 0.9, "your W on new queries against 16 keys each", detail.str(),
          "q^T W k is largest for the match when W k brings the key back to the query's coordinates: what do the "
          "examples tell you about that map?");
}

}  // namespace

EXERCISE(general_scores, "The general score q^T W k", grade_general_scores);
HINT(general_scores, "S = Q W K^T: s_ij = sum over a, c of Q(i, a) W(a, c) K(j, c).");
EXERCISE(general_backward, "The general score's backward: dQ, dK, dW", grade_general_backward);
HINT(general_backward, "dQ = dS K W^T (n, dq); dK = dS^T Q W (m, dk); dW = Q^T dS K (dq, dk).");
EXERCISE(concat_scores, "The concat score v^T tanh(W [q; k])", grade_concat_scores);
HINT(concat_scores,
     "W [q; k] = W[:, :dq] q + W[:, dq:] k: project the queries by the first dq columns and the keys by the last dk, "
     "then s_ij = v . tanh(Pq_i + Pk_j).");
EXERCISE(general_from_examples, "Experiment: learn W from examples", grade_general_from_examples);
EXERCISE(local_m_weights, "Local-m's weights: a window at the output step", grade_local_m_weights);
HINT(general_from_examples,
     "For a match k = R q (R a rotation, R^T R = I), q^T W k = q^T W R q is |q|^2, well above what an unrelated "
     "key scores, when W R = I: W = R^T. The examples estimate it: with q of independent unit-variance "
     "entries, the mean over examples of q k^T is E[q q^T] R^T = R^T. So W = Q^T K / 200 (or the least-squares "
     "fit of q from k).");
HINT(local_m_weights,
     "p_t = min(t, S - 1); window: |s - p_t| <= D; a_t(s) = exp(score_ts) / sum over the window of exp(score_ts') "
     "times exp(-(s - p_t)^2 / (2 sigma^2)), sigma = D / 2; 0 outside the window.");
