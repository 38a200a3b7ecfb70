// Solutions to exercises/17_tiled_attention.cpp, and the mistakes the grader must catch.
#include <cmath>
#include <limits>
#include <tuple>

#include <xtensor/xview.hpp>

#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

using OnlineState = std::tuple<double, double, Array<double>>;

// m' = max(m, max s); old terms times e^(m - m') (0 when nothing was seen), then the new ones.
OnlineState update(double m, double l, const Array<double>& acc, const Array<double>& scores,
                   const Array<double>& values, bool rescale) {
  double m_new = m;
  for (double s : scores) m_new = std::max(m_new, s);
  const double alpha = !rescale ? 1.0 : m == -std::numeric_limits<double>::infinity() ? 0.0 : std::exp(m - m_new);
  double l_new = l * alpha;
  Array<double> acc_new = acc * alpha;
  for (std::size_t j = 0; j < scores.size(); ++j) {
    const double p = std::exp(scores(j) - m_new);
    l_new += p;
    acc_new += p * Array<double>(xt::view(values, j));
  }
  return {m_new, l_new, acc_new};
}

OnlineState online_softmax_update(double m, double l, const Array<double>& acc, const Array<double>& scores,
                                  const Array<double>& values) {
  return update(m, l, acc, scores, values, true);
}
SOLUTION(online_softmax_update);

OnlineState online_softmax_update_no_rescale(double m, double l, const Array<double>& acc,
                                             const Array<double>& scores, const Array<double>& values) {
  return update(m, l, acc, scores, values, false);
}
WRONG_ANSWER(online_softmax_update, online_softmax_update_no_rescale,
             "adds the new terms relative to the new max but leaves the old ones relative to the old max");

OnlineState online_softmax_update_unshifted(double m, double l, const Array<double>& acc, const Array<double>& scores,
                                            const Array<double>& values) {
  double l_new = l;  // plain sums of e^s: right in exact arithmetic, infinite for large scores
  Array<double> acc_new = acc;
  double m_new = m;
  for (std::size_t j = 0; j < scores.size(); ++j) {
    m_new = std::max(m_new, scores(j));
    l_new += std::exp(scores(j));
    acc_new += std::exp(scores(j)) * Array<double>(xt::view(values, j));
  }
  return {m_new, l_new, acc_new};
}
WRONG_ANSWER(online_softmax_update, online_softmax_update_unshifted, "sums e^s without subtracting the max");

Array<double> scores_backward_with(const Array<double>& S, const Array<double>& L, const Array<double>& V,
                                   const Array<double>& O, const Array<double>& dO, bool subtract_D) {
  const std::size_t n = S.shape()[0], m = S.shape()[1], dv = V.shape()[1];
  Array<double> dS = xt::zeros<double>({n, m});
  for (std::size_t i = 0; i < n; ++i) {
    double D = 0;
    for (std::size_t c = 0; c < dv; ++c) D += dO(i, c) * O(i, c);
    for (std::size_t j = 0; j < m; ++j) {
      double dP = 0;
      for (std::size_t c = 0; c < dv; ++c) dP += dO(i, c) * V(j, c);
      dS(i, j) = std::exp(S(i, j) - L(i)) * (dP - (subtract_D ? D : 0.0));
    }
  }
  return dS;
}

Array<double> scores_backward(const Array<double>& S, const Array<double>& L, const Array<double>& V,
                              const Array<double>& O, const Array<double>& dO) {
  return scores_backward_with(S, L, V, O, dO, true);
}
SOLUTION(scores_backward);

Array<double> scores_backward_no_D(const Array<double>& S, const Array<double>& L, const Array<double>& V,
                                   const Array<double>& O, const Array<double>& dO) {
  return scores_backward_with(S, L, V, O, dO, false);
}
WRONG_ANSWER(scores_backward, scores_backward_no_D, "dS = P * dP: forgets the softmax's - D term");

Array<double> scores_backward_unnormalized(const Array<double>& S, const Array<double>& L, const Array<double>& V,
                                           const Array<double>& O, const Array<double>& dO) {
  Array<double> max_row = xt::zeros<double>({S.shape()[0]});  // e^(S - max) instead of e^(S - L)
  for (std::size_t i = 0; i < S.shape()[0]; ++i) max_row(i) = xt::amax(xt::view(S, i))();
  return scores_backward_with(S, max_row, V, O, dO, true);
}
WRONG_ANSWER(scores_backward, scores_backward_unnormalized,
             "recomputes P as e^(S - max): the row's largest weight becomes 1, the rows do not sum to 1");

// In floats: the output O and the gradients dQ, dK, dV are 4 n d, the backward's scratch about 2 n d
// more; the fused op also holds the weights P it saved and, in its backward, dP: 2 n^2.
std::tuple<double, double> peak_bytes(std::size_t n, std::size_t d, double squares, double widths) {
  const double N = double(n), D = double(d);
  return {4.0 * (squares * N * N + 6 * N * D), 4.0 * widths * N * D};
}

std::tuple<double, double> predicted_peak_bytes(std::size_t n, std::size_t d) { return peak_bytes(n, d, 2, 6); }
SOLUTION(predicted_peak_bytes);

std::tuple<double, double> weights_only(std::size_t n, std::size_t d) { return peak_bytes(n, d, 1, 6); }
WRONG_ANSWER(predicted_peak_bytes, weights_only, "the fused op holds the saved weights P, and forgets dP in the backward");

std::tuple<double, double> outputs_only(std::size_t n, std::size_t d) { return peak_bytes(n, d, 2, 4); }
WRONG_ANSWER(predicted_peak_bytes, outputs_only, "the tiled op holds its output and the three gradients, and no scratch");

std::tuple<double, double> tiled_like_fused(std::size_t n, std::size_t d) {
  return {std::get<0>(peak_bytes(n, d, 2, 6)), std::get<0>(peak_bytes(n, d, 2, 6))};
}
WRONG_ANSWER(predicted_peak_bytes, tiled_like_fused, "the tiled op holds the same: it computes the same function");

}  // namespace
