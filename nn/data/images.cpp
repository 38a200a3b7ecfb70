#include "nn/data/images.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include <xtensor/xbuilder.hpp>

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

namespace {

// For each output cell i of n over N source cells: the source cells its span [i N/n, (i+1) N/n)
// touches, each with the share of the span it covers (the shares sum to 1).
std::vector<std::vector<std::pair<std::size_t, double>>> overlaps(std::size_t n, std::size_t N) {
  std::vector<std::vector<std::pair<std::size_t, double>>> r(n);
  const double step = double(N) / double(n);
  for (std::size_t i = 0; i < n; ++i) {
    const double lo = double(i) * step, hi = double(i + 1) * step;
    for (std::size_t k = std::size_t(lo); k < N && double(k) < hi; ++k) {
      const double share = (std::min(hi, double(k + 1)) - std::max(lo, double(k))) / step;
      if (share > 0) r[i].push_back({k, share});
    }
  }
  return r;
}

}  // namespace

Array<double> area_resize(const Array<double>& image, std::size_t height, std::size_t width) {
  check(image.dimension() == 2 && image.size() > 0, "area_resize", "needs one non-empty image (H, W), got ",
        shape_str(image.shape()));
  check(height > 0 && width > 0, "area_resize", "cannot make an image of ", height, " x ", width);
  const std::size_t H = image.shape()[0];
  const auto rows = overlaps(height, H), cols = overlaps(width, image.shape()[1]);
  Array<double> across = xt::zeros<double>({H, width});  // image R_w^T: each row averaged across
  for (std::size_t y = 0; y < H; ++y)
    for (std::size_t j = 0; j < width; ++j)
      for (const auto& [x, share] : cols[j]) across(y, j) += share * image(y, x);
  Array<double> out = xt::zeros<double>({height, width});  // R_h (image R_w^T)
  for (std::size_t i = 0; i < height; ++i)
    for (const auto& [y, share] : rows[i])
      for (std::size_t j = 0; j < width; ++j) out(i, j) += share * across(y, j);
  return out;
}

}  // namespace attnlab::nn::data
