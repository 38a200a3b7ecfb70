#include "nn/data/images.hpp"

#include "core/error.hpp"

namespace attnlab::nn::data {

Array<float> shift_and_mirror(const Array<float>& images, std::size_t max_shift, Generator& gen) {
  check(images.dimension() == 3, "shift_and_mirror", "needs images (N, H, W), got ", shape_str(images.shape()));
  const long H = long(images.shape()[1]), W = long(images.shape()[2]), s = long(max_shift);
  check(s < H && s < W, "shift_and_mirror", "max_shift ", max_shift, " must be below the image's sides ", H, " x ", W);
  Array<float> out = xt::zeros<float>(images.shape());
  for (std::size_t b = 0; b < images.shape()[0]; ++b) {
    const long dy = long(gen.below(std::uint64_t(2 * s + 1))) - s, dx = long(gen.below(std::uint64_t(2 * s + 1))) - s;
    const bool mirror = gen.below(2) == 1;
    for (long y = 0; y < H; ++y)
      for (long x = 0; x < W; ++x) {
        const long from_y = y - dy, moved_x = x - dx;
        if (from_y < 0 || from_y >= H || moved_x < 0 || moved_x >= W) continue;
        const long from_x = mirror ? W - 1 - moved_x : moved_x;
        out(b, std::size_t(y), std::size_t(x)) = images(b, std::size_t(from_y), std::size_t(from_x));
      }
  }
  return out;
}

xt::xarray<bool> foreground_patches(const Array<float>& image, std::size_t patch, float threshold) {
  check(image.dimension() == 2, "foreground_patches", "needs one image (H, W), got ", shape_str(image.shape()));
  const std::size_t H = image.shape()[0], W = image.shape()[1];
  check(patch > 0 && H % patch == 0 && W % patch == 0, "foreground_patches", "patch ", patch,
        " must be positive and divide the image's sides ", H, " x ", W);
  xt::xarray<bool> on = xt::zeros<bool>({H / patch, W / patch});
  for (std::size_t r = 0; r < H / patch; ++r)
    for (std::size_t c = 0; c < W / patch; ++c) {
      std::size_t bright = 0;
      for (std::size_t i = 0; i < patch; ++i)
        for (std::size_t j = 0; j < patch; ++j) bright += image(r * patch + i, c * patch + j) > threshold;
      on(r, c) = 2 * bright >= patch * patch;
    }
  return on;
}

}  // namespace attnlab::nn::data
