// Lesson 16's baseline without patches, positions or attention: the raw pixels of an image as one
// flat vector through two hidden layers with GELU,
//
//   images (B, H, W) -> (B, H W) -> Linear(H W, width) -> GELU -> Linear(width, width) -> GELU
//                    -> Linear(width, classes) -> logits (B, classes)
//
// so its first layer weighs every pixel at once and nothing tells it which pixels are neighbours.
#pragma once

#include <cstddef>

#include "core/random.hpp"
#include "core/tensor.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"

namespace attnlab::lessons {

class PixelMLP : public nn::Module<float> {
 public:
  // The three layers are made in order (in, hidden, out) from gen.
  PixelMLP(Generator& gen, std::size_t pixels, std::size_t width, std::size_t classes);
  // ShapeError naming PixelMLP::forward for images that are not (B, H, W) with H W == pixels.
  Tensor<float> forward(const Tensor<float>& images) const;
  std::size_t pixels() const { return pixels_; }

  nn::Linear<float> in, hidden, out;

 private:
  std::size_t pixels_;
};

}  // namespace attnlab::lessons
