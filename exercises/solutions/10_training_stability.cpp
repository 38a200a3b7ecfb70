// Solutions to exercises/10_training_stability.cpp, and the mistakes the grader must catch.
#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// The core of every variant: the gradient with target mass `on` on the right word and `off` on
// every other word, divided by `rows`.
Array<double> gradient(const Array<double>& z, const IndexArray& targets, double on, double off, double rows,
                       double upstream) {
  const std::size_t n = z.shape()[0], v = z.shape()[1];
  Array<double> dz = xt::zeros<double>({n, v});
  for (std::size_t i = 0; i < n; ++i) {
    double top = z(i, 0);
    for (std::size_t k = 1; k < v; ++k) top = std::max(top, z(i, k));
    double sum = 0;
    for (std::size_t k = 0; k < v; ++k) sum += std::exp(z(i, k) - top);
    for (std::size_t k = 0; k < v; ++k) {
      const double q = Index(k) == targets(i) ? on : off;
      dz(i, k) = upstream * (std::exp(z(i, k) - top) / sum - q) / rows;
    }
  }
  return dz;
}

Array<double> smoothed_cross_entropy_backward(const Array<double>& z, const IndexArray& targets, double eps,
                                              double upstream) {
  const double v = double(z.shape()[1]);
  return gradient(z, targets, 1 - eps + eps / v, eps / v, double(z.shape()[0]), upstream);
}
SOLUTION(smoothed_cross_entropy_backward);

Array<double> unsmoothed_backward(const Array<double>& z, const IndexArray& targets, double eps, double upstream) {
  return gradient(z, targets, 1.0, 0.0, double(z.shape()[0]), upstream);
}
WRONG_ANSWER(smoothed_cross_entropy_backward, unsmoothed_backward, "ignores eps: a one-hot target");

Array<double> summed_backward(const Array<double>& z, const IndexArray& targets, double eps, double upstream) {
  const double v = double(z.shape()[1]);
  return gradient(z, targets, 1 - eps + eps / v, eps / v, 1.0, upstream);
}
WRONG_ANSWER(smoothed_cross_entropy_backward, summed_backward, "the sum over the rows instead of their mean");

Array<double> others_only_backward(const Array<double>& z, const IndexArray& targets, double eps, double upstream) {
  const double v = double(z.shape()[1]);
  return gradient(z, targets, 1 - eps, eps / (v - 1), double(z.shape()[0]), upstream);
}
WRONG_ANSWER(smoothed_cross_entropy_backward, others_only_backward,
             "spreads eps over the V - 1 wrong words only (1 - eps on the right one)");

// A classifier that fits its data ends where the smoothed loss is lowest, at p = q.
double smoothed_confidence(double eps, std::size_t classes) { return 1.0 - eps + eps / double(classes); }
SOLUTION(smoothed_confidence);

double confidence_unchanged(double, std::size_t) { return 1.0; }
WRONG_ANSWER(smoothed_confidence, confidence_unchanged, "a model that fits its data is sure of itself, smoothing or not");

double confidence_without_share(double eps, std::size_t) { return 1.0 - eps; }
WRONG_ANSWER(smoothed_confidence, confidence_without_share,
             "1 - eps: forgets that the right class gets its share eps / V too");

// A linear warm-up: Adam's first steps, each as large as the rate, no longer hit the untrained
// post-norm stack at the peak rate.
std::tuple<double, double> post_norm_recipe() { return {0.02, 200.0}; }
SOLUTION(post_norm_recipe);

std::tuple<double, double> no_warmup() { return {0.02, 0.0}; }
WRONG_ANSWER(post_norm_recipe, no_warmup, "pre-norm's recipe as it is: peak 0.02, no warm-up");

std::tuple<double, double> lower_rate() { return {0.001, 0.0}; }
WRONG_ANSWER(post_norm_recipe, lower_rate, "a lower rate instead of a warm-up");

}  // namespace
