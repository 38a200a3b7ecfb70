// lessons/kit/vit_model's pieces for lesson 16's tables and figures: the parameters of a ViT by
// part (adding up to the whole), the patch vectors of an image as a figure, the foreground means and
// table of attention_on_foreground, and the learned positions' similarity (the class token's row left out,
// laid out as the patch grid); bad input refused by name.
#include <doctest/doctest.h>

#include <stdexcept>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "io/files.hpp"
#include "lessons/kit/vit_model.hpp"
#include "lessons/story/text.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::TempDir;
using doctest::Contains;

namespace {
nn::ViTConfig small_config() {
  nn::ViTConfig c;
  c.image_height = 8, c.image_width = 12, c.patch = 4, c.num_layers = 2, c.num_classes = 3;
  c.layer = nn::LayerConfig{8, 2, 16, 0.0, true, nn::Activation::GELU, 1e-6};
  return c;
}
}  // namespace

TEST_CASE("vit_parameter_rows: the parts, named with their sizes, add up to the total") {
  Generator gen(1);
  const nn::ViT<float> vit(small_config(), gen);
  const auto rows = vit_parameter_rows(vit);
  REQUIRE(rows.size() == 5);
  CHECK(rows[0][0] == "patch embedding: Linear(16, 8)");
  CHECK(rows[0][1] == std::to_string(16 * 8 + 8));
  CHECK(rows[1] == std::vector<std::string>{"class token and 7 positions", std::to_string(8 + 7 * 8)});
  CHECK(rows[2][0] == "2 encoder layers and the final norm");
  CHECK(rows[3] == std::vector<std::string>{"head: Linear(8, 3)", std::to_string(8 * 3 + 3)});
  std::size_t parts = 0;
  for (std::size_t i = 0; i < 4; ++i) parts += std::stoul(rows[i][1]);
  CHECK(rows[4] == std::vector<std::string>{"total", std::to_string(vit.parameter_count())});
  CHECK(parts == vit.parameter_count());
}

TEST_CASE("patch_vectors_figure: one row a patch; a size that does not divide the image refused") {
  Generator gen(2);
  const Array<float> image = random_uniform<float>({8, 12}, gen);
  const plots::Figure fig = patch_vectors_figure(image, 4);
  CHECK(fig.width_px() == 1800);
  CHECK(fig.height_px() == 950);
  TempDir d;
  fig.save(d / "patches.png");
  CHECK(read_file(d / "patches.png").size() > 1000);
  CHECK_THROWS_WITH_AS(patch_vectors_figure(image, 5),
                       Contains("patch_vectors_figure: needs an image (H, W) whose sides patch size 5 divides, got (8,12)"),
                       ShapeError);
  CHECK_THROWS_AS(patch_vectors_figure(random_uniform<float>({1, 8, 8}, gen), 4), ShapeError);
}

TEST_CASE("foreground_shares and foreground_rows: the means of the area, each layer and the rollout, and as a table") {
  ForegroundAttention on;
  on.area = {0.25, 0.75}, on.rollout = {0.5, 0.7}, on.layers = {{0.1, 0.3}, {0.4, 0.4}};
  const auto rows = foreground_rows(on, "the garment");
  REQUIRE(rows.size() == 4);
  CHECK(rows[0] == std::vector<std::string>{"share of the patches the garment covers", percent(0.5, 1)});
  CHECK(rows[1] == std::vector<std::string>{"layer 1: class token's attention on them", percent(0.2, 1)});
  CHECK(rows[2] == std::vector<std::string>{"layer 2: class token's attention on them", percent(0.4, 1)});
  CHECK(rows[3] == std::vector<std::string>{"rollout over all layers, on them", percent(0.6, 1)});
  CHECK_THROWS_WITH_AS(foreground_rows(ForegroundAttention{}, "the garment"), Contains("foreground_rows: no images"),
                       std::invalid_argument);
  const ForegroundShares shares = foreground_shares(on);
  CHECK(shares.area == doctest::Approx(0.5));
  CHECK(shares.rollout == doctest::Approx(0.6));
  CHECK(shares.lift == doctest::Approx(1.2));
  REQUIRE(shares.layers.size() == 2);
  CHECK(shares.layers[0] == doctest::Approx(0.2));
  CHECK(shares.layers[1] == doctest::Approx(0.4));
  const ForegroundShares none = foreground_shares(ForegroundAttention{});
  CHECK(none.area == 0.0);
  CHECK(none.lift == 0.0);
  CHECK(none.layers.empty());
}

TEST_CASE("learned_position_similarity: the patch positions only, laid out as the grid") {
  Generator gen(3);
  nn::ViT<float> vit(small_config(), gen);  // a grid of 2 x 3 patches
  const nn::GridSimilarity g = learned_position_similarity(vit, 2);
  REQUIRE(g.cosine.shape() == std::vector<std::size_t>{6, 2, 3});
  const Array<float> table = xt::view(vit.pos_embed.weight().value(), xt::range(1, 7));
  const nn::GridSimilarity direct = nn::grid_similarity(table, 2, 3, 2);
  CHECK(g.neighbours == direct.neighbours);
  CHECK(g.far == direct.far);
  CHECK(g.cosine(4, 0, 2) == direct.cosine(4, 2));  // position 4 against position 2 (row 0, column 2)
  CHECK(g.cosine(5, 1, 2) == doctest::Approx(1.0));  // each position is itself
}
