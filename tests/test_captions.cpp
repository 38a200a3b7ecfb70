// Lesson 18's plumbing: the caption scenes (captions that agree with where the garments are, boxes
// around exactly their bright pixels), the patches a box holds, the log-probability of a chosen
// entry, and the captioner (soft weights summing to 1, hard glimpses reading the patch drawn,
// replays repeating a pass), a patch encoder without layers keeping each annotation to its own patch,
// with errors that name what is wrong.
#include <doctest/doctest.h>

#include <cmath>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "nn/caption/captioner.hpp"
#include "nn/data/caption_scenes.hpp"

using namespace attnlab;
namespace data = attnlab::nn::data;
using doctest::Contains;

namespace {
// Garment k: a bright rectangle rows [4, 4 + 2k + 6), columns [10, 20), label k; 0 elsewhere.
data::FashionMnist<float> rectangles(std::size_t n) {
  data::FashionMnist<float> g;
  g.images = xt::zeros<float>({n, std::size_t(28), std::size_t(28)});
  g.labels = IndexArray::from_shape({n});
  for (std::size_t k = 0; k < n; ++k) {
    g.labels(k) = Index(k % 10);
    for (std::size_t i = 4; i < 4 + 2 * k + 6; ++i)
      for (std::size_t j = 10; j < 20; ++j) g.images(k, i, j) = 0.9f;
  }
  return g;
}
}  // namespace

TEST_CASE("make_caption_scenes: each caption names its garments and says where the first is from the second") {
  const data::FashionMnist<float> g = rectangles(8);
  const data::CaptionScenes s = data::make_caption_scenes(g, 200, 5);
  REQUIRE(s.images.shape() == std::vector<std::size_t>{200, 64, 64});
  REQUIRE(s.captions.shape() == std::vector<std::size_t>{200, 5});
  std::size_t relations[4] = {0, 0, 0, 0};
  for (std::size_t n = 0; n < s.size(); ++n) {
    CHECK(s.captions(n, 0) == data::kCaptionBos);
    CHECK(s.captions(n, 4) == data::kCaptionEos);
    for (std::size_t k = 0; k < 2; ++k) {
      CHECK(s.captions(n, 1 + 2 * k) == data::kFirstGarment + g.labels(s.sources[n][k]));
      // The box is exactly the garment's rectangle, moved into its cell.
      const data::Box& b = s.boxes[n][k];
      CHECK(b.bottom - b.top == 2 * s.sources[n][k] + 6);
      CHECK(b.right - b.left == 10);
      CHECK(b.top / 32 == s.cells[n][k] / 2);
      CHECK(b.left / 32 == s.cells[n][k] % 2);
      CHECK(s.images(n, b.top, b.left) == 0.9f);
      CHECK(s.images(n, b.bottom - 1, b.right - 1) == 0.9f);
    }
    CHECK(s.cells[n][0] != s.cells[n][1]);
    const data::Box &a = s.boxes[n][0], &b = s.boxes[n][1];
    const Index rel = s.captions(n, 2) - data::kFirstRelation;
    REQUIRE(rel >= 0);
    REQUIRE(rel < 4);
    ++relations[rel];
    if (rel == 0) CHECK((a.right <= b.left && a.top / 32 == b.top / 32));        // left of
    if (rel == 1) CHECK((a.bottom <= b.top && a.left / 32 == b.left / 32));      // above
    if (rel == 2) CHECK((a.right <= b.left && a.bottom <= b.top));               // up-left of
    if (rel == 3) CHECK((a.right <= b.left && b.bottom <= a.top));               // down-left of
  }
  for (std::size_t r = 0; r < 4; ++r) CHECK(relations[r] > 20);  // every relation comes up
  // Only the two garments' pixels are lit: the first scene's sum is theirs.
  double lit = 0;
  for (std::size_t k = 0; k < 2; ++k) lit += 0.9 * 10.0 * double(2 * s.sources[0][k] + 6);
  CHECK(double(xt::sum(xt::view(s.images, 0))()) == doctest::Approx(lit).epsilon(1e-5));
}

