// Solutions to exercises/20_captions.cpp, and the mistakes the grader must catch.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// dL/de_{b,i} = -(r_b - baseline)/B * ([i = c_b] - alpha_{b,i}): the log of a softmax entry moves
// with its own score and against every score by that score's weight.
Array<double> gradient(const Array<double>& e, const IndexArray& chosen, const Array<double>& reward, double baseline,
                       bool minus_alpha) {
  const std::size_t B = e.shape()[0], N = e.shape()[1];
  Array<double> g = xt::zeros<double>({B, N});
  for (std::size_t b = 0; b < B; ++b) {
    double top = e(b, 0), sum = 0;
    for (std::size_t i = 1; i < N; ++i) top = std::max(top, e(b, i));
    for (std::size_t i = 0; i < N; ++i) sum += std::exp(e(b, i) - top);
    const double weight = -(reward(b) - baseline) / double(B);
    for (std::size_t i = 0; i < N; ++i) {
      const double alpha = std::exp(e(b, i) - top) / sum;
      g(b, i) = weight * ((std::size_t(chosen(b)) == i ? 1.0 : 0.0) - (minus_alpha ? alpha : 0.0));
    }
  }
  return g;
}

Array<double> reinforce_score_gradient(const Array<double>& e, const IndexArray& chosen, const Array<double>& reward,
                                       double baseline) {
  return gradient(e, chosen, reward, baseline, true);
}
SOLUTION(reinforce_score_gradient);

Array<double> gradient_without_baseline(const Array<double>& e, const IndexArray& chosen, const Array<double>& reward,
                                        double) {
  return gradient(e, chosen, reward, 0.0, true);
}
WRONG_ANSWER(reinforce_score_gradient, gradient_without_baseline, "the baseline left out: the reward alone as the weight");

Array<double> gradient_of_chosen_only(const Array<double>& e, const IndexArray& chosen, const Array<double>& reward,
                                      double baseline) {
  return gradient(e, chosen, reward, baseline, false);
}
WRONG_ANSWER(reinforce_score_gradient, gradient_of_chosen_only,
             "only the chosen score moves: the softmax's -alpha_i for every patch forgotten");

// inside(r, c): the centre of patch (r, c), or (with `overlap`) any of its pixels, in the box.
std::tuple<double, double> score_box(const Array<double>& w, std::size_t p, std::size_t top, std::size_t left,
                                     std::size_t bottom, std::size_t right, bool overlap) {
  const std::size_t G = w.shape()[0];
  auto inside = [&](std::size_t r, std::size_t c) {
    if (overlap) return r * p < bottom && r * p + p > top && c * p < right && c * p + p > left;
    const std::size_t y = r * p + p / 2, x = c * p + p / 2;
    return y >= top && y < bottom && x >= left && x < right;
  };
  double share = 0;
  std::size_t pr = 0, pc = 0;
  for (std::size_t r = 0; r < G; ++r)
    for (std::size_t c = 0; c < G; ++c) {
      if (inside(r, c)) share += w(r, c);
      if (w(r, c) > w(pr, pc)) pr = r, pc = c;
    }
  return {share, inside(pr, pc) ? 1.0 : 0.0};
}

std::tuple<double, double> box_share_and_pointing(const Array<double>& weights, std::size_t patch, std::size_t top,
                                                  std::size_t left, std::size_t bottom, std::size_t right) {
  return score_box(weights, patch, top, left, bottom, right, false);
}
SOLUTION(box_share_and_pointing);

std::tuple<double, double> box_by_overlap(const Array<double>& weights, std::size_t patch, std::size_t top,
                                          std::size_t left, std::size_t bottom, std::size_t right) {
  return score_box(weights, patch, top, left, bottom, right, true);
}
WRONG_ANSWER(box_share_and_pointing, box_by_overlap, "a patch counted when any pixel of it touches the box");

std::tuple<double, double> box_transposed(const Array<double>& weights, std::size_t patch, std::size_t top,
                                          std::size_t left, std::size_t bottom, std::size_t right) {
  return score_box(weights, patch, left, top, right, bottom, false);
}
WRONG_ANSWER(box_share_and_pointing, box_transposed, "rows and columns swapped: the box read as (left, top, right, bottom)");

}  // namespace
