// Lesson 16's relational task, the models set up: on scenes of two garments (nn/data/garment_scenes:
// one class or two?), the lesson's ViT blocks on the whole canvas, and an MLP on the canvas's pixels
// of about its size, twice (one trained for the same epochs, one for more).
//
//   scene_vit_config(base, canvas)        base's blocks and patch on a (canvas, canvas) image, two
//                                         classes, the head on the mean of the patches
//   scene_models(base, canvas, width, gen)  that ViT, then the two MLPs, drawn from gen in that order
#pragma once

#include <cstddef>
#include <memory>

#include "core/random.hpp"
#include "lessons/kit/pixel_mlp.hpp"
#include "nn/vit.hpp"

namespace attnlab::lessons {

// `base` on a (canvas, canvas) image with two classes (one class or two) and the head reading the
// mean of the patches' final vectors (nn::Readout::patch_mean), not the class token's. ShapeError
// naming the function for a patch size that does not divide the canvas.
nn::ViTConfig scene_vit_config(nn::ViTConfig base, std::size_t canvas);

struct SceneModels {
  std::unique_ptr<nn::ViT<float>> vit;    // scene_vit_config(base, canvas)
  std::unique_ptr<PixelMLP> mlp, longer;  // canvas^2 pixels, two hidden layers of `mlp_width`, two classes
};
// The three models, made from gen in this order: the ViT, the MLP, the longer-trained MLP. The
// error of scene_vit_config for a canvas the patches do not tile.
SceneModels scene_models(const nn::ViTConfig& base, std::size_t canvas, std::size_t mlp_width, Generator& gen);

}  // namespace attnlab::lessons
