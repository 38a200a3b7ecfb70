// The caption scenes of lesson 20: two to four Fashion-MNIST garments on a larger canvas, and a
// caption that names every one and where each is from the next, generated from the scene, so the
// true box of every object a caption word names is known.
//
//   canvas (side x side, 64) cut into a 2 x 2 grid of cells (32 x 32); k garments (28 x 28),
//   k drawn from [min_garments, max_garments], go into k different cells, each moved by a random
//   (dy, dx) in [0, jitter]^2 inside its cell. The caption reads the cells column by column (the
//   left column first, top to bottom), and between two garments says where the first is from the
//   next:
//
//       <bos> g1 r1 g2 ... r(k-1) gk <eos> <pad>...     e.g. "bag left of sneaker", "coat above dress",
//                                                        "shirt above boot down-left of bag above coat"
//
//   (read in that order, a garment is always left of, above, up-left of or down-left of the next:
//   four relations say it). Each garment's box is the tightest rectangle around
//   its pixels brighter than `threshold`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "core/array.hpp"
#include "nn/data/fashion_mnist.hpp"

namespace attnlab::nn::data {

struct CaptionSceneOptions {
  std::size_t side = 64, cell = 32, jitter = 4;
  std::size_t min_garments = 2, max_garments = 2;  // a scene holds k of them, 1 <= min <= max <= 4
  float threshold = 0.2f;  // a garment's box: its pixels brighter than this
};

// The caption words: <bos> <eos>, the ten garments (short names), the four relations, and <pad>
// after the <eos> of a caption shorter than the longest (a loss ignores it: kCaptionPad).
enum CaptionToken : Index { kCaptionBos = 0, kCaptionEos = 1, kFirstGarment = 2, kFirstRelation = 12, kCaptionPad = 16 };
inline constexpr std::size_t kCaptionVocab = 17;
// Tokens of the caption of k garments, <bos> and <eos> included: k garments, k - 1 relations.
inline constexpr std::size_t caption_length(std::size_t garments) { return 2 * garments + 1; }
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
  IndexArray captions;                   // (N, caption_length(max_garments)), padded with <pad>
  // Per scene, per garment in the caption's order: its box, its cell (row-major in the grid) and
  // its row in the garment set. Garment k is the target word 2k of the caption (<bos> dropped).
  std::vector<std::vector<Box>> boxes;
  std::vector<std::vector<std::size_t>> cells, sources;
  std::size_t size() const { return captions.shape(0); }
  std::size_t garments(std::size_t n) const { return boxes[n].size(); }
};

// `count` scenes from the garments (images (M, 28, 28), labels), drawn with Generator(seed): for
// each scene a number of garments k, k garments at random (repeats allowed), k different cells, k
// jitters. std::invalid_argument naming the function for an empty garment set, a grid that is not
// 2 x 2 of cells holding a 28 x 28 garment moved by up to `jitter`, garment counts outside
// 1 <= min <= max <= 4, or a threshold outside [0, 1).
CaptionScenes make_caption_scenes(const FashionMnist<float>& garments, std::size_t count, std::uint64_t seed,
                   const CaptionSceneOptions& o = {});

// One garment of a scene: its row in the garment set, its cell (row by row in the 2 x 2 grid: 0
// top-left, 1 top-right, 2 bottom-left, 3 bottom-right) and its move (dy, dx) inside the cell.
struct Placement {
  std::size_t source = 0, cell = 0, dy = 0, dx = 0;
};

// One scene of the given garments where `placed` puts them, in any order (the caption reads them
// column by column), drawn and captioned as make_caption_scenes draws each of its scenes; its
// captions are caption_length(o.max_garments) wide. std::invalid_argument naming the function for
// the options' faults above, no garments or more than o.max_garments, two in one cell, a cell past
// 3, a move past o.jitter, or a source past the garment set.
CaptionScenes compose_caption_scene(const FashionMnist<float>& garments, std::vector<Placement> placed,
                                    const CaptionSceneOptions& o);

// The scenes of the given rows, in that order (a batch). std::out_of_range naming the function for
// a row past the end.
CaptionScenes select_scenes(const CaptionScenes& s, const std::vector<std::size_t>& rows);

// Teacher forcing's halves of the captions (N, W): the inputs, tokens [0, W - 1) (<bos> first), and
// the targets, tokens [1, W) (<eos> and <pad> last); and how many target words each caption has
// through its <eos> (2k for k garments), the steps a loss or a penalty counts.
IndexArray caption_inputs(const CaptionScenes& s);
IndexArray caption_targets(const CaptionScenes& s);
IndexArray caption_word_counts(const CaptionScenes& s);

// Scene n in colour (side, side, 3): the grey garments, and the boxes of the garments drawn in
// orange, cyan, magenta and green in the caption's order; only = k draws box k alone, -2 none.
xt::xarray<double> scene_with_boxes(const CaptionScenes& s, std::size_t n, int only = -1);

// "bag left of sneaker": the words of tokens (any length) up to their first <eos>, <bos> and <pad>
// left out (a greedy caption's steps after its <eos> are not part of it); or of row n of captions (N, L). std::out_of_range naming the function for a row past the end.
std::string caption_text(const std::vector<Index>& tokens);
std::string caption_text(const IndexArray& captions, std::size_t n);

// The first scene with this many garments, or the first with the most there are when none has.
// std::invalid_argument naming the function for no scenes.
std::size_t first_scene_with(const CaptionScenes& s, std::size_t garments);

// Which patches of a (side / patch)^2 grid have their centre inside the box: (side/p, side/p)
// booleans, row-major as the patches of nn::patchify. std::invalid_argument naming the function
// for a patch that is 0 or does not divide side.
xt::xarray<bool> patches_in_box(const Box& box, std::size_t side, std::size_t patch);

// The share of the (side / patch)^2 patches inside a named garment's box, averaged over every
// garment of every scene: the attention a reader that looks everywhere alike puts inside the box
// (chance for the pointing of nn/caption/caption_scores.hpp, near enough).
double box_patch_share(const CaptionScenes& s, std::size_t patch);

// The patches of scene n by name, row-major: "r1c2" (row and column from 1), followed by
// " (2k+1 garment)" for each garment k whose box holds the patch's centre, numbered as the caption's
// word that names it ("r2c1 (1 bag)").
std::vector<std::string> patch_names(const CaptionScenes& s, std::size_t n, std::size_t patch);

}  // namespace attnlab::nn::data
