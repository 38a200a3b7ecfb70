// The Vision Transformer: patch extraction order, shapes, collected attention, parameter count,
// and errors for images the patch does not divide.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "nn/vit.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;
using namespace attnlab::nn;
using TF = Tensor<float>;
using TD = Tensor<double>;

namespace {

ViTConfig fashion(std::size_t layers = 2) {
  ViTConfig c;
  c.image_height = c.image_width = 28;
  c.channels = 1;
  c.patch = 4;
  c.num_classes = 10;
  c.num_layers = layers;
  c.layer = {32, 4, 64, 0.0, true, Activation::GELU, 1e-6};
  return c;
}

}  // namespace

TEST_CASE("patchify: row-major patches, each flattened channel-major") {
  // A 4x4 image 0..15 in 2x2 patches: top-left, top-right, bottom-left, bottom-right.
  TD img(Array<double>(xt::reshape_view(xt::arange<double>(16), {1, 1, 4, 4})));
  Array<double> p = patchify(img, 2).value();
  CHECK(shape_of(p) == Shape{1, 4, 4});
  const Array<double> expected = {{{0, 1, 4, 5}, {2, 3, 6, 7}, {8, 9, 12, 13}, {10, 11, 14, 15}}};
  CHECK(p == expected);
  // Two channels: the patch vector holds channel 0's pixels, then channel 1's.
  TD two(Array<double>(xt::reshape_view(xt::arange<double>(32), {1, 2, 4, 4})));
  Array<double> q = patchify(two, 2).value();
  CHECK(shape_of(q) == Shape{1, 4, 8});
  CHECK(xt::view(q, 0, 3, xt::all()) == Array<double>{10, 11, 14, 15, 26, 27, 30, 31});
  // Backward is the inverse permutation: the sum of a patch vector's gradient lands on its pixels.
  TD x(Array<double>(xt::zeros<double>({1, 1, 4, 4})), true);
  Array<double> up = xt::zeros<double>({1, 4, 4});
  up(0, 1, 2) = 5.0;  // patch 1 (top right), entry 2 = pixel (1, 2)
  patchify(x, 2).backward(up);
  CHECK(x.grad()(0, 0, 1, 2) == 5.0);
  CHECK(xt::sum(x.grad())() == 5.0);
}

TEST_CASE("PatchEmbedding: grayscale (B, H, W) equals (B, 1, H, W); (B, N, d) out") {
  Generator gen(1);
  PatchEmbedding<double> pe(1, 7, 12, gen);
  CHECK(pe.parameter_count() == 49 * 12 + 12);
  TD gray(random_normal<double>({3, 28, 28}, gen));
  TD chan(Array<double>(xt::reshape_view(gray.value(), {3, 1, 28, 28})));
  Array<double> a = pe.forward(gray).value(), b = pe.forward(chan).value();
  CHECK(shape_of(a) == Shape{3, 16, 12});
  CHECK(a == b);
  PatchEmbedding<double> rgb(3, 2, 5, gen);
  CHECK(rgb.forward(TD::zeros({2, 3, 4, 6})).shape() == Shape{2, 6, 5});
  // Non-square patch grids and a patch as large as the image are fine.
  PatchEmbedding<double> whole(1, 8, 4, gen);
  CHECK(whole.forward(TD::zeros({1, 8, 8})).shape() == Shape{1, 1, 4});
}

TEST_CASE("PatchEmbedding and ViT reject images the patch does not divide") {
  Generator gen(2);
  PatchEmbedding<float> pe(1, 5, 8, gen);
  std::string msg = error_of([&] { pe.forward(TF::zeros({2, 28, 28})); });
  CHECK(contains(msg, "PatchEmbedding"));
  CHECK(contains(msg, "28x28"));
  CHECK(contains(msg, "5"));
  msg = error_of([&] { pe.forward(TF::zeros({2, 3, 25, 25})); });  // 3 channels, expected 1
  CHECK(contains(msg, "PatchEmbedding"));
  CHECK(contains(msg, "(2,3,25,25)"));
  ViTConfig c = fashion();
  c.patch = 5;
  msg = error_of([&] { ViT<float> vit(c, gen); });
  CHECK(contains(msg, "ViT"));
  CHECK(contains(msg, "28x28"));
  // A built ViT wants its own image size.
  ViT<float> vit(fashion(), gen);
  msg = error_of([&] { vit.forward(TF::zeros({2, 32, 32})); });
  CHECK(contains(msg, "ViT"));
  CHECK(contains(msg, "(2,32,32)"));
}

