// lessons/kit/vit_model's figures and explorer page for lesson 16: rollout_pairs (an image beside
// its rollout, two pairs a row), layer_rows (an image, its maps by layer, its rollout), patch_grids,
// accuracy_by_class, position_similarity_grid and vit_explorer_page, each drawn for real into a
// temporary folder and its layout checked; bad input refused by name.
#include <doctest/doctest.h>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "io/files.hpp"
#include "lessons/kit/vit_model.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::TempDir;
using doctest::Contains;

namespace {
nn::ViT<float> tiny_vit(Generator& gen) {
  nn::ViTConfig c;
  c.image_height = 8, c.image_width = 8, c.patch = 4, c.num_layers = 2;
  c.layer = nn::LayerConfig{8, 2, 16, 0.0, true, nn::Activation::GELU, 1e-6};
  return nn::ViT<float>(c, gen);
}

// The figure drawn to a PNG of some size: it renders.
void drawn(const plots::Figure& fig, const std::string& stem) {
  TempDir d;
  fig.save(d.path + "/" + stem + ".png");
  CHECK(read_file(d.path + "/" + stem + ".png").size() > 1000);
}
}  // namespace

TEST_CASE("rollout_pairs and layer_rows: every image with its rollout, or its layers and rollout") {
  Generator gen(8);
  nn::ViT<float> vit = tiny_vit(gen);
  const Array<float> images = random_uniform<float>({3, 8, 8}, gen);
  const Looks looks = class_token_looks(vit, images);
  const plots::Figure pairs = rollout_pairs(images, looks, {"a", "b", "c"}, "Pairs");
  CHECK(pairs.cols() == 4);
  CHECK(pairs.rows() == 2);  // three pairs, two a row
  CHECK(pairs.height_px() == 450 * 2 + 120);
  drawn(pairs, "pairs");
  const plots::Figure layers = layer_rows(images, looks, {"a", "b", "c"}, {2, 0}, "Layers");
  CHECK(layers.cols() == 4);  // the image, two layers, the rollout
  CHECK(layers.rows() == 2);
  drawn(layers, "layers");
  CHECK(image_of(images, 2)(1, 3) == doctest::Approx(images(2, 1, 3)));
  CHECK_THROWS_WITH_AS(rollout_pairs(images, looks, {"a", "b"}, "Pairs"),
                       Contains("rollout_pairs: needs images (N, H, W) with the looks and a caption of each, got images "
                                "(3,8,8), 3 looks and 2 captions"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(layer_rows(images, looks, {"a", "b", "c"}, {3}, "Layers"), Contains("layer_rows: row 3 of 3 images"),
                       ShapeError);
}

TEST_CASE("vit_explorer_page: one input per name, cls and the patches row by row") {
  Generator gen(9);
  nn::ViT<float> vit = tiny_vit(gen);
  const Looks looks = class_token_looks(vit, random_uniform<float>({3, 8, 8}, gen), /*score_parts=*/true);
  const ExplorerPage page = vit_explorer_page(looks, {"first", "second"});
  REQUIRE(page.inputs.size() == 2);
  CHECK(page.inputs[1].name == "second");
  CHECK(page.inputs[0].queries == std::vector<std::string>{"cls", "r1c1", "r1c2", "r2c1", "r2c2"});
  CHECK(page.inputs[0].layers.size() == 2);
  CHECK(page.query_side == "tokens (queries)");
  CHECK_THROWS_WITH_AS(vit_explorer_page(looks, {"a", "b", "c", "d"}), Contains("vit_explorer_page: 4 names for the looks of 3 images"),
                       ShapeError);
}

TEST_CASE("patch_grids, accuracy_by_class and position_similarity_grid draw, and refuse what does not fit") {
  const xt::xarray<double> image = xt::ones<double>({8, 8}) * 0.5;
  const plots::Figure grids = patch_grids(image, "grey", {4, 2});
  CHECK(grids.cols() == 2);
  drawn(grids, "grids");
  CHECK_THROWS_WITH_AS(patch_grids(image, "grey", {3}), Contains("patch_grids: patch size 3 does not divide the image side 8"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(patch_grids(xt::ones<double>({8, 6}), "grey", {2}), Contains("patch_grids: needs a square image (H, H), got (8,6)"),
                       ShapeError);

  const IndexArray labels = {0, 0, 1, 1, 2};
  drawn(accuracy_by_class(labels, {{"right", labels}, {"wrong", IndexArray{1, 1, 0, 0, 0}}}, {"a", "b", "c"}, "By class"), "bars");
  CHECK_THROWS(accuracy_by_class(labels, {{"short", IndexArray{0, 1}}}, {"a", "b", "c"}, "By class"));

  Array<double> cosine = xt::zeros<double>({4, 2, 2});
  for (std::size_t i = 0; i < 4; ++i) cosine(i, i / 2, i % 2) = 1.0;
  const plots::Figure positions = position_similarity_grid(cosine, "Positions");
  CHECK(positions.cols() == 2);
  drawn(positions, "positions");
  CHECK_THROWS_WITH_AS(position_similarity_grid(xt::zeros<double>({3, 2, 2}), "Positions"),
                       Contains("position_similarity_grid: needs cosines (side^2, side, side), got (3,2,2)"), ShapeError);
}
