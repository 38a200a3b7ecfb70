// Solutions to exercises/03_luong_attention.cpp, and the mistakes the grader must catch.
#include <algorithm>
#include <cmath>
#include <tuple>

#include <xtensor/xbuilder.hpp>

#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

using GeneralGrads = std::tuple<Array<double>, Array<double>, Array<double>>;

Array<double> mm(const Array<double>& a, const Array<double>& b) { return product(a, b); }
Array<double> tr(const Array<double>& a) { return transposed(a); }

Array<double> general_scores(const Array<double>& Q, const Array<double>& K, const Array<double>& W) {
  return mm(mm(Q, W), tr(K));
}
SOLUTION(general_scores);

Array<double> general_scores_transposed_W(const Array<double>& Q, const Array<double>& K, const Array<double>& W) {
  return mm(mm(K, tr(W)), tr(Q));  // (m, n): keys down the rows
}
WRONG_ANSWER(general_scores, general_scores_transposed_W, "K W^T Q^T: keys as rows, the scores transposed");

GeneralGrads general_backward(const Array<double>& Q, const Array<double>& K, const Array<double>& W,
                              const Array<double>& dS) {
  return {mm(dS, mm(K, tr(W))), mm(tr(dS), mm(Q, W)), mm(mm(tr(Q), dS), K)};
}
SOLUTION(general_backward);

GeneralGrads general_backward_no_W_in_dK(const Array<double>& Q, const Array<double>& K, const Array<double>& W,
                                         const Array<double>& dS) {
  auto [dQ, dK, dW] = general_backward(Q, K, W, dS);
  return {dQ, mm(tr(dS), Q), dW};  // as if S were Q K^T: only right when dq == dk and W = I
}
WRONG_ANSWER(general_backward, general_backward_no_W_in_dK, "dK = dS^T Q, the dot score's, without W");

GeneralGrads general_backward_dW_transposed(const Array<double>& Q, const Array<double>& K, const Array<double>& W,
                                            const Array<double>& dS) {
  auto [dQ, dK, dW] = general_backward(Q, K, W, dS);
  return {dQ, dK, tr(dW)};
}
WRONG_ANSWER(general_backward, general_backward_dW_transposed, "dW transposed: (dk, dq)");

Array<double> concat(const Array<double>& Q, const Array<double>& K, const Array<double>& W, const Array<double>& v,
                     bool query_first) {
  const std::size_t dq = Q.shape()[1], dk = K.shape()[1], h = W.shape()[0];
  const std::size_t q0 = query_first ? 0 : dk, k0 = query_first ? dq : 0;  // where each part's columns start
  Array<double> s = xt::zeros<double>({Q.shape()[0], K.shape()[0]});
  for (std::size_t i = 0; i < s.shape()[0]; ++i)
    for (std::size_t j = 0; j < s.shape()[1]; ++j)
      for (std::size_t a = 0; a < h; ++a) {
        double z = 0.0;
        for (std::size_t c = 0; c < dq; ++c) z += W(a, q0 + c) * Q(i, c);
        for (std::size_t c = 0; c < dk; ++c) z += W(a, k0 + c) * K(j, c);
        s(i, j) += v(a) * std::tanh(z);
      }
  return s;
}

Array<double> concat_scores(const Array<double>& Q, const Array<double>& K, const Array<double>& W,
                            const Array<double>& v) {
  return concat(Q, K, W, v, true);
}
SOLUTION(concat_scores);

Array<double> concat_scores_key_first(const Array<double>& Q, const Array<double>& K, const Array<double>& W,
                                      const Array<double>& v) {
  return concat(Q, K, W, v, false);
}
WRONG_ANSWER(concat_scores, concat_scores_key_first, "stacks [k; q] instead of [q; k]");

// 03.4: W = mean of q k^T over the examples, an estimate of R^T for k = R q.
Array<double> general_from_examples(const Array<double>& queries, const Array<double>& keys) {
  return product(transposed(queries), keys) / double(queries.shape()[0]);
}
SOLUTION(general_from_examples);

Array<double> general_from_examples_dot(const Array<double>& queries, const Array<double>&) {
  return xt::eye<double>(queries.shape()[1]);
}
WRONG_ANSWER(general_from_examples, general_from_examples_dot,
             "W = I, the dot score: compares coordinates that mean different things");

Array<double> general_from_examples_forward_map(const Array<double>& queries, const Array<double>& keys) {
  return product(transposed(keys), queries) / double(queries.shape()[0]);
}
WRONG_ANSWER(general_from_examples, general_from_examples_forward_map,
             "W = mean of k q^T, the rotation R itself: it rotates the key further instead of back");

// 03.5: the softmax over the window [p_t - D, p_t + D], p_t = min(t, S - 1), times the Gaussian.
Array<double> local_m(const Array<double>& scores, std::size_t D, bool clip, bool renormalize, bool gaussian) {
  const std::size_t T = scores.shape()[0], S = scores.shape()[1];
  const double sigma = D / 2.0;
  Array<double> a = xt::zeros<double>({T, S});
  for (std::size_t t = 0; t < T; ++t) {
    const double p = clip ? double(std::min(t, S - 1)) : double(t);
    double total = 0.0;
    for (std::size_t s = 0; s < S; ++s)
      if (!renormalize || std::abs(double(s) - p) <= double(D)) total += std::exp(scores(t, s));
    for (std::size_t s = 0; s < S; ++s)
      if (std::abs(double(s) - p) <= double(D))
        a(t, s) = std::exp(scores(t, s)) / total * (gaussian ? std::exp(-(s - p) * (s - p) / (2 * sigma * sigma)) : 1.0);
  }
  return a;
}

Array<double> local_m_weights(const Array<double>& scores, std::size_t D) { return local_m(scores, D, true, true, true); }
SOLUTION(local_m_weights);

Array<double> local_m_weights_unclipped(const Array<double>& scores, std::size_t D) {
  return local_m(scores, D, false, true, true);
}
WRONG_ANSWER(local_m_weights, local_m_weights_unclipped,
             "p_t = t past the input's end: the last steps' windows hold fewer positions, or none");

Array<double> local_m_weights_global_softmax(const Array<double>& scores, std::size_t D) {
  return local_m(scores, D, true, false, true);
}
WRONG_ANSWER(local_m_weights, local_m_weights_global_softmax,
             "the softmax over every position, then cut to the window: the window's weights sum to less than they should");

Array<double> local_m_weights_no_gaussian(const Array<double>& scores, std::size_t D) {
  return local_m(scores, D, true, true, false);
}
WRONG_ANSWER(local_m_weights, local_m_weights_no_gaussian, "the window without the Gaussian (the paper's local-m)");

}  // namespace
