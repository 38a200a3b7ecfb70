#include "nn/data/caption_scenes.hpp"

#include <algorithm>
#include <stdexcept>

#include <xtensor/xmath.hpp>
#include <xtensor/xoperation.hpp>
#include <xtensor/xview.hpp>

#include "core/random.hpp"

namespace attnlab::nn::data {

const std::vector<std::string>& caption_words() {
  static const std::vector<std::string> words = {
      "<bos>", "<eos>", "tshirt", "trouser", "pullover", "dress", "coat", "sandal", "shirt", "sneaker", "bag", "boot",
      "left of", "above", "up-left of", "down-left of", "<pad>"};
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

// The options' faults, each named by `fn`.
void check_options(const char* fn, const FashionMnist<float>& garments, const CaptionSceneOptions& o) {
  auto fail = [fn](const std::string& why) { throw std::invalid_argument(std::string(fn) + ": " + why); };
  if (garments.size() == 0) fail("no garments to place");
  if (garments.images.dimension() != 3 || garments.images.shape(1) != kGarment || garments.images.shape(2) != kGarment)
    fail("garments must be (M, 28, 28)");
  if (o.cell * kGrid != o.side) fail("the side (" + std::to_string(o.side) + ") must be 2 cells of " + std::to_string(o.cell));
  if (kGarment + o.jitter > o.cell)
    fail("a garment (28) moved by up to " + std::to_string(o.jitter) + " does not fit a cell of " + std::to_string(o.cell));
  if (o.min_garments < 1 || o.min_garments > o.max_garments || o.max_garments > kGrid * kGrid)
    fail("garments per scene " + std::to_string(o.min_garments) + " to " + std::to_string(o.max_garments) +
         ": need 1 <= min <= max <= 4 (one per cell)");
  if (!(o.threshold >= 0.0f && o.threshold < 1.0f)) fail("threshold must be in [0, 1)");
}

// The caption's order of the cells: column by column, the left column first, top to bottom.
std::size_t reading_key(std::size_t cell) { return (cell % kGrid) * kGrid + cell / kGrid; }

// Scene n of s (images, captions allocated; boxes, cells and sources appended) from its garments
// in the caption's order.
void place(CaptionScenes& s, std::size_t n, const FashionMnist<float>& garments, const std::vector<Placement>& placed,
           const CaptionSceneOptions& o) {
  const std::size_t k = placed.size();
  std::vector<Box> boxes(k);
  std::vector<std::size_t> cell(k), src(k);
  s.captions(n, 0) = kCaptionBos;
  for (std::size_t g = 0; g < k; ++g) {
    cell[g] = placed[g].cell, src[g] = placed[g].source;
    const std::size_t y0 = (cell[g] / kGrid) * o.cell + placed[g].dy, x0 = (cell[g] % kGrid) * o.cell + placed[g].dx;
    Box b{o.side, o.side, 0, 0};
    for (std::size_t i = 0; i < kGarment; ++i)
      for (std::size_t j = 0; j < kGarment; ++j) {
        const float v = garments.images(src[g], i, j);
        s.images(n, y0 + i, x0 + j) = v;
        if (v > o.threshold) {
          b.top = std::min(b.top, y0 + i), b.bottom = std::max(b.bottom, y0 + i + 1);
          b.left = std::min(b.left, x0 + j), b.right = std::max(b.right, x0 + j + 1);
        }
      }
    if (b.bottom == 0) b = {y0, x0, y0 + kGarment, x0 + kGarment};  // a blank garment: its whole square
    boxes[g] = b;
    s.captions(n, 1 + 2 * g) = kFirstGarment + garments.labels(src[g]);
    if (g > 0)
      s.captions(n, 2 * g) = relation(cell[g - 1] / kGrid, cell[g - 1] % kGrid, cell[g] / kGrid, cell[g] % kGrid);
  }
  s.captions(n, 2 * k) = kCaptionEos;
  s.boxes.push_back(boxes);
  s.cells.push_back(cell);
  s.sources.push_back(src);
}

CaptionScenes empty_scenes(std::size_t count, const CaptionSceneOptions& o) {
  CaptionScenes s;
  s.images = xt::zeros<float>({count, o.side, o.side});
  s.captions = xt::full_like(IndexArray::from_shape({count, caption_length(o.max_garments)}), Index(kCaptionPad));
  return s;
}

}  // namespace

CaptionScenes make_caption_scenes(const FashionMnist<float>& garments, std::size_t count, std::uint64_t seed, const CaptionSceneOptions& o) {
  check_options("make_caption_scenes", garments, o);
  Generator gen(seed);
  CaptionScenes s = empty_scenes(count, o);
  for (std::size_t n = 0; n < count; ++n) {
    const std::size_t k = o.min_garments + gen.below(o.max_garments - o.min_garments + 1);
    // k different cells (the first k of a shuffle), in the caption's order.
    std::vector<std::size_t> cell{0, 1, 2, 3};
    for (std::size_t i = 0; i < k; ++i) std::swap(cell[i], cell[i + gen.below(kGrid * kGrid - i)]);
    cell.resize(k);
    std::sort(cell.begin(), cell.end(), [](std::size_t a, std::size_t b) { return reading_key(a) < reading_key(b); });
    std::vector<Placement> placed(k);
    for (std::size_t g = 0; g < k; ++g) {
      placed[g].cell = cell[g], placed[g].source = gen.below(garments.size());
      placed[g].dy = gen.below(o.jitter + 1), placed[g].dx = gen.below(o.jitter + 1);
    }
    place(s, n, garments, placed, o);
  }
  return s;
}

CaptionScenes compose_caption_scene(const FashionMnist<float>& garments, std::vector<Placement> placed,
                                    const CaptionSceneOptions& o) {
  check_options("compose_caption_scene", garments, o);
  auto fail = [](const std::string& why) { throw std::invalid_argument("compose_caption_scene: " + why); };
  if (placed.empty() || placed.size() > o.max_garments)
    fail(std::to_string(placed.size()) + " garments: a scene holds 1 to " + std::to_string(o.max_garments));
  std::vector<bool> taken(kGrid * kGrid, false);
  for (const Placement& p : placed) {
    if (p.cell >= kGrid * kGrid) fail("cell " + std::to_string(p.cell) + " of a grid of 4 (0 to 3, row by row)");
    if (taken[p.cell]) fail("two garments in cell " + std::to_string(p.cell));
    if (p.source >= garments.size())
      fail("garment " + std::to_string(p.source) + " of a set of " + std::to_string(garments.size()));
    if (p.dy > o.jitter || p.dx > o.jitter)
      fail("a move of (" + std::to_string(p.dy) + ", " + std::to_string(p.dx) + ") past the jitter " + std::to_string(o.jitter));
    taken[p.cell] = true;
  }
  std::sort(placed.begin(), placed.end(),
            [](const Placement& a, const Placement& b) { return reading_key(a.cell) < reading_key(b.cell); });
  CaptionScenes s = empty_scenes(1, o);
  place(s, 0, garments, placed, o);
  return s;
}

CaptionScenes select_scenes(const CaptionScenes& s, const std::vector<std::size_t>& rows) {
  CaptionScenes out;
  const std::size_t side = s.images.shape(1);
  out.images = xt::zeros<float>({rows.size(), side, side});
  out.captions = IndexArray::from_shape({rows.size(), s.captions.shape(1)});
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (rows[k] >= s.size())
      throw std::out_of_range("select_scenes: row " + std::to_string(rows[k]) + " of " + std::to_string(s.size()) +
                              " scenes");
    xt::view(out.images, k) = xt::view(s.images, rows[k]);
    xt::view(out.captions, k) = xt::view(s.captions, rows[k]);
    out.boxes.push_back(s.boxes[rows[k]]), out.cells.push_back(s.cells[rows[k]]), out.sources.push_back(s.sources[rows[k]]);
  }
  return out;
}

