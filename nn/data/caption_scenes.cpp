#include "nn/data/caption_scenes.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/random.hpp"

namespace attnlab::nn::data {

const std::vector<std::string>& caption_words() {
  static const std::vector<std::string> words = {
      "<bos>", "<eos>", "tshirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "boot",
      "left of", "above", "up-left of", "down-left of"};
  return words;
}

namespace {

constexpr std::size_t kGrid = 2, kGarment = kFashionMnistSide;

// The relation of garment a (read first) to garment b, from their cells (row, column) in the grid.
Index relation(std::size_t a_row, std::size_t a_col, std::size_t b_row, std::size_t b_col) {
  if (a_row == b_row) return kFirstRelation + 0;                  // left of
  if (a_col == b_col) return kFirstRelation + 1;                  // above
  return kFirstRelation + (a_row < b_row ? 2 : 3);                // up-left of, down-left of
}

}  // namespace

CaptionScenes make_caption_scenes(const FashionMnist<float>& garments, std::size_t count, std::uint64_t seed, const CaptionSceneOptions& o) {
  auto fail = [](const std::string& why) { throw std::invalid_argument("make_caption_scenes: " + why); };
  if (garments.size() == 0) fail("no garments to place");
  if (garments.images.dimension() != 3 || garments.images.shape(1) != kGarment || garments.images.shape(2) != kGarment)
    fail("garments must be (M, 28, 28)");
  if (o.cell * kGrid != o.side) fail("the side (" + std::to_string(o.side) + ") must be 2 cells of " + std::to_string(o.cell));
  if (kGarment + o.jitter > o.cell)
    fail("a garment (28) moved by up to " + std::to_string(o.jitter) + " does not fit a cell of " + std::to_string(o.cell));
  if (!(o.threshold >= 0.0f && o.threshold < 1.0f)) fail("threshold must be in [0, 1)");
  Generator gen(seed);
  CaptionScenes s;
  s.images = xt::zeros<float>({count, o.side, o.side});
  s.captions = IndexArray::from_shape({count, kCaptionLength});
  for (std::size_t n = 0; n < count; ++n) {
    std::array<std::size_t, 2> src{gen.below(garments.size()), gen.below(garments.size())};
    std::array<std::size_t, 2> cell{gen.below(kGrid * kGrid), 0};
    cell[1] = (cell[0] + 1 + gen.below(kGrid * kGrid - 1)) % (kGrid * kGrid);
    // The first word names the left garment, or the upper one when they share a column.
    auto key = [](std::size_t c) { return (c % kGrid) * kGrid + c / kGrid; };  // column, then row
    if (key(cell[1]) < key(cell[0])) std::swap(cell[0], cell[1]);
    std::array<Box, 2> boxes;
    for (std::size_t k = 0; k < 2; ++k) {
      const std::size_t y0 = (cell[k] / kGrid) * o.cell + gen.below(o.jitter + 1);
      const std::size_t x0 = (cell[k] % kGrid) * o.cell + gen.below(o.jitter + 1);
      Box b{o.side, o.side, 0, 0};
      for (std::size_t i = 0; i < kGarment; ++i)
        for (std::size_t j = 0; j < kGarment; ++j) {
          const float v = garments.images(src[k], i, j);
          s.images(n, y0 + i, x0 + j) = v;
          if (v > o.threshold) {
            b.top = std::min(b.top, y0 + i), b.bottom = std::max(b.bottom, y0 + i + 1);
            b.left = std::min(b.left, x0 + j), b.right = std::max(b.right, x0 + j + 1);
          }
        }
      if (b.bottom == 0) b = {y0, x0, y0 + kGarment, x0 + kGarment};  // a blank garment: its whole square
      boxes[k] = b;
    }
    const std::size_t r0 = cell[0] / kGrid, c0 = cell[0] % kGrid, r1 = cell[1] / kGrid, c1 = cell[1] % kGrid;
    s.captions(n, 0) = kCaptionBos;
    s.captions(n, 1) = kFirstGarment + garments.labels(src[0]);
    s.captions(n, 2) = relation(r0, c0, r1, c1);
    s.captions(n, 3) = kFirstGarment + garments.labels(src[1]);
    s.captions(n, 4) = kCaptionEos;
    s.boxes.push_back(boxes);
    s.cells.push_back(cell);
    s.sources.push_back(src);
  }
  return s;
}

std::string caption_text(const std::vector<Index>& tokens) {
  std::string out;
  for (const Index t : tokens) {
    if (t == kCaptionBos || t == kCaptionEos) continue;
    if (t < 0 || std::size_t(t) >= kCaptionVocab)
      throw std::invalid_argument("caption_text: token " + std::to_string(t) + " is not a caption word");
    out += (out.empty() ? "" : " ") + caption_words()[std::size_t(t)];
  }
  return out;
}

xt::xarray<bool> patches_in_box(const Box& box, std::size_t side, std::size_t patch) {
  if (patch == 0 || side % patch != 0)
    throw std::invalid_argument("patches_in_box: patch " + std::to_string(patch) + " does not divide the side " +
                                std::to_string(side));
  const std::size_t g = side / patch;
  xt::xarray<bool> in = xt::zeros<bool>({g, g});
  for (std::size_t r = 0; r < g; ++r)
    for (std::size_t c = 0; c < g; ++c) {
      // The centre of patch (r, c) is at pixel (r p + p/2, c p + p/2); compared doubled, exactly.
      const std::size_t y2 = 2 * r * patch + patch, x2 = 2 * c * patch + patch;
      in(r, c) = y2 >= 2 * box.top && y2 < 2 * box.bottom && x2 >= 2 * box.left && x2 < 2 * box.right;
    }
  return in;
}

}  // namespace attnlab::nn::data