TEST_CASE("make_caption_scenes: the same seed gives the same scenes, another seed others") {
  const data::FashionMnist<float> g = rectangles(10);
  const data::CaptionScenes a = data::make_caption_scenes(g, 30, 1), b = data::make_caption_scenes(g, 30, 1), c = data::make_caption_scenes(g, 30, 2);
  CHECK(a.images == b.images);
  CHECK(a.captions == b.captions);
  CHECK_FALSE(a.captions == c.captions);
}

TEST_CASE("make_caption_scenes: bad options and garments are named") {
  const data::FashionMnist<float> g = rectangles(3);
  data::CaptionSceneOptions o;
  o.jitter = 5;
  CHECK_THROWS_WITH_AS(data::make_caption_scenes(g, 1, 0, o), Contains("make_caption_scenes: a garment (28) moved by up to 5"),
                       std::invalid_argument);
  o = {}, o.side = 60;
  CHECK_THROWS_WITH_AS(data::make_caption_scenes(g, 1, 0, o), Contains("2 cells of 32"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(data::make_caption_scenes(rectangles(0), 1, 0), Contains("no garments"), std::invalid_argument);
}

TEST_CASE("caption_text and patches_in_box") {
  CHECK(data::caption_text({0, 10, 12, 9, 1}) == "bag left of sneaker");
  CHECK(data::caption_text({0, 6, 15, 11, 1}) == "coat down-left of boot");
  CHECK_THROWS_WITH_AS(data::caption_text({0, 16}), Contains("token 16"), std::invalid_argument);
  // Patch 8 on 64: centres at 4, 12, 20, ...; a box over rows [10, 21) and columns [0, 5).
  const xt::xarray<bool> in = data::patches_in_box({10, 0, 21, 5}, 64, 8);
  REQUIRE(in.shape() == std::vector<std::size_t>{8, 8});
  CHECK(xt::sum(xt::cast<int>(in))() == 2);
  CHECK(in(1, 0));
  CHECK(in(2, 0));
  CHECK_THROWS_WITH_AS(data::patches_in_box({}, 64, 7), Contains("patch 7 does not divide the side 64"),
                       std::invalid_argument);
}

TEST_CASE("log_of_chosen: the log of the chosen entries; shapes and indices checked") {
  const Tensor<double> p(Array<double>{{0.5, 0.25, 0.25}, {0.1, 0.2, 0.7}}, true);
  const Tensor<double> y = log_of_chosen(p, IndexArray{1, 2});
  CHECK(y.value()(0) == doctest::Approx(std::log(0.25)));
  CHECK(y.value()(1) == doctest::Approx(std::log(0.7)));
  sum(y).backward();
  CHECK(p.grad()(0, 1) == doctest::Approx(4.0));
  CHECK(p.grad()(0, 0) == 0.0);
  CHECK(p.grad()(1, 2) == doctest::Approx(1.0 / 0.7));
  CHECK_THROWS_WITH_AS(log_of_chosen(p, IndexArray{0, 3}), Contains("row 1 chose 3, outside [0, 3)"), ShapeError);
  CHECK_THROWS_WITH_AS(log_of_chosen(p, IndexArray{0}), Contains("log_of_chosen"), ShapeError);
  // A choice of probability 0 has no finite log: named, not a silent -inf.
  const Tensor<double> zero(Array<double>{{1.0, 0.0}});
  CHECK_THROWS_WITH_AS(log_of_chosen(zero, IndexArray{1}), Contains("row 0 chose 1, whose probability is 0"), ShapeError);
}

namespace {
nn::CaptionerConfig small() {
  nn::CaptionerConfig c;
  c.encoder.image_height = c.encoder.image_width = 16;
  c.encoder.patch = 4, c.encoder.num_layers = 1;
  c.encoder.layer = {8, 2, 16, 0.0, true, nn::Activation::GELU, 1e-6};
  c.vocab = 6, c.embed = 4, c.hidden = 8, c.attention_hidden = 5;
  return c;
}
}  // namespace

TEST_CASE("Captioner: soft weights are distributions; hard glimpses read the patch drawn; a replay repeats") {
  Generator gen(3);
  nn::Captioner<double> cap(small(), gen);
  const Tensor<double> images(random_uniform<double>({3, 16, 16}, gen, 0, 1));
  const IndexArray words = {{0, 2, 3}, {0, 4, 5}, {0, 1, 1}};
  const nn::CaptionPass<double> soft = cap.teacher_forced(images, words, nn::Glimpse::soft);
  REQUIRE(soft.logits.shape() == Shape{3, 3, 6});
  REQUIRE(soft.weights.shape() == Shape{3, 3, 16});
  const Array<double> sums = xt::sum(soft.weights.value(), {2});
  for (double s : sums) CHECK(s == doctest::Approx(1.0));
  Generator draws(9);
  const nn::CaptionPass<double> hard = cap.teacher_forced(images, words, nn::Glimpse::hard, &draws);
  REQUIRE(hard.choices.shape() == std::vector<std::size_t>{3, 3});
  for (std::size_t b = 0; b < 3; ++b)
    for (std::size_t t = 0; t < 3; ++t)
      CHECK(hard.log_choice.value()(b, t) ==
            doctest::Approx(std::log(hard.weights.value()(b, t, std::size_t(hard.choices(b, t))))));
  // The first word's weights come before any glimpse: the same for soft and hard.
  CHECK(xt::allclose(xt::view(hard.weights.value(), xt::all(), 0), xt::view(soft.weights.value(), xt::all(), 0)));
  const nn::CaptionPass<double> again = cap.teacher_forced(images, words, nn::Glimpse::hard, nullptr, &hard.choices);
  CHECK(again.logits.value() == hard.logits.value());
  // Greedy: soft's first step equals the teacher-forced one (both start from <bos>).
  const nn::Caption<double> g = cap.greedy(images, 3, 0, nn::Glimpse::soft);
  CHECK(xt::allclose(xt::view(g.weights, xt::all(), 0), xt::view(soft.weights.value(), xt::all(), 0)));
  CHECK_THROWS_WITH_AS(cap.teacher_forced(images, words, nn::Glimpse::hard), Contains("need draws or choices"),
                       std::invalid_argument);
  const IndexArray wrong = {{0, 1}};
  CHECK_THROWS_WITH_AS(cap.teacher_forced(images, words, nn::Glimpse::hard, nullptr, &wrong),
                       Contains("choices (1,2) must be (3,3)"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(cap.encoder.forward(Tensor<double>::zeros({1, 8, 16})), Contains("PatchEncoder"), ShapeError);
}

TEST_CASE("PatchEncoder without layers: each annotation reads its own patch only; with a layer, every patch") {
  nn::ViTConfig c = small().encoder;  // 16x16, patch 4: 16 patches
  Generator gen(5);
  c.num_layers = 0;
  nn::PatchEncoder<double> local(c, gen);
  c.num_layers = 1;
  nn::PatchEncoder<double> mixing(c, gen);
  Array<double> image = random_uniform<double>({1, 16, 16}, gen, 0, 1);
  const Array<double> before_local = local.forward(Tensor<double>(image)).value(),
                      before_mixing = mixing.forward(Tensor<double>(image)).value();
  image(0, 1, 2) += 0.5;  // a pixel of patch 0
  const Array<double> after_local = local.forward(Tensor<double>(image)).value(),
                      after_mixing = mixing.forward(Tensor<double>(image)).value();
  for (std::size_t p = 0; p < 16; ++p) {
    const double moved_local = xt::amax(xt::abs(xt::view(after_local, 0, p) - xt::view(before_local, 0, p)))();
    const double moved_mixing = xt::amax(xt::abs(xt::view(after_mixing, 0, p) - xt::view(before_mixing, 0, p)))();
    if (p == 0) {
      CHECK(moved_local > 1e-6);
    } else {
      CHECK(moved_local == 0.0);
      CHECK(moved_mixing > 1e-9);
    }
  }
}
