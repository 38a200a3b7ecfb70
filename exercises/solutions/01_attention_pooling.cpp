// Solutions to exercises/01_attention_pooling.cpp, and the mistakes the grader must catch.
#include <algorithm>
#include <cmath>

#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// normalize: divide by the row's sum (a softmax), or not (a plain kernel); shift: subtract the
// row's largest score first.
Array<double> weights(const Array<double>& q, const Array<double>& k, double w, bool normalize, bool shift) {
  const std::size_t n = q.size(), m = k.size();
  Array<double> a = xt::zeros<double>({n, m});
  for (std::size_t r = 0; r < n; ++r) {
    double top = -INFINITY;
    for (std::size_t i = 0; i < m; ++i) {
      const double d = (q(r) - k(i)) * w;
      a(r, i) = -0.5 * d * d;
      top = std::max(top, a(r, i));
    }
    double sum = 0.0;
    for (std::size_t i = 0; i < m; ++i) sum += a(r, i) = std::exp(a(r, i) - (shift ? top : 0.0));
    if (normalize)
      for (std::size_t i = 0; i < m; ++i) a(r, i) /= sum;
  }
  return a;
}

Array<double> gaussian_weights(const Array<double>& queries, const Array<double>& keys, double w) {
  return weights(queries, keys, w, true, true);
}
SOLUTION(gaussian_weights);

Array<double> gaussian_weights_unnormalized(const Array<double>& queries, const Array<double>& keys, double w) {
  return weights(queries, keys, w, false, false);
}
WRONG_ANSWER(gaussian_weights, gaussian_weights_unnormalized, "the kernel values exp(s), never divided by their sum");

Array<double> gaussian_weights_unshifted(const Array<double>& queries, const Array<double>& keys, double w) {
  return weights(queries, keys, w, true, false);
}
WRONG_ANSWER(gaussian_weights, gaussian_weights_unshifted, "no shift: 0 / 0 when every exp underflows");

Array<double> estimate(const Array<double>& a, const Array<double>& v) {
  Array<double> f = xt::zeros<double>({a.shape()[0]});
  for (std::size_t r = 0; r < a.shape()[0]; ++r)
    for (std::size_t i = 0; i < a.shape()[1]; ++i) f(r) += a(r, i) * v(i);
  return f;
}

Array<double> nadaraya_watson(const Array<double>& queries, const Array<double>& keys, const Array<double>& values,
                              double w) {
  return estimate(gaussian_weights(queries, keys, w), values);
}
SOLUTION(nadaraya_watson);

Array<double> nadaraya_watson_mean(const Array<double>& queries, const Array<double>& keys, const Array<double>& values,
                                   double w) {
  return estimate(gaussian_weights(queries, keys, 0.0), values);  // w ignored: every weight 1/m
}
WRONG_ANSWER(nadaraya_watson, nadaraya_watson_mean, "ignores w: uniform weights, the mean of the values");

double gradient(const Array<double>& q, const Array<double>& k, const Array<double>& v, const Array<double>& t, double w,
                double factor) {
  const Array<double> a = gaussian_weights(q, k, w), f = estimate(a, v);
  double dw = 0.0;
  for (std::size_t r = 0; r < q.size(); ++r) {
    double df_dw = 0.0;
    for (std::size_t i = 0; i < k.size(); ++i) df_dw += a(r, i) * (v(i) - f(r)) * (-(q(r) - k(i)) * (q(r) - k(i)) * w);
    dw += factor * (f(r) - t(r)) / double(q.size()) * df_dw;
  }
  return dw;
}

double width_gradient(const Array<double>& queries, const Array<double>& keys, const Array<double>& values,
                      const Array<double>& targets, double w) {
  return gradient(queries, keys, values, targets, w, 2.0);
}
SOLUTION(width_gradient);

double width_gradient_no_two(const Array<double>& queries, const Array<double>& keys, const Array<double>& values,
                             const Array<double>& targets, double w) {
  return gradient(queries, keys, values, targets, w, 1.0);
}
WRONG_ANSWER(width_gradient, width_gradient_no_two, "forgets the 2 of d(e^2)/de = 2 e");

// 01.4: the training MSE of each width on a grid, each target predicted from the other points
// (leave_out) or from all of them, its own key included; the width with the smallest.
double width_by_training_error(const Array<double>& x, const Array<double>& y, bool leave_out) {
  double best_h = 0.0, best = INFINITY;
  for (double h = 0.02; h <= 3.0; h *= 1.05) {
    Array<double> a = gaussian_weights(x, x, 1.0 / h);
    double error = 0.0;
    for (std::size_t r = 0; r < x.size(); ++r) {
      double sum = 0.0, f = 0.0;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!leave_out || i != r) sum += a(r, i), f += a(r, i) * y(i);
      error += (f / sum - y(r)) * (f / sum - y(r));
    }
    if (error < best) best = error, best_h = h;
  }
  return best_h;
}

double choose_width(const Array<double>& x_train, const Array<double>& y_train) {
  return width_by_training_error(x_train, y_train, true);
}
SOLUTION(choose_width);

double choose_width_self_visible(const Array<double>& x_train, const Array<double>& y_train) {
  return width_by_training_error(x_train, y_train, false);
}
WRONG_ANSWER(choose_width, choose_width_self_visible,
             "scores each width on the training targets with their own keys visible: the narrowest width wins");

double choose_width_lesson_start(const Array<double>&, const Array<double>&) { return 1.0; }
WRONG_ANSWER(choose_width, choose_width_lesson_start, "keeps the lesson's starting width h = 1 without looking at the data");

}  // namespace
