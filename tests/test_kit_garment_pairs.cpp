// lessons/kit/garment_pairs: lesson 16's relational task, the models set up. The scene ViT is the
// base's blocks on the canvas with two classes and its head on the patches' mean; the three models
// are drawn from one generator in the order ViT, MLP, longer MLP (the same weights as made by hand);
// a canvas the patches do not tile is refused by name.
#include <doctest/doctest.h>

#include "lessons/kit/garment_pairs.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using doctest::Contains;

namespace {
nn::ViTConfig base() {
  nn::ViTConfig c;
  c.patch = 4, c.num_layers = 1;
  c.layer = nn::LayerConfig{8, 2, 16, 0.0, true, nn::Activation::GELU, 1e-6};
  return c;
}

bool same_weights(const nn::Module<float>& a, const nn::Module<float>& b) {
  const auto pa = a.parameters(), pb = b.parameters();
  if (pa.size() != pb.size()) return false;
  for (std::size_t i = 0; i < pa.size(); ++i)
    if (pa[i].value() != pb[i].value()) return false;
  return true;
}
}  // namespace

TEST_CASE("scene_vit_config: the base's blocks on the canvas, two classes, the head on the patches' mean") {
  const nn::ViTConfig c = scene_vit_config(base(), 12);
  CHECK(c.image_height == 12);
  CHECK(c.image_width == 12);
  CHECK(c.num_classes == 2);
  CHECK(c.readout == nn::Readout::patch_mean);
  CHECK(c.patch == 4);
  CHECK(c.layer.d_model == 8);
  CHECK_THROWS_WITH_AS(scene_vit_config(base(), 10), Contains("scene_vit_config: patch size 4 does not tile a canvas of 10"),
                       ShapeError);
}

TEST_CASE("scene_models: the ViT, then the MLP, then the longer MLP, from one generator") {
  Generator gen(11);
  const SceneModels m = scene_models(base(), 12, 5, gen);
  CHECK(m.vit->num_patches() == 9);
  CHECK(m.mlp->pixels() == 144);
  CHECK(m.longer->parameter_count() == 144 * 5 + 5 + 5 * 5 + 5 + 5 * 2 + 2);
  Generator again(11);
  const nn::ViT<float> vit(scene_vit_config(base(), 12), again);
  const PixelMLP mlp(again, 144, 5, 2), longer(again, 144, 5, 2);
  CHECK(same_weights(*m.vit, vit));
  CHECK(same_weights(*m.mlp, mlp));
  CHECK(same_weights(*m.longer, longer));
  CHECK_FALSE(same_weights(*m.mlp, *m.longer));  // two draws, not one model twice
  Generator other(11);
  CHECK_THROWS_AS(scene_models(base(), 14, 5, other), ShapeError);
}
