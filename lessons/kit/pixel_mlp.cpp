#include "lessons/kit/pixel_mlp.hpp"

#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnlab::lessons {

PixelMLP::PixelMLP(Generator& gen, std::size_t pixels, std::size_t width, std::size_t classes)
    : in(pixels, width, gen), hidden(width, width, gen), out(width, classes, gen), pixels_(pixels) {
  register_module("in", in), register_module("hidden", hidden), register_module("out", out);
}

Tensor<float> PixelMLP::forward(const Tensor<float>& images) const {
  const auto& s = images.shape();
  check(s.size() == 3 && s[1] * s[2] == pixels_, "PixelMLP::forward", "needs images (B, H, W) of ", pixels_,
        " pixels, got ", shape_str(s));
  return out(gelu(hidden(gelu(in(reshape(images, {long(s[0]), long(pixels_)}))))));
}

}  // namespace attnlab::lessons
