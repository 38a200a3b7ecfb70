// Exercises for lesson 16, the Vision Transformer. Grade them with build/bin/grade 16.
//
// Write each function in plain xtensor (loops, xt::zeros, xt::eye ...), not with the engine's ops;
// product(a, b) and transposed(a) (exercises/grading/exercise.hpp) multiply and transpose matrices.
#include <memory>
#include <vector>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "nn/vit.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// ---- 16.1 An image as a sequence of patches ----------------------------------------------------
// images (B, H, W), p divides H and W. Cut each image into p x p patches, row by row over the
// grid of patches (left to right, then down), and flatten each patch row by row: return
// (B, (H/p)(W/p), p p), one row of p p pixels per patch, patches in that order.
Array<double> patchify(const Array<double>& images, std::size_t p) {
  not_attempted();  // delete this line and write your answer
}

// ---- 16.2 Attention rollout ----------------------------------------------------------------------
// layers[l] (T, T) is layer l's attention averaged over its heads (rows are queries), first layer
// first. Each layer adds its output to the residual stream, so count the stream as half of it:
// A^_l = (layers[l] + I) / 2. Return the rollout (T, T): row i says how much of each input token
// reached token i through all the layers, the first layer's mixing first.
Array<double> attention_rollout(const std::vector<Array<double>>& layers) {
  not_attempted();  // delete this line and write your answer
}

// ---- 16.3 Blind to where the patches are ----------------------------------------------------
// An experiment, graded by running it. A ViT reads an image as a set of patch vectors plus what
// tells it where each patch sits. Change the given (freshly drawn) model so that shuffling an
// image's patches leaves its logits unchanged, while it still tells different images apart. The
// grader runs your model on 8 random 12 x 12 images (4 x 4 patches) and on the same images with
// their patches shuffled (3 shuffles): the logits must agree within 1e-4; and two different images
// must still get logits that differ by more than 1e-3. Before you run it: which of the model's
// parameters carry position, and what is left of the model once they say nothing?
void blind_to_position(nn::ViT<float>& model) {
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
            "the entries that differ say which patch or which pixel of a patch is misplaced: check the patch order first, "
            "then the order within a patch");
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
          "a product of matrices depends on its order: which layer's mixing does row i of the rollout see last?");
  g.close("one layer", answer({layers[0]}), add(mul(Tensor<double>(layers[0]), 0.5), half_identity).value(), 1e-12,
          "with one layer the rollout is (A + I) / 2");
  const Array<double> rollout = answer(layers);
  g.close("each row still sums to 1", xt::sum(rollout, {1}), xt::ones<double>({T}), 1e-12,
          "a product of row-stochastic matrices is row-stochastic: (A + I) / 2 is, if A's rows sum to 1");
}

// A small ViT, freshly drawn (seeded): 12 x 12 images in 9 patches of 4 x 4, 2 layers of d 32.
std::unique_ptr<nn::ViT<float>> small_vit() {
  nn::ViTConfig c;
  c.image_height = c.image_width = 12, c.patch = 4, c.num_classes = 5, c.num_layers = 2;
  c.layer = nn::LayerConfig{32, 4, 64, 0.0, true, nn::Activation::GELU, 1e-6};
  Generator gen(14);
  auto model = std::make_unique<nn::ViT<float>>(c, gen);
  model->eval();
  return model;
}

// images (B, 12, 12) with their 4 x 4 patches moved: patch k goes to place order[k].
Array<float> shuffled_patches(const Array<float>& images, const std::vector<std::size_t>& order) {
  Array<float> out = images;
  for (std::size_t k = 0; k < 9; ++k)
    xt::view(out, xt::all(), xt::range(order[k] / 3 * 4, order[k] / 3 * 4 + 4), xt::range(order[k] % 3 * 4, order[k] % 3 * 4 + 4)) =
        xt::view(images, xt::all(), xt::range(k / 3 * 4, k / 3 * 4 + 4), xt::range(k % 3 * 4, k % 3 * 4 + 4));
  return out;
}

void grade_blind(const std::function<void(nn::ViT<float>&)>& answer, Grader& g) {
  const auto model = small_vit();
  answer(*model);
  model->eval();
  NoGrad no_grad;
  const Array<float> images = xt::cast<float>(random_array({8, 12, 12}, 141, 0.0, 1.0));
  const Array<float> logits = model->forward(Tensor<float>(images)).value();
  Generator gen(142);
  double moved = 0;
  for (int s = 0; s < 3; ++s) {
    std::vector<std::size_t> order = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    for (std::size_t k = 8; k > 0; --k) std::swap(order[k], order[gen.below(k + 1)]);
    const Array<float> again = model->forward(Tensor<float>(shuffled_patches(images, order))).value();
    moved = std::max(moved, double(xt::amax(xt::abs(again - logits))()));
  }
  g.check(moved <= 1e-4, "shuffling the patches leaves the logits unchanged",
          "the largest change of a logit over 3 shuffles: measured " + std::to_string(moved) + ", target at most 1e-4",
          "the patch vectors themselves do not know where they came from: what is added to them?");
  double apart = 0;
  for (std::size_t b = 1; b < 8; ++b)
    apart = std::max(apart, double(xt::amax(xt::abs(xt::view(logits, b) - xt::view(logits, 0)))()));
  g.check(apart > 1e-3, "different images still get different logits",
          "the largest difference from image 0's logits: measured " + std::to_string(apart) + ", target above 1e-3",
          "a model blind to everything is blind to position too: keep what reads the pixels");
}

}  // namespace

EXERCISE(patchify, "An image as a sequence of patches", grade_patchify);
HINT(patchify, "out(b, r (W/p) + s, i p + j) = images(b, r p + i, s p + j): patch (r, s) of the grid, pixel (i, j) of it");
EXERCISE(attention_rollout, "Attention rollout", grade_attention_rollout);
HINT(attention_rollout, "rollout = A^_L ... A^_2 A^_1: each new layer multiplies from the left");
EXERCISE(blind_to_position, "Blind to where the patches are", grade_blind);
HINT(blind_to_position,
     "self-attention and the per-token layers treat the patch vectors as a set; only the learned positions pos_embed "
     "(N + 1 rows, one per place) say where a patch sits: set them all to zero (or all rows equal) under NoGrad");
