// Exercises for lesson 17, exact attention by tiles. Grade them with build/bin/grade 17.
//
// Write each function in plain xtensor (xt::zeros, loops, std::exp ...), not with the engine's
// ops: these are the inner steps of core/ops/tiled_attention.cpp.
#include <cmath>
#include <limits>
#include <tuple>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "lessons/kit/timing.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 17.1 One step of the online softmax ----------------------------------------------------
// One query row has seen some keys: m is the largest score so far (-infinity before the first
// tile), l = sum of e^(s_j - m) over those keys, acc (dv) = sum of e^(s_j - m) v_j (the lesson's
// m, l and a). A new tile brings scores (t) and their values (t, dv). Return the updated
// {m', l', acc'}: the same three quantities over all the keys seen, old and new, without going
// back to the old scores (they are gone). Careful when m is -infinity: nothing was seen yet.
// Never compute e^s unshifted: the grader sends scores in the thousands.
using OnlineState = std::tuple<double, double, Array<double>>;  // m, l, acc
OnlineState online_softmax_update(double m, double l, const Array<double>& acc, const Array<double>& scores,
                                  const Array<double>& values) {
  not_attempted();  // delete this line and write your answer
}

// ---- 17.2 The backward from the saved log-sum-exp ------------------------------------------
// The tiled op saves no weights, only the output O (n, dv) and, for each query row, its
// log-sum-exp L_i = log sum_j e^(S_ij) (n). Given the scores S (n, m) recomputed from Q and K,
// L, the values V (m, dv), O and dO = dL/dO (n, dv), return dS = dL/dS (n, m), the way the
// tiled op does: recompute the weights from S and L (no softmax over a row of S again), go back
// through O = P V, then through the softmax (06.1). The softmax rule needs one number per row that
// O and dO give you without summing over a row of P: find it.
Array<double> scores_backward(const Array<double>& S, const Array<double>& L, const Array<double>& V,
                              const Array<double>& O, const Array<double>& dO) {
  not_attempted();  // delete this line and write your answer
}

