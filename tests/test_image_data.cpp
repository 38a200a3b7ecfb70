// Image helpers of nn/data/images.hpp: shift_and_mirror moves and mirrors every image exactly as
// its draws say (checked against a copy made by hand from the same draws), keeps the mass of an
// image when it does not shift, and refuses bad shapes; foreground_patches marks the patches half
// covered or more.
#include <doctest/doctest.h>

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "nn/data/images.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn::data;
using doctest::Contains;

TEST_CASE("shift_and_mirror with no shift: each image itself or its mirror, the coin as drawn") {
  Generator gen(3);
  const Array<float> images = random_uniform<float>({40, 5, 6}, gen);
  Generator draws(11), coins(11);
  const Array<float> out = shift_and_mirror(images, 0, draws);
  std::size_t mirrored = 0;
  for (std::size_t b = 0; b < 40; ++b) {
    coins.below(1), coins.below(1);  // dy, dx: always 0
    const bool mirror = coins.below(2) == 1;
    mirrored += mirror;
    const Array<float> one = xt::view(images, b);
    const Array<float> expected = mirror ? Array<float>(xt::flip(one, 1)) : one;
    CHECK(Array<float>(xt::view(out, b)) == expected);
  }
  CHECK(mirrored > 5);
  CHECK(mirrored < 35);
}

TEST_CASE("shift_and_mirror: a shift moves the pixels and fills the edge with 0") {
  Array<float> one = xt::zeros<float>({1, 4, 4});
  one(0, 1, 1) = 1.0f;
  // Find a seed whose draws are dy = +1, dx = -1, no mirror, and check the pixel moved there.
  for (std::uint64_t seed = 0; seed < 500; ++seed) {
    Generator probe(seed);
    const long dy = long(probe.below(3)) - 1, dx = long(probe.below(3)) - 1;
    const bool mirror = probe.below(2) == 1;
    if (dy != 1 || dx != -1 || mirror) continue;
    Generator gen(seed);
    const Array<float> out = shift_and_mirror(one, 1, gen);
    CHECK(out(0, 2, 0) == 1.0f);
    CHECK(xt::sum(out)() == doctest::Approx(1.0));
    return;
  }
  FAIL("no seed below 500 drew dy = 1, dx = -1 without a mirror");
}

TEST_CASE("shift_and_mirror: a pixel at the edge can leave the image") {
  Array<float> ones = xt::ones<float>({200, 3, 3});
  Generator gen(5);
  const Array<float> out = shift_and_mirror(ones, 1, gen);
  double least = 9;
  for (std::size_t b = 0; b < 200; ++b) least = std::min(least, double(xt::sum(xt::view(out, b))()));
  CHECK(least == 4.0);  // moved one step in both directions: a 2 x 2 corner is left
}

TEST_CASE("shift_and_mirror refuses images that are not (N, H, W) and shifts as wide as the image") {
  Generator gen(1);
  CHECK_THROWS_WITH_AS(shift_and_mirror(xt::zeros<float>({4, 4}), 1, gen), Contains("shift_and_mirror: needs images (N, H, W), got (4,4)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(shift_and_mirror(xt::zeros<float>({2, 4, 4}), 4, gen), Contains("max_shift 4 must be below"),
                       ShapeError);
}

TEST_CASE("foreground_patches: a patch counts when half its pixels or more are bright") {
  Array<float> image = xt::zeros<float>({4, 4});
  image(0, 0) = image(0, 1) = 1.0f;                 // top-left patch: 2 of 4
  image(0, 2) = 1.0f;                               // top-right: 1 of 4
  xt::view(image, xt::range(2, 4), xt::range(2, 4)) = 0.04f;  // bottom-right: below the threshold
  const xt::xarray<bool> on = foreground_patches(image, 2, 0.05f);
  CHECK(on == xt::xarray<bool>{{true, false}, {false, false}});
  CHECK_THROWS_WITH_AS(foreground_patches(image, 3, 0.05f), Contains("foreground_patches: patch 3 must be positive and divide"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(foreground_patches(xt::zeros<float>({1, 4, 4}), 2, 0.05f), Contains("needs one image (H, W)"), ShapeError);
}
