// Exercises for lesson 20, captions and soft against hard attention. Grade them with scripts/grade.sh 18.
//
// Write each function in plain xtensor (xt::zeros, loops, std::exp ...), not with the engine's ops.
#include <cmath>
#include <tuple>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "nn/data/caption_scenes.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 20.1 The REINFORCE gradient of the attention scores -------------------------------------
// One word of a batch of B captions. e (B, N) are the attention scores over N patches, alpha_b =
// softmax(e_b); the decoder drew patch c_b (chosen(b)) and the caption then scored reward r_b
// (reward(b)); the baseline is b. The hard decoder's surrogate loss for this word is
//   L = -(1/B) sum_b (r_b - baseline) log alpha_{b, c_b},
// with the rewards and the baseline held constant. Return dL/de, (B, N).
Array<double> reinforce_score_gradient(const Array<double>& e, const IndexArray& chosen, const Array<double>& reward,
                                       double baseline) {
  not_attempted();  // delete this line and write your answer
}

// ---- 20.2 Score a word's attention against a box ---------------------------------------------
// weights (G, G) is one word's attention over the patches of a (G p) x (G p) scene, patch (r, c)
// covering rows [r p, r p + p) and columns [c p, c p + p). The garment the word names lies in the
// box rows [top, bottom), columns [left, right). A patch is inside the box when its centre is.
// Return (the share of the weight on patches inside the box, 1 if the patch of largest weight is
// inside else 0).
std::tuple<double, double> box_share_and_pointing(const Array<double>& weights, std::size_t patch, std::size_t top,
                                                  std::size_t left, std::size_t bottom, std::size_t right) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against the engine's own ops.
namespace {

Array<double> engine_gradient(const Array<double>& e, const IndexArray& chosen, const Array<double>& reward,
                              double baseline) {
  const Tensor<double> scores(e, true);
  const std::size_t B = e.shape()[0];
  const Array<double> weight = (reward - baseline) * (-1.0 / double(B));
  sum(mul(Tensor<double>(weight), log_of_chosen(softmax(scores, -1), chosen))).backward();
  return scores.grad();
}

void grade_gradient(const std::function<Array<double>(const Array<double>&, const IndexArray&, const Array<double>&,
                                                      double)>& answer,
                    Grader& g) {
  const Array<double> e = random_array({3, 5}, 1, -2, 2), reward = random_array({3}, 2, -6, -1);
  const IndexArray chosen = {4, 0, 2};
  g.close("3 words, 5 patches, baseline -3", answer(e, chosen, reward, -3.0), engine_gradient(e, chosen, reward, -3.0),
          1e-12, "d log alpha_c / d e_i = [i = c] - alpha_i; then the weight -(r_b - baseline) / B");
  g.close("baseline 0", answer(e, chosen, reward, 0.0), engine_gradient(e, chosen, reward, 0.0), 1e-12,
          "the weight of row b is r_b - baseline, not r_b");
  const Array<double> same = xt::zeros<double>({2, 4});
  g.close("equal scores", answer(same, IndexArray{1, 3}, Array<double>{-1.0, -2.0}, -1.5),
          engine_gradient(same, IndexArray{1, 3}, Array<double>{-1.0, -2.0}, -1.5), 1e-12,
          "every patch's score moves, not only the chosen one's: the others by -alpha_i");
}

std::tuple<double, double> engine_box(const Array<double>& weights, std::size_t patch, std::size_t top, std::size_t left,
                                      std::size_t bottom, std::size_t right) {
  const std::size_t G = weights.shape()[0];
  const xt::xarray<bool> in = nn::data::patches_in_box({top, left, bottom, right}, G * patch, patch);
  double share = 0;
  std::size_t peak = 0;
  for (std::size_t k = 0; k < G * G; ++k) {
    if (in(k / G, k % G)) share += weights(k / G, k % G);
    if (weights(k / G, k % G) > weights(peak / G, peak % G)) peak = k;
  }
  return {share, in(peak / G, peak % G) ? 1.0 : 0.0};
}

void grade_box(const std::function<std::tuple<double, double>(const Array<double>&, std::size_t, std::size_t,
                                                              std::size_t, std::size_t, std::size_t)>& answer,
               Grader& g) {
  struct Case {
    std::string what;
    std::size_t top, left, bottom, right;
  };
  Array<double> w = random_array({8, 8}, 3, 0.0, 1.0);
  w(1, 6) = 5.0;  // the peak: row 1, column 6
  w /= xt::sum(w)();
  for (const Case& c : {Case{"a box around the peak", 2, 40, 20, 60}, Case{"a box beside the peak", 40, 2, 60, 20},
                        Case{"a box that covers a patch's edge but not its centre", 0, 44, 11, 53}}) {
    const auto [share, point] = answer(w, 8, c.top, c.left, c.bottom, c.right);
    const auto [want_share, want_point] = engine_box(w, 8, c.top, c.left, c.bottom, c.right);
    g.close(c.what + ": share", Array<double>{share}, Array<double>{want_share}, 1e-12,
            "patch (r, c) has its centre at row r p + p/2 and column c p + p/2; rows go with top and bottom");
    g.close(c.what + ": pointing", Array<double>{point}, Array<double>{want_point}, 0,
            "is the patch of largest weight's centre inside the box?");
  }
}

}  // namespace

EXERCISE(reinforce_score_gradient, "The REINFORCE gradient of the attention scores", grade_gradient);
HINT(reinforce_score_gradient, "dL/de_{b,i} = -(r_b - baseline) / B * ([i = c_b] - alpha_{b,i})");
EXERCISE(box_share_and_pointing, "Score a word's attention against a box", grade_box);
HINT(box_share_and_pointing,
     "patch (r, c) is inside when top <= r p + p/2 < bottom and left <= c p + p/2 < right; sum its weights, and test "
     "the argmax patch the same way");
