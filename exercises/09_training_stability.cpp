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

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 09.1 The gradient of the label-smoothed cross-entropy ----------------------------------
// logits z (N, V): one row of scores per target word; targets (N): the right word of each row.
// With smoothing eps the target distribution of row i is q_i = (1 - eps) onehot(targets[i]) + eps / V
// (eps / V on every word, the right one included), and the loss is the mean over the rows of
//     L_i = -sum_v q_iv log softmax(z_i)_v.
// Given dL/dL = upstream (one number), return dL/dz (N, V). Hint: for one row, the gradient of
// -sum_v q_v log softmax(z)_v with respect to z is softmax(z) - q (q sums to 1). Do not forget
// the mean over the rows.
Array<double> smoothed_cross_entropy_backward(const Array<double>& logits, const IndexArray& targets, double eps,
                                              double upstream) {
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
               "row i: (softmax(z_i) - q_i) / N times upstream, with q_i = (1 - eps) on the target plus eps / V on "
               "every word");
  }
  // Scores in the hundreds: a softmax must subtract the row's maximum before exp.
  const Array<double> big = random_array({4, 5}, 82, -300, 300);
  g.close("scores in the hundreds, smoothing 0.1", answer(big, targets, 0.1, 1.0),
          engine_smoothed_gradient(big, targets, 0.1, 1.0), 1e-10,
          "exp(300) is finite but exp(800) is not: softmax(z) = softmax(z - max z)");
}

}  // namespace

EXERCISE(smoothed_cross_entropy_backward, "The gradient of the label-smoothed cross-entropy",
         grade_smoothed_cross_entropy_backward);
