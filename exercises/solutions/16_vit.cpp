// Solutions to exercises/16_vit.cpp, and the mistakes the grader must catch.
#include <xtensor/xview.hpp>

#include "exercises/grading/exercise.hpp"
#include "nn/vit.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// row_major: patches read row by row over the grid (right); column by column (wrong).
Array<double> cut(const Array<double>& images, std::size_t p, bool row_major) {
  const std::size_t B = images.shape()[0], H = images.shape()[1], W = images.shape()[2];
  const std::size_t rows = H / p, cols = W / p;
  Array<double> out = xt::zeros<double>({B, rows * cols, p * p});
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t r = 0; r < rows; ++r)
      for (std::size_t s = 0; s < cols; ++s)
        for (std::size_t i = 0; i < p; ++i)
          for (std::size_t j = 0; j < p; ++j)
            out(b, row_major ? r * cols + s : s * rows + r, i * p + j) = images(b, r * p + i, s * p + j);
  return out;
}

Array<double> patchify(const Array<double>& images, std::size_t p) { return cut(images, p, true); }
SOLUTION(patchify);

Array<double> patchify_column_major(const Array<double>& images, std::size_t p) { return cut(images, p, false); }
WRONG_ANSWER(patchify, patchify_column_major, "numbers the patches down the columns of the grid first");

Array<double> rollout(const std::vector<Array<double>>& layers, bool residual, bool last_on_the_left) {
  const std::size_t T = layers.at(0).shape()[0];
  Array<double> r = xt::eye<double>(T);
  for (const Array<double>& a : layers) {
    const Array<double> step = residual ? Array<double>(0.5 * a + 0.5 * xt::eye<double>(T)) : a;
    r = last_on_the_left ? product(step, r) : product(r, step);
  }
  return r;
}

Array<double> attention_rollout(const std::vector<Array<double>>& layers) { return rollout(layers, true, true); }
SOLUTION(attention_rollout);

Array<double> attention_rollout_no_residual(const std::vector<Array<double>>& layers) {
  return rollout(layers, false, true);
}
WRONG_ANSWER(attention_rollout, attention_rollout_no_residual, "multiplies the raw attention: the residual stream left out");

Array<double> attention_rollout_reversed(const std::vector<Array<double>>& layers) { return rollout(layers, true, false); }
WRONG_ANSWER(attention_rollout, attention_rollout_reversed, "A^_1 A^_2 ... A^_L: the product in the wrong order");

// The learned positions are the only part of the model that knows where a patch sits.
void blind_to_position(nn::ViT<float>& model) {
  NoGrad no_grad;
  model.pos_embed.weight().mutable_value().fill(0.0f);
}
SOLUTION(blind_to_position);

void leave_as_drawn(nn::ViT<float>&) {}
WRONG_ANSWER(blind_to_position, leave_as_drawn, "the model as drawn: its learned positions tell the patches apart");

void zero_class_token(nn::ViT<float>& model) {
  NoGrad no_grad;
  model.cls_token.mutable_value().fill(0.0f);
}
WRONG_ANSWER(blind_to_position, zero_class_token, "clears the class token: it has a place of its own, but is not the one");

void zero_patch_projection(nn::ViT<float>& model) {
  NoGrad no_grad;
  model.patch_embed.proj.weight.mutable_value().fill(0.0f);
  model.pos_embed.weight().mutable_value().fill(0.0f);
}
WRONG_ANSWER(blind_to_position, zero_patch_projection, "clears what reads the pixels too: blind to the images");

}  // namespace
