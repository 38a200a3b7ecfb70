// Solutions to exercises/06_attention_backward.cpp, and the mistakes the grader must catch.
#include <cmath>
#include <tuple>

#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

using AttentionGrads = std::tuple<Array<double>, Array<double>, Array<double>>;

// a b, optionally with either side transposed: the products of the backward.
Array<double> mm(const Array<double>& a, const Array<double>& b, bool ta = false, bool tb = false) {
  return product(ta ? transposed(a) : a, tb ? transposed(b) : b);
}

Array<double> row_softmax(const Array<double>& s) {
  Array<double> e = xt::exp(s - xt::eval(xt::amax(s, {1}, xt::keep_dims)));
  return e / xt::eval(xt::sum(e, {1}, xt::keep_dims));
}

// dx = y * (dy - <dy, y>) row by row: the Jacobian diag(y) - y y^T applied to dy.
Array<double> softmax_backward(const Array<double>& y, const Array<double>& dy) {
  const Array<double> s = xt::sum(dy * y, {1}, xt::keep_dims);
  return y * (dy - s);
}
SOLUTION(softmax_backward);

Array<double> softmax_backward_diagonal(const Array<double>& y, const Array<double>& dy) {
  return y * (1.0 - y) * dy;  // the Jacobian's diagonal only
}
WRONG_ANSWER(softmax_backward, softmax_backward_diagonal, "keeps only the Jacobian's diagonal y (1 - y)");

Array<double> softmax_backward_column_sum(const Array<double>& y, const Array<double>& dy) {
  const Array<double> s = xt::sum(dy * y, {0}, xt::keep_dims);  // summed over the wrong axis
  return y * (dy - s);
}
WRONG_ANSWER(softmax_backward, softmax_backward_column_sum, "sums dy * y down the columns instead of along rows");

AttentionGrads backward(const Array<double>& Q, const Array<double>& K, const Array<double>& V, const Array<double>& dO,
                        double sign_of_dK) {
  const double scale = 1.0 / std::sqrt(double(Q.shape()[1]));
  const Array<double> A = row_softmax(mm(Q, K, false, true) * scale);
  const Array<double> dV = mm(A, dO, true, false);
  const Array<double> dA = mm(dO, V, false, true);
  const Array<double> dS = softmax_backward(A, dA);
  return {mm(dS, K) * scale, sign_of_dK * mm(dS, Q, true, false) * scale, dV};
}

AttentionGrads attention_backward(const Array<double>& Q, const Array<double>& K, const Array<double>& V,
                                  const Array<double>& dO) {
  return backward(Q, K, V, dO, 1.0);
}
SOLUTION(attention_backward);

AttentionGrads attention_backward_negated_dK(const Array<double>& Q, const Array<double>& K, const Array<double>& V,
                                             const Array<double>& dO) {
  return backward(Q, K, V, dO, -1.0);
}
WRONG_ANSWER(attention_backward, attention_backward_negated_dK, "dK with the wrong sign");

AttentionGrads attention_backward_unscaled(const Array<double>& Q, const Array<double>& K, const Array<double>& V,
                                           const Array<double>& dO) {
  const double scale = std::sqrt(double(Q.shape()[1]));  // undo the 1/sqrt(d) on dQ and dK
  auto [dQ, dK, dV] = backward(Q, K, V, dO, 1.0);
  return {dQ * scale, dK * scale, dV};
}
WRONG_ANSWER(attention_backward, attention_backward_unscaled, "forgets the 1/sqrt(d) in dQ and dK");

AttentionGrads attention_backward_dV_untransposed(const Array<double>& Q, const Array<double>& K,
                                                  const Array<double>& V, const Array<double>& dO) {
  auto [dQ, dK, dV] = backward(Q, K, V, dO, 1.0);
  return {dQ, dK, xt::transpose(dV)};
}
WRONG_ANSWER(attention_backward, attention_backward_dV_untransposed, "dV transposed: (dv, m) instead of (m, dv)");

// 06.3: about eps^(1/3) in float, where rounding (eps / h) and truncation (h^2) balance.
double float_check_step() { return 4e-3; }
SOLUTION(float_check_step);

double float_check_step_double_default() { return 1e-6; }
WRONG_ANSWER(float_check_step, float_check_step_double_default, "keeps a double-precision step: rounding swamps the difference");

double float_check_step_large() { return 0.3; }
WRONG_ANSWER(float_check_step, float_check_step_large, "a step so large that the secant misses the curvature");

}  // namespace
