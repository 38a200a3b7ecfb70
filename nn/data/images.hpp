// Small image helpers for grey-level image sets (N, H, W), as lesson 16 uses them on Fashion-MNIST:
//
//   shift_and_mirror(images, s, gen)     every image moved by a random (dy, dx) in [-s, s]^2 (the
//                                        background, 0, fills in) and mirrored left to right with
//                                        probability 1/2: light augmentation
//   foreground_patches(image, p, t)      which p x p patches of one (H, W) image are at least half
//                                        covered by pixels brighter than t (row-major over the patch grid)
//   area_resize(image, h, w)             an (H, W) image of any size as (h, w) by area averaging
#pragma once

#include <cstddef>

#include <xtensor/xarray.hpp>

#include "core/array.hpp"
#include "core/random.hpp"

namespace attnlab::nn::data {

// out[b, y, x] = images[b, y - dy, x' ] with x' = x - dx, mirrored (W - 1 - x') when the image's
// coin says so, 0 where y - dy or x - dx leaves the image. Draws dy, dx and the coin from gen, in
// that order, image by image. ShapeError naming the function for images that are not (N, H, W) or
// a max_shift not below H and W.
Array<float> shift_and_mirror(const Array<float>& images, std::size_t max_shift, Generator& gen);

// (H/p, W/p) booleans. ShapeError for an image that is not 2-D, or a patch that is 0 or does not
// divide H and W.
xt::xarray<bool> foreground_patches(const Array<float>& image, std::size_t patch, float threshold);

// The (height, width) image whose pixel (i, j) is the mean of `image` (H, W) over the rectangle of
// it that the pixel covers, rows [i H/height, (i+1) H/height) and columns [j W/width, (j+1) W/width),
// each source pixel weighted by the area it shares with that rectangle (a box filter: no aliasing
// when shrinking, each source pixel's value over its area when enlarging). Computed as R_h image
// R_w^T with R's rows those overlaps, so every output row of R sums to 1 and the mean is kept.
// ShapeError naming the function for an image that is not 2-D, empty, or a target size of 0.
Array<double> area_resize(const Array<double>& image, std::size_t height, std::size_t width);

}  // namespace attnlab::nn::data