IndexArray caption_inputs(const CaptionScenes& s) {
  return xt::view(s.captions, xt::all(), xt::range(0, s.captions.shape(1) - 1));
}
IndexArray caption_targets(const CaptionScenes& s) {
  return xt::view(s.captions, xt::all(), xt::range(1, s.captions.shape(1)));
}
IndexArray caption_word_counts(const CaptionScenes& s) {
  IndexArray n = IndexArray::from_shape({s.size()});
  for (std::size_t i = 0; i < s.size(); ++i) n(i) = Index(caption_length(s.garments(i)) - 1);
  return n;
}

xt::xarray<double> scene_with_boxes(const CaptionScenes& s, std::size_t n, int only) {
  const std::size_t side = s.images.shape(1);
  xt::xarray<double> rgb = xt::zeros<double>({side, side, std::size_t(3)});
  for (std::size_t c = 0; c < 3; ++c) xt::view(rgb, xt::all(), xt::all(), c) = xt::view(s.images, n);
  const double colour[4][3] = {{1.0, 0.55, 0.0}, {0.0, 0.85, 1.0}, {1.0, 0.2, 0.9}, {0.3, 1.0, 0.3}};
  for (int k = 0; k < int(s.garments(n)); ++k) {
    if (only == -2 || (only >= 0 && k != only)) continue;
    const Box& b = s.boxes[n][std::size_t(k)];
    for (std::size_t y = b.top; y < b.bottom; ++y)
      for (std::size_t x = b.left; x < b.right; ++x)
        if (y == b.top || y + 1 == b.bottom || x == b.left || x + 1 == b.right)
          for (std::size_t c = 0; c < 3; ++c) rgb(y, x, c) = colour[k][c];
  }
  return rgb;
}

