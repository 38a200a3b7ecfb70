// Exercises for lesson 09, training a Transformer stably. Grade them with build/bin/grade 09.
//
// Write each function in plain C++ and xtensor (loops, std::exp, std::log ...), not with the
// engine's ops or nn/: the loss the lesson smooths, done by hand.
#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "nn/layers.hpp"
#include "nn/optim.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 09.1 The gradient of the label-smoothed cross-entropy ----------------------------------
// logits z (N, V): one row of scores per target word; targets (N): the right word of each row.
// With smoothing eps the target distribution of row i is q_i = (1 - eps) onehot(targets[i]) + eps / V
// (eps / V on every word, the right one included), and the loss is the mean over the rows of
//     L_i = -sum_v q_iv log softmax(z_i)_v.
// Given dL/dL = upstream (one number), return dL/dz (N, V). Derive one row's gradient on paper
// first, through log softmax(z)_v = z_v - log sum_u e^(z_u).
Array<double> smoothed_cross_entropy_backward(const Array<double>& logits, const IndexArray& targets, double eps,
                                              double upstream) {
  not_attempted();  // delete this line and write your answer
}

// ---- 09.2 Predict: how sure of itself does label smoothing leave a model? -------------------
// An experiment, graded by running it. Train a classifier over V classes with label smoothing
// eps, on data it can tell apart perfectly, until the loss stops falling. What probability does
// it then give its top class, on held-out examples? Work it out before you run anything, from
// what the smoothed loss rewards, and return your prediction for any eps and V. The grader trains
// such a classifier with the engine (eps 0.2 over 5 classes, eps 0.1 over 8; three seeds each)
// and compares your number with the measured mean top probability, within 0.01. (Lesson 09
// measures the same on its Transformer: its "confidence" with and without smoothing.)
double smoothed_confidence(double eps, std::size_t classes) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against the engine's cross-entropy and its
// backward.
namespace {

template <class... Parts>
std::string text_of(const Parts&... parts) {
  std::ostringstream os;
  os.precision(10);
  (os << ... << parts);
  return os.str();
}

Array<double> engine_smoothed_gradient(const Array<double>& z, const IndexArray& targets, double eps, double upstream) {
  CrossEntropyOptions ce;
  ce.label_smoothing = eps;
  const Tensor<double> logits(z, true);
  mul(cross_entropy(logits, targets, ce), upstream).backward();
  return logits.grad();
}

void grade_smoothed_cross_entropy_backward(
    const std::function<Array<double>(const Array<double>&, const IndexArray&, double, double)>& answer, Grader& g) {
  const IndexArray targets = {2, 0, 4, 4};
  for (double eps : {0.1, 0.0}) {
    const EngineForward forward = [&, eps](const std::vector<Tensor<double>>& x) {
      CrossEntropyOptions ce;
      ce.label_smoothing = eps;
      return cross_entropy(x[0], targets, ce);
    };
    const Backward yours = [&, eps](const std::vector<Array<double>>& x, const Array<double>& upstream) {
      return std::vector<Array<double>>{answer(x[0], targets, eps, upstream())};
    };
    g.backward(text_of("4 rows of 5 words, smoothing ", eps), forward, yours, {random_array({4, 5}, 81, -3, 3)},
               {"logits"},
               "the list above names the entries that differ: off everywhere by one factor points at the mean over the "
               "rows, off on the target column alone at q");
  }
  // Scores in the hundreds: a softmax must subtract the row's maximum before exp.
  const Array<double> big = random_array({4, 5}, 82, -300, 300);
  g.close("scores in the hundreds, smoothing 0.1", answer(big, targets, 0.1, 1.0),
          engine_smoothed_gradient(big, targets, 0.1, 1.0), 1e-10,
          "exp(300) is finite but exp(800) is not: softmax(z) = softmax(z - max z)");
}

// A linear classifier (nn::Linear, float) on `classes` clusters that do not overlap: input
// 4 onehot(c) plus uniform noise in [-0.3, 0.3) per entry; full-batch Adam (rate 0.05) for 400
// steps on 256 examples with the smoothed cross-entropy; then the mean top probability over 256
// held-out examples, and their accuracy (which must be 1 for the measurement to mean anything).
std::pair<double, double> measured_confidence(double eps, std::size_t classes, std::uint64_t seed) {
  const std::size_t n = 256;
  auto draw = [&](std::uint64_t s) {
    Generator gen(s);
    IndexArray y = IndexArray::from_shape({n});
    Array<float> x = xt::cast<float>(random_array({n, classes}, s + 1000, -0.3, 0.3));
    for (std::size_t i = 0; i < n; ++i) y(i) = Index(gen.below(classes)), x(i, std::size_t(y(i))) += 4.0f;
    return std::pair{x, y};
  };
  const auto [x, y] = draw(2 * seed + 1);
  const auto [hx, hy] = draw(2 * seed + 2);
  Generator init(seed);
  nn::Linear<float> model(classes, classes, init);
  nn::Adam<float> adam(model.parameters(), 0.05);
  CrossEntropyOptions ce;
  ce.label_smoothing = eps;
  for (int step = 0; step < 400; ++step) {
    adam.zero_grad();
    cross_entropy(model(Tensor<float>(x)), y, ce).backward();
    adam.step();
  }
  NoGrad no_grad;
  const Array<float> p = softmax(model(Tensor<float>(hx)), -1).value();
  double top = 0, right = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t best = 0;
    for (std::size_t c = 1; c < classes; ++c)
      if (p(i, c) > p(i, best)) best = c;
    top += p(i, best) / double(n);
    right += (Index(best) == hy(i)) / double(n);
  }
  return {top, right};
}

void grade_smoothed_confidence(const std::function<double(double, std::size_t)>& answer, Grader& g) {
  for (const auto& [eps, classes] : {std::pair{0.2, std::size_t(5)}, std::pair{0.1, std::size_t(8)}}) {
    double top = 0, right = 0;
    for (std::uint64_t seed : {1, 2, 3}) {
      const auto [t, r] = measured_confidence(eps, classes, seed);
      top += t / 3, right += r / 3;
    }
    if (!g.check(right == 1.0, text_of("eps ", eps, ", ", classes, " classes: the trained classifier is always right"),
                 text_of("held-out accuracy ", right)))
      continue;
    const double predicted = answer(eps, classes);
    g.check(std::abs(predicted - top) <= 0.01,
            text_of("eps ", eps, ", ", classes, " classes: your prediction against the measured top probability"),
            text_of("predicted ", predicted, ", measured ", top, " (mean of 3 seeds; tolerance 0.01)"),
            "which distribution minimizes -sum_v q_v log p_v over p? And where does eps put the mass of q?");
  }
}

}  // namespace

EXERCISE(smoothed_cross_entropy_backward, "The gradient of the label-smoothed cross-entropy",
         grade_smoothed_cross_entropy_backward);
HINT(smoothed_cross_entropy_backward,
     "one row: d/dz of -sum_v q_v log softmax(z)_v is softmax(z) - q (q sums to 1); the loss is the mean over the N "
     "rows, so dz_i = upstream (softmax(z_i) - q_i) / N");
EXERCISE(smoothed_confidence, "Predict: how sure of itself does label smoothing leave a model?",
         grade_smoothed_confidence);
HINT(smoothed_confidence,
     "the smoothed loss -sum_v q_v log p_v is lowest at p = q (Gibbs' inequality), so a model that can fit the data "
     "ends with p = q: 1 - eps on the right class plus the eps / V that every class gets, 1 - eps + eps / V");