TEST_CASE("ViT: logits, per-layer attention (B, h, N + 1, N + 1), parameter count") {
  Generator gen(3);
  ViT<float> vit(fashion(3), gen);
  CHECK(vit.num_patches() == 49);
  TF images(random_uniform<float>({5, 28, 28}, gen));
  ViTOutput<float> out = vit.forward_with_attention(images);
  CHECK(out.logits.shape() == Shape{5, 10});
  REQUIRE(out.attention.size() == 3);
  for (const TF& w : out.attention) {
    CHECK(shape_of(w.value()) == Shape{5, 4, 50, 50});
    for (std::size_t q : {0, 17, 49}) {
      const float row = xt::sum(xt::view(w.value(), 2, 1, q, xt::all()))();
      CHECK(row == doctest::Approx(1.0f).epsilon(1e-5));
    }
  }
  // d = 32, FFN 64, 16 values per patch, 50 tokens, 3 layers, 10 classes.
  const std::size_t d = 32, f = 64;
  const std::size_t layer = 4 * (d * d + d) + (d * f + f + f * d + d) + 2 * 2 * d;
  const std::size_t expected = (16 * d + d) + d + 50 * d + 3 * layer + 2 * d + (d * 10 + 10);
  CHECK(vit.parameter_count() == expected);
  std::vector<std::string> names;
  for (const auto& [name, t] : vit.named_parameters()) names.push_back(name);
  CHECK(names.front() == "cls_token");
  CHECK(std::find(names.begin(), names.end(), "encoder.layers.2.self_attn.out_proj.weight") != names.end());
  CHECK(std::find(names.begin(), names.end(), "encoder.norm.weight") != names.end());
  CHECK(std::find(names.begin(), names.end(), "pos_embed.weight") != names.end());
}

TEST_CASE("ViT: the class token and every patch receive a gradient; eval is deterministic") {
  ViTConfig c = fashion(1);
  c.layer.dropout = 0.2;
  Generator gen(4);
  ViT<float> vit(c, gen);
  TF images(random_uniform<float>({2, 1, 28, 28}, gen), true);
  sum(vit.forward(images)).backward();
  CHECK(xt::amax(xt::abs(vit.cls_token.grad()))() > 0.0f);
  CHECK(xt::amax(xt::abs(xt::view(images.grad(), 1, 0, 27, xt::all())))() > 0.0f);
  vit.eval();
  TF x(random_uniform<float>({2, 28, 28}, gen));
  CHECK(vit.forward(x).value() == vit.forward(x).value());
}

TEST_CASE("ViT with Readout::patch_mean: the head reads the mean of the patch tokens' final vectors") {
  ViTConfig c = fashion(2);
  c.readout = Readout::patch_mean;
  Generator gen(5), same(5);
  ViT<float> vit(c, gen);
  vit.eval();
  TF images(random_uniform<float>({3, 28, 28}, gen));
  // The same steps by hand: patches, class token in front, positions, encoder, then the mean of
  // tokens 1..N (not the class token's row 0) into the head.
  TF x = vit.patch_embed(images);
  TF cls = broadcast_to(vit.cls_token, {3, 1, 32});
  TF h = vit.encoder.forward(vit.pos_embed.forward(concat(std::vector<TF>{cls, x}, 1)));
  const TF by_hand = vit.head(mean(slice(h, 1, 1, 50), {1}));
  CHECK(xt::amax(xt::abs(vit.forward(images).value() - by_hand.value()))() < 1e-6f);
  // Same parameters as the class-token readout (the class token stays in the sequence), but other
  // logits: the head reads another vector.
  ViT<float> by_class(fashion(2), same);
  by_class.eval();
  CHECK(by_class.parameter_count() == vit.parameter_count());
  CHECK(xt::amax(xt::abs(by_class.forward(images).value() - vit.forward(images).value()))() > 1e-4f);
}
