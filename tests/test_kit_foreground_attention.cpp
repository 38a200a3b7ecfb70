// lessons/kit/vit_model's attention_on_foreground: the share of the patches an image's bright
// pixels cover, and the share of the class token's attention on them (each layer, the rollout),
// checked on images whose foreground is known: all lit (every share 1), nothing lit (every share
// 0), one patch lit (its weight in the class token's map); bad shapes refused by name. And
// image_probabilities, the softmax of each image's logits.
#include <doctest/doctest.h>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "lessons/kit/vit_model.hpp"
#include "nn/attention/rollout.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using doctest::Contains;

TEST_CASE("attention_on_foreground on images with a known foreground") {
  nn::ViTConfig c;
  c.image_height = 8, c.image_width = 8, c.patch = 4, c.num_layers = 2;
  c.layer = nn::LayerConfig{8, 2, 16, 0.0, true, nn::Activation::GELU, 1e-6};
  Generator gen(2);
  nn::ViT<float> vit(c, gen);
  Array<float> images = xt::zeros<float>({3, 8, 8});
  xt::view(images, 0) = 1.0f;                                        // every patch lit
  xt::view(images, 2, xt::range(4, 8), xt::range(0, 4)) = 1.0f;      // patch (1, 0) lit
  const ForegroundAttention on = attention_on_foreground(vit, images, 0.5f);
  REQUIRE(on.area.size() == 3);
  REQUIRE(on.rollout.size() == 3);
  REQUIRE(on.layers.size() == 2);
  CHECK(on.area[0] == 1.0);
  CHECK(on.area[1] == 0.0);
  CHECK(on.area[2] == 0.25);
  CHECK(on.rollout[0] == doctest::Approx(1.0));
  CHECK(on.rollout[1] == 0.0);
  const Looks looks = class_token_looks(vit, images);
  const auto& map = looks.rollout[2];
  CHECK(on.rollout[2] == doctest::Approx(map(1, 0) / xt::sum(map)()));
  for (std::size_t l = 0; l < 2; ++l) {
    CHECK(on.layers[l][0] == doctest::Approx(1.0));
    CHECK(on.layers[l][2] == doctest::Approx(looks.layers[2][l](1, 0) / xt::sum(looks.layers[2][l])()));
  }
  CHECK_THROWS_WITH_AS(attention_on_foreground(vit, xt::zeros<float>({8, 8}), 0.5f),
                       Contains("attention_on_foreground: needs images (N, H, W), got (8,8)"), ShapeError);
}

TEST_CASE("image_probabilities: the softmax of each image's logits, in batches of 500, and a clear error") {
  nn::ViTConfig c;
  c.image_height = 8, c.image_width = 8, c.patch = 4, c.num_layers = 1, c.num_classes = 3;
  c.layer = nn::LayerConfig{8, 2, 16, 0.0, true, nn::Activation::GELU, 1e-6};
  Generator gen(6);
  nn::ViT<float> vit(c, gen);
  const Array<float> images = random_uniform<float>({501, 8, 8}, gen);  // two batches
  const ImageLogits logits = [&](const Tensor<float>& x) { return vit.forward(x); };
  const Array<float> p = image_probabilities(vit, logits, images);
  REQUIRE(p.shape() == std::vector<std::size_t>{501, 3});
  const Array<float> last = xt::view(images, xt::range(500, 501));
  const Array<float> expected = softmax(vit.forward(Tensor<float>(last)), -1).value();
  for (std::size_t k = 0; k < 3; ++k) CHECK(p(500, k) == doctest::Approx(expected(0, k)));
  CHECK_THROWS_WITH_AS(image_probabilities(vit, logits, xt::zeros<float>({8, 8})),
                       Contains("image_probabilities: needs images (N, H, W), got (8,8)"), ShapeError);
}

TEST_CASE("class_token_looks follows the head: the patches' mean for Readout::patch_mean; no card for it") {
  nn::ViTConfig c;
  c.image_height = 8, c.image_width = 8, c.patch = 4, c.num_layers = 2, c.readout = nn::Readout::patch_mean;
  c.layer = nn::LayerConfig{8, 2, 16, 0.0, true, nn::Activation::GELU, 1e-6};
  Generator gen(7);
  nn::ViT<float> vit(c, gen);
  const Array<float> images = random_uniform<float>({2, 8, 8}, gen);
  const Looks looks = class_token_looks(vit, images);
  std::vector<Array<float>> maps;
  {
    NoGrad no_grad;
    for (const Tensor<float>& a : vit.forward_with_attention(Tensor<float>(images)).attention) maps.push_back(a.value());
  }
  const nn::ClassTokenAttention pooled = nn::patch_mean_attention(maps), by_class = nn::class_token_attention(maps);
  for (std::size_t j = 0; j < 4; ++j) {
    CHECK(looks.rollout[1](j / 2, j % 2) == doctest::Approx(pooled.rollout(1, j)));
    CHECK(looks.layers[1][1](j / 2, j % 2) == doctest::Approx(pooled.layers(1, 1, j)));
  }
  CHECK(xt::amax(xt::abs(pooled.rollout - by_class.rollout))() > 1e-6);
  CHECK_THROWS_WITH_AS(write_vit_card("vit", vit, {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j"}, {}),
                       Contains("write_vit_card: the card describes a ViT whose head reads the class token"), ShapeError);
}