std::string caption_text(const std::vector<Index>& tokens) {
  std::string out;
  for (const Index t : tokens) {
    if (t == kCaptionEos) break;  // a greedy caption's steps after it are not part of it
    if (t == kCaptionBos || t == kCaptionPad) continue;
    if (t < 0 || std::size_t(t) >= kCaptionVocab)
      throw std::invalid_argument("caption_text: token " + std::to_string(t) + " is not a caption word");
    out += (out.empty() ? "" : " ") + caption_words()[std::size_t(t)];
  }
  return out;
}

std::string caption_text(const IndexArray& captions, std::size_t n) {
  if (captions.dimension() != 2 || n >= captions.shape(0))
    throw std::out_of_range("caption_text: row " + std::to_string(n) + " of " + std::to_string(captions.dimension()) +
                            "-d captions of " + std::to_string(captions.dimension() ? captions.shape(0) : 0) + " rows");
  std::vector<Index> w(captions.shape(1));
  for (std::size_t t = 0; t < w.size(); ++t) w[t] = captions(n, t);
  return caption_text(w);
}

std::size_t first_scene_with(const CaptionScenes& s, std::size_t garments) {
  if (s.size() == 0) throw std::invalid_argument("first_scene_with: no scenes");
  std::size_t most = 0;
  for (std::size_t n = 0; n < s.size(); ++n) {
    if (s.garments(n) == garments) return n;
    if (s.garments(n) > s.garments(most)) most = n;
  }
  return most;
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

double box_patch_share(const CaptionScenes& s, std::size_t patch) {
  const std::size_t side = s.images.shape(s.images.dimension() - 1);
  double share = 0, named = 0;
  for (std::size_t n = 0; n < s.size(); ++n)
    for (const Box& b : s.boxes[n]) {
      const xt::xarray<bool> in = patches_in_box(b, side, patch);
      share += double(xt::sum(xt::cast<int>(in))()) / double(in.size()), ++named;
    }
  return named ? share / named : 0.0;
}

std::vector<std::string> patch_names(const CaptionScenes& s, std::size_t n, std::size_t patch) {
  if (n >= s.size())
    throw std::out_of_range("patch_names: scene " + std::to_string(n) + " of " + std::to_string(s.size()));
  const std::size_t side = s.images.shape(s.images.dimension() - 1), grid = patch ? side / patch : 0;
  std::vector<xt::xarray<bool>> in;
  for (const Box& b : s.boxes[n]) in.push_back(patches_in_box(b, side, patch));
  std::vector<std::string> names;
  for (std::size_t p = 0; p < grid * grid; ++p) {
    std::string name = "r" + std::to_string(p / grid + 1) + "c" + std::to_string(p % grid + 1);
    for (std::size_t g = 0; g < in.size(); ++g)
      if (in[g](p / grid, p % grid))
        name += " (" + std::to_string(2 * g + 1) + " " + caption_words()[std::size_t(s.captions(n, 1 + 2 * g))] + ")";
    names.push_back(name);
  }
  return names;
}

}  // namespace attnlab::nn::data
