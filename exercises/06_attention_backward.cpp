// Exercises for lesson 06, the backward pass of attention. Grade them with build/bin/grade 06.
//
// Each function is a backward: given the forward's inputs and dL/d(output), return dL/d(input)
// for every input, in plain xtensor (product(a, b) and transposed(a), in exercises/grading/
// exercise.hpp, multiply and transpose matrices). The grader compares your gradients with the
// engine's own backward, entry by entry, and runs the engine's gradient check (core/gradcheck:
// central differences with a random upstream gradient) on them.
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
      "get dV right first (it needs only A and dO), then dA = dO V^T, dS through the softmax as in 06.1, and "
      "dQ, dK from S = Q K^T / sqrt(d): both carry the 1/sqrt(d), and a transpose each";
  g.backward("n = 3, m = 4, d = 5, dv = 2", forward, yours,
             {random_array({3, 5}, 21), random_array({4, 5}, 22), random_array({4, 2}, 23)}, {"Q", "K", "V"}, hint);
  g.backward("one query, one key", forward, yours,
             {random_array({1, 3}, 24), random_array({1, 3}, 25), random_array({1, 3}, 26)}, {"Q", "K", "V"},
             "with one key A = 1 whatever the scores: dQ and dK are 0, dV = dO");
}

}  // namespace

EXERCISE(softmax_backward, "The softmax backward", grade_softmax_backward);
HINT(softmax_backward,
     "dy_j/dx_i = y_j (delta_ij - y_i), so dx = y * (dy - s) with s = sum over the row of dy * y, one number per row");
EXERCISE(attention_backward, "Attention's gradients dQ, dK, dV", grade_attention_backward);
