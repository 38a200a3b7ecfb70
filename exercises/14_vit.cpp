// Exercises for lesson 14, the Vision Transformer. Grade them with build/bin/grade 14.
//
// Write each function in plain xtensor (loops, xt::zeros, xt::eye ...), not with the engine's ops;
// product(a, b) and transposed(a) (exercises/grading/exercise.hpp) multiply and transpose matrices.
#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "nn/vit.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 14.1 An image as a sequence of patches ----------------------------------------------------
// images (B, H, W), p divides H and W. Cut each image into p x p patches, row by row over the
// grid of patches (left to right, then down), and flatten each patch row by row: return
// (B, (H/p)(W/p), p p) with out(b, r (W/p) + s, i p + j) = images(b, r p + i, s p + j).
Array<double> patchify(const Array<double>& images, std::size_t p) {
  not_attempted();  // delete this line and write your answer
}

// ---- 14.2 Attention rollout ----------------------------------------------------------------------
// layers[l] (T, T) is layer l's attention averaged over its heads (rows are queries), first layer
// first. Each layer adds its output to the residual stream, so count the stream as half of it:
// A^_l = (layers[l] + I) / 2. Return the rollout A^_L ... A^_2 A^_1 (T, T): row i says how much
// of each input token reached token i through all the layers.
Array<double> attention_rollout(const std::vector<Array<double>>& layers) {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against nn::patchify and the engine's matmul.
namespace {

void grade_patchify(const std::function<Array<double>(const Array<double>&, std::size_t)>& answer, Grader& g) {
  const Array<double> images = random_array({2, 12, 8}, 81);
  for (std::size_t p : {4, 2})
    g.close("(2, 12, 8) in " + std::to_string(p) + " x " + std::to_string(p) + " patches, against nn::patchify",
            answer(images, p), nn::patchify(unsqueeze(Tensor<double>(images), 1), p).value(), 0.0,
            "patch r (W/p) + s covers rows r p .. r p + p - 1 and columns s p .. s p + p - 1, read row by row");
}

// A row-stochastic (T, T) matrix: softmax of random scores, as an attention layer gives.
Array<double> attention_like(std::size_t T, std::uint64_t seed) {
  return softmax(Tensor<double>(random_array({T, T}, seed, -3, 3)), -1).value();
}

void grade_attention_rollout(const std::function<Array<double>(const std::vector<Array<double>>&)>& answer, Grader& g) {
  const std::size_t T = 5;
  const std::vector<Array<double>> layers = {attention_like(T, 82), attention_like(T, 83), attention_like(T, 84)};
  const Tensor<double> half_identity(Array<double>(0.5 * xt::eye<double>(T)));
  Tensor<double> expected(Array<double>(xt::eye<double>(T)));
  for (const Array<double>& a : layers) expected = matmul(add(mul(Tensor<double>(a), 0.5), half_identity), expected);
  g.close("three layers of 5 tokens", answer(layers), expected.value(), 1e-12,
          "the last layer multiplies from the left: rollout = A^_3 (A^_2 A^_1), each A^ = (A + I) / 2");
  g.close("one layer", answer({layers[0]}), add(mul(Tensor<double>(layers[0]), 0.5), half_identity).value(), 1e-12,
          "with one layer the rollout is (A + I) / 2");
  const Array<double> rollout = answer(layers);
  g.close("each row still sums to 1", xt::sum(rollout, {1}), xt::ones<double>({T}), 1e-12,
          "a product of row-stochastic matrices is row-stochastic: (A + I) / 2 is, if A's rows sum to 1");
}

}  // namespace

EXERCISE(patchify, "An image as a sequence of patches", grade_patchify);
EXERCISE(attention_rollout, "Attention rollout", grade_attention_rollout);