// ---- 17.3 Predict: how many bytes does each op hold? ----------------------------------------
// An experiment, graded by measuring. One head of attention on one sequence of n tokens, width d,
// in float, forward and then backward: the fused op of lesson 06 (scaled_dot_product_attention)
// and the tiled op (tiled_attention). Predict, before you measure, the most bytes each holds at
// any moment beyond its inputs Q, K, V (its output, what it saves for the backward, its scratch,
// and the gradients dQ, dK, dV it returns), as a function of n and d: return {fused, tiled}. Count
// the arrays that grow like n^2 and like n d, in the order the forward and the backward make them.
// The grader counts the bytes with the allocator (lessons/kit/timing: attention_cost) at n = 1024,
// d = 64 and n = 2048, d = 64, and compares within 15 %.
std::tuple<double, double> predicted_peak_bytes(std::size_t n, std::size_t d) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against the engine's attention ops.
namespace {

// The engine's answer for a row of scores s against values: softmax(s) V.
Array<double> engine_row(const Array<double>& s, const Array<double>& values) {
  Array<double> row = s;
  row.reshape({1, s.size()});
  return matmul(softmax(Tensor<double>(row), -1), Tensor<double>(values)).value();
}

void grade_online_softmax_update(
    const std::function<OnlineState(double, double, const Array<double>&, const Array<double>&, const Array<double>&)>&
        answer,
    Grader& g) {
  const double none = -std::numeric_limits<double>::infinity();
  // A row of 12 scores in tiles of 4: the max moves in tile 2, not in tile 3.
  const Array<double> s = {0.3, -1.2, 0.8, 0.1, 1.9, 0.4, -0.5, 1.1, -0.8, 0.2, 1.5, -0.3};
  const Array<double> v = random_array({12, 3}, 31);
  auto tile = [](const Array<double>& a, std::size_t t) { return Array<double>(xt::view(a, xt::range(4 * t, 4 * t + 4))); };
  const OnlineState first = answer(none, 0.0, xt::zeros<double>({3}), tile(s, 0), tile(v, 0));
  const double l1 = std::exp(0.3 - 0.8) + std::exp(-1.2 - 0.8) + 1.0 + std::exp(0.1 - 0.8);
  g.check(std::get<0>(first) == 0.8, "the first tile: m is its largest score",
          "yours " + std::to_string(std::get<0>(first)) + ", expected 0.8", "m is the largest score seen so far");
  g.check(std::abs(std::get<1>(first) - l1) <= 1e-12, "the first tile: l = sum e^(s - m)",
          "yours " + std::to_string(std::get<1>(first)) + ", expected " + std::to_string(l1),
          "from m = -infinity nothing is carried over: l and acc start at 0");
  OnlineState state{none, 0.0, xt::zeros<double>({3})};
  for (std::size_t t = 0; t < 3; ++t)
    state = answer(std::get<0>(state), std::get<1>(state), std::get<2>(state), tile(s, t), tile(v, t));
  g.close("three tiles, then acc / l: softmax(s) V", Array<double>(std::get<2>(state) / std::get<1>(state)),
          xt::view(engine_row(s, v), 0), 1e-12,
          "the running values are right after one tile but not after three: what happens to the old terms when the "
          "max moves?");
  // Keys already seen (m = -5, l = 2, acc) and a tile of scores in the thousands.
  const Array<double> big = {1000.0, 999.0, 1001.0, 998.0}, acc0 = {1.0, -1.0, 0.5}, vb = tile(v, 1);
  const OnlineState b = answer(-5.0, 2.0, acc0, big, vb);
  double want_l = 2.0 * std::exp(-5.0 - 1001.0);
  Array<double> want_acc = acc0 * std::exp(-5.0 - 1001.0);
  for (std::size_t j = 0; j < 4; ++j) {
    const double p = std::exp(big(j) - 1001.0);
    want_l += p;
    want_acc += p * Array<double>(xt::view(vb, j));
  }
  const std::string hint = "e^1000 is infinity in double: every exponent must be shifted by the new max";
  g.check(std::get<0>(b) == 1001.0 && std::abs(std::get<1>(b) - want_l) <= 1e-12 * want_l,
          "scores in the thousands: m' and l'",
          "yours m' = " + std::to_string(std::get<0>(b)) + ", l' = " + std::to_string(std::get<1>(b)) +
              "; expected 1001, " + std::to_string(want_l),
          hint);
  g.close("scores in the thousands: acc'", std::get<2>(b), want_acc, 1e-12, hint);
}

void grade_scores_backward(const std::function<Array<double>(const Array<double>&, const Array<double>&,
                                                             const Array<double>&, const Array<double>&,
                                                             const Array<double>&)>& answer,
                           Grader& g) {
  auto one = [&](const std::string& what, const Shape& s_shape, std::size_t dv, std::uint64_t seed, double spread) {
    const Array<double> S = random_array(s_shape, seed, -spread, spread), V = random_array({s_shape[1], dv}, seed + 1),
                        dO = random_array({s_shape[0], dv}, seed + 2);
    // The engine: O = softmax(S) V, and dL/dS by its backward.
    const Tensor<double> St(S, true);
    const Tensor<double> O = matmul(softmax(St, -1), Tensor<double>(V));
    O.backward(dO);
    Array<double> L = xt::zeros<double>({s_shape[0]});
    for (std::size_t i = 0; i < s_shape[0]; ++i) {
      double mx = -INFINITY, sum = 0;
      for (std::size_t j = 0; j < s_shape[1]; ++j) mx = std::max(mx, S(i, j));
      for (std::size_t j = 0; j < s_shape[1]; ++j) sum += std::exp(S(i, j) - mx);
      L(i) = mx + std::log(sum);
    }
    g.close(what, answer(S, L, V, O.value(), dO), St.grad(), 1e-10,
            "compare your P = e^(S - L) with softmax(S) first (rows sum to 1), then dP, then the softmax step");
  };
  one("n = 4, m = 6, dv = 3", {4, 6}, 3, 41, 2.0);
  one("one key: dS is 0", {3, 1}, 2, 44, 2.0);
  one("scores up to 50", {5, 7}, 2, 47, 50.0);
}

void grade_predicted_peak_bytes(const std::function<std::tuple<double, double>(std::size_t, std::size_t)>& answer,
                                Grader& g) {
  auto fused = [](auto& q, auto& k, auto& v) { return scaled_dot_product_attention(q, k, v).output; };
  auto tiled = [](auto& q, auto& k, auto& v) { return tiled_attention(q, k, v); };
  lessons::CostOptions once;
  once.rounds = [](std::size_t) { return 1; };
  for (const auto& [n, d] : {std::pair{std::size_t(1024), std::size_t(64)}, std::pair{std::size_t(2048), std::size_t(64)}}) {
    const std::vector<lessons::CostCurve> c = lessons::costs_against_n(
        {lessons::attention_cost("fused", fused, d), lessons::attention_cost("tiled", tiled, d)}, {n}, once);
    const double mib = 1024.0 * 1024.0, fused_bytes = c[0].peak_mib[0] * mib, tiled_bytes = c[1].peak_mib[0] * mib;
    const std::string at = "n = " + std::to_string(n) + ", d = " + std::to_string(d) + ": ";
    if (fused_bytes <= 0 || tiled_bytes <= 0) {
      g.check(false, at + "the allocator counts bytes",
              "it measured 0: this build's allocator does not count (core/runtime/allocator.hpp)");
      return;
    }
    const auto [f, t] = answer(n, d);
    for (const auto& [what, yours, measured] :
         {std::tuple{"the fused op", f, fused_bytes}, std::tuple{"the tiled op", t, tiled_bytes}})
      g.check(std::abs(yours - measured) <= 0.15 * measured, at + what + ": your prediction against the measured peak",
              "predicted " + std::to_string(yours / mib) + " MiB, measured " + std::to_string(measured / mib) +
                  " MiB (tolerance 15 %)",
              "which arrays are alive at once? The forward's output and what it saves stay until the backward is done; "
              "the backward makes its own n x n or n x d arrays on top");
  }
}

}  // namespace

EXERCISE(online_softmax_update, "One step of the online softmax", grade_online_softmax_update);
HINT(online_softmax_update,
     "m' = max(m, largest new score); every old term e^(s - m) becomes e^(s - m) e^(m - m'), so l' = l e^(m - m') + "
     "sum_new e^(s_j - m') and acc' = acc e^(m - m') + sum_new e^(s_j - m') v_j; from m = -infinity, l = acc = 0");
EXERCISE(scores_backward, "The backward from the saved log-sum-exp", grade_scores_backward);
HINT(scores_backward,
     "P = e^(S - L) row by row, dP = dO V^T, and dS = P * (dP - D) with D_i = sum_j P_ij dP_ij = dO_i . O_i (because "
     "O_i = sum_j P_ij V_j)");
EXERCISE(predicted_peak_bytes, "Predict: how many bytes does each op hold?", grade_predicted_peak_bytes);
HINT(predicted_peak_bytes,
     "in floats: the output O and dQ, dK, dV are 4 n d, the backward's scratch about 2 n d more: 6 n d for the tiled "
     "op; the fused op also holds the weights P it saved and, in its backward, dP while P is alive: 2 n^2 + 6 n d");
