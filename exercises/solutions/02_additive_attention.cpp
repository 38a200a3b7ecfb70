// Solutions to exercises/02_additive_attention.cpp, and the mistakes the grader must catch.
#include <cmath>
#include <tuple>

#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

using AdditiveGrads = std::tuple<Array<double>, Array<double>, Array<double>>;

// Rows of X (r, d) times W^T (W is (h, d)): (r, h), every row projected once.
Array<double> project(const Array<double>& X, const Array<double>& W) { return product(X, transposed(W)); }

// u (n, m, h) = tanh(W_q q_i + W_k k_j)
Array<double> features(const Array<double>& Q, const Array<double>& K, const Array<double>& Wq,
                       const Array<double>& Wk) {
  const Array<double> pq = project(Q, Wq), pk = project(K, Wk);
  const std::size_t n = Q.shape()[0], m = K.shape()[0], h = Wq.shape()[0];
  Array<double> u = xt::zeros<double>({n, m, h});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j)
      for (std::size_t a = 0; a < h; ++a) u(i, j, a) = std::tanh(pq(i, a) + pk(j, a));
  return u;
}

Array<double> additive_scores(const Array<double>& Q, const Array<double>& K, const Array<double>& Wq,
                              const Array<double>& Wk, const Array<double>& v) {
  const Array<double> u = features(Q, K, Wq, Wk);
  Array<double> s = xt::zeros<double>({u.shape()[0], u.shape()[1]});
  for (std::size_t i = 0; i < u.shape()[0]; ++i)
    for (std::size_t j = 0; j < u.shape()[1]; ++j)
      for (std::size_t a = 0; a < u.shape()[2]; ++a) s(i, j) += v(a) * u(i, j, a);
  return s;
}
SOLUTION(additive_scores);

Array<double> additive_scores_no_tanh(const Array<double>& Q, const Array<double>& K, const Array<double>& Wq,
                                      const Array<double>& Wk, const Array<double>& v) {
  const Array<double> pq = project(Q, Wq), pk = project(K, Wk);
  Array<double> s = xt::zeros<double>({Q.shape()[0], K.shape()[0]});
  for (std::size_t i = 0; i < s.shape()[0]; ++i)
    for (std::size_t j = 0; j < s.shape()[1]; ++j)
      for (std::size_t a = 0; a < v.size(); ++a) s(i, j) += v(a) * (pq(i, a) + pk(j, a));
  return s;
}
WRONG_ANSWER(additive_scores, additive_scores_no_tanh, "leaves out the tanh: a score linear in q and k");

AdditiveGrads backward(const Array<double>& Q, const Array<double>& K, const Array<double>& Wq, const Array<double>& Wk,
                       const Array<double>& v, const Array<double>& dS, bool derivative_of_tanh) {
  const Array<double> u = features(Q, K, Wq, Wk);
  const std::size_t n = u.shape()[0], m = u.shape()[1], h = u.shape()[2];
  Array<double> dv = xt::zeros<double>({h}), dzq = xt::zeros<double>({n, h}), dzk = xt::zeros<double>({m, h});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < m; ++j)
      for (std::size_t a = 0; a < h; ++a) {
        dv(a) += dS(i, j) * u(i, j, a);
        const double dz = dS(i, j) * v(a) * (derivative_of_tanh ? 1.0 - u(i, j, a) * u(i, j, a) : 1.0);
        dzq(i, a) += dz;
        dzk(j, a) += dz;
      }
  // dq_i = W_q^T dz_i: project by the transpose.
  return {product(dzq, Wq), product(dzk, Wk), dv};
}

AdditiveGrads additive_backward(const Array<double>& Q, const Array<double>& K, const Array<double>& Wq,
                                const Array<double>& Wk, const Array<double>& v, const Array<double>& dS) {
  return backward(Q, K, Wq, Wk, v, dS, true);
}
SOLUTION(additive_backward);

AdditiveGrads additive_backward_tanh_skipped(const Array<double>& Q, const Array<double>& K, const Array<double>& Wq,
                                             const Array<double>& Wk, const Array<double>& v, const Array<double>& dS) {
  return backward(Q, K, Wq, Wk, v, dS, false);
}
WRONG_ANSWER(additive_backward, additive_backward_tanh_skipped, "passes dS v through tanh as if its derivative were 1");

// 02.3: two tanh units facing each other make a bump in q - k, largest at q = k.
using AdditiveParameters = std::tuple<Array<double>, Array<double>, Array<double>>;

AdditiveParameters nearest_key_score() {
  const double a = 2.0, b = 1.0;
  return {Array<double>{{a, b}, {-a, b}}, Array<double>{{-a, 0.0}, {a, 0.0}}, Array<double>{1.0, 1.0}};
}
SOLUTION(nearest_key_score);

AdditiveParameters nearest_key_score_no_shift() {
  const double a = 2.0;
  return {Array<double>{{a, 0.0}, {-a, 0.0}}, Array<double>{{-a, 0.0}, {a, 0.0}}, Array<double>{1.0, 1.0}};
}
WRONG_ANSWER(nearest_key_score, nearest_key_score_no_shift,
             "the two units without a shift: tanh is odd, they cancel, and every score is 0");

AdditiveParameters nearest_key_score_one_unit() {
  return {Array<double>{{1.0, 0.0}}, Array<double>{{1.0, 0.0}}, Array<double>{1.0}};
}
WRONG_ANSWER(nearest_key_score, nearest_key_score_one_unit, "one unit tanh(q + k): it grows with the key, like a dot product");

}  // namespace
