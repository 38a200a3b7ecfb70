// The caption scenes of lesson 18: two Fashion-MNIST garments on a larger canvas, and a caption
// that says what they are and where one is from the other, generated from the scene, so the true
// box of every object a caption word names is known.
//
//   canvas (side x side, 64) cut into a 2 x 2 grid of cells (32 x 32); two garments (28 x 28) go
//   into two different cells, each moved by a random (dy, dx) in [0, jitter]^2 inside its cell.
//   The caption reads the left garment first (the upper one when they share a column):
//
//       <bos> first relation second <eos>      e.g. "bag left of sneaker", "coat above dress",
//                                                   "shirt up-left of boot", "sandal down-left of bag"
//
//   and each garment's box is the tightest rectangle around its pixels brighter than `threshold`.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "core/array.hpp"
#include "nn/data/fashion_mnist.hpp"

namespace attnlab::nn::data {

struct CaptionSceneOptions {
  std::size_t side = 64, cell = 32, jitter = 4;
  float threshold = 0.2f;  // a garment's box: its pixels brighter than this
};

// The caption words: <bos> <eos>, the ten garments (short names), the four relations.
enum CaptionToken : Index { kCaptionBos = 0, kCaptionEos = 1, kFirstGarment = 2, kFirstRelation = 12 };
inline constexpr std::size_t kCaptionVocab = 16, kCaptionLength = 5;  // <bos> A relation B <eos>
const std::vector<std::string>& caption_words();

// Rows [top, bottom) and columns [left, right) of the canvas.
struct Box {
  std::size_t top = 0, left = 0, bottom = 0, right = 0;
  bool operator==(const Box& o) const {
    return top == o.top && left == o.left && bottom == o.bottom && right == o.right;
  }
};

struct CaptionScenes {
  Array<float> images;                   // (N, side, side) in [0, 1]
  IndexArray captions;                   // (N, 5): <bos> first relation second <eos>
  std::vector<std::array<Box, 2>> boxes; // per scene: the first and the second garment's box
  std::vector<std::array<std::size_t, 2>> cells;    // per scene: their cells, row-major in the grid
  std::vector<std::array<std::size_t, 2>> sources;  // per scene: their rows in the garment set
  std::size_t size() const { return captions.shape(0); }
};

// `count` scenes from the garments (images (M, 28, 28), labels), drawn with Generator(seed): for
// each scene two garments at random (repeats allowed), two different cells, two jitters.
// std::invalid_argument naming the function for an empty garment set, a grid that is not 2 x 2 of
// cells holding a 28 x 28 garment moved by up to `jitter`, or a threshold outside [0, 1).
CaptionScenes make_caption_scenes(const FashionMnist<float>& garments, std::size_t count, std::uint64_t seed,
                   const CaptionSceneOptions& o = {});

// "bag left of sneaker": the words of tokens (any length), <bos> and <eos> left out.
std::string caption_text(const std::vector<Index>& tokens);

// Which patches of a (side / patch)^2 grid have their centre inside the box: (side/p, side/p)
// booleans, row-major as the patches of nn::patchify. std::invalid_argument naming the function
// for a patch that is 0 or does not divide side.
xt::xarray<bool> patches_in_box(const Box& box, std::size_t side, std::size_t patch);

}  // namespace attnlab::nn::data
