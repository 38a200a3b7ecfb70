// Lesson 20's plumbing: the caption scenes (captions that agree with where the garments are, boxes
// around exactly their bright pixels), the patches a box holds, the log-probability of a chosen
// entry, and the captioner (soft weights summing to 1, hard glimpses reading the patch drawn,
// replays repeating a pass), a patch encoder without layers keeping each annotation to its own patch,
// with errors that name what is wrong.
#include <doctest/doctest.h>

#include <cmath>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "nn/caption/caption_scores.hpp"
#include "nn/caption/captioner.hpp"
#include "nn/caption/coverage.hpp"
#include "nn/caption/estimator_spread.hpp"
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

TEST_CASE("make_caption_scenes: each caption names its garments and says where each is from the next") {
  const data::FashionMnist<float> g = rectangles(8);
  data::CaptionSceneOptions o;
  o.min_garments = 2, o.max_garments = 4;
  const data::CaptionScenes s = data::make_caption_scenes(g, 300, 5, o);
  REQUIRE(s.images.shape() == std::vector<std::size_t>{300, 64, 64});
  REQUIRE(s.captions.shape() == std::vector<std::size_t>{300, 9});
  std::size_t relations[4] = {0, 0, 0, 0}, counts[5] = {0, 0, 0, 0, 0};
  for (std::size_t n = 0; n < s.size(); ++n) {
    const std::size_t k = s.garments(n);
    REQUIRE(k >= 2);
    REQUIRE(k <= 4);
    ++counts[k];
    CHECK(s.captions(n, 0) == data::kCaptionBos);
    CHECK(s.captions(n, 2 * k) == data::kCaptionEos);
    for (std::size_t t = 2 * k + 1; t < 9; ++t) CHECK(s.captions(n, t) == data::kCaptionPad);
    double lit = 0;
    for (std::size_t i = 0; i < k; ++i) {
      CHECK(s.captions(n, 1 + 2 * i) == data::kFirstGarment + g.labels(s.sources[n][i]));
      // The box is exactly the garment's rectangle, moved into its cell.
      const data::Box& b = s.boxes[n][i];
      CHECK(b.bottom - b.top == 2 * s.sources[n][i] + 6);
      CHECK(b.right - b.left == 10);
      CHECK(b.top / 32 == s.cells[n][i] / 2);
      CHECK(b.left / 32 == s.cells[n][i] % 2);
      CHECK(s.images(n, b.top, b.left) == 0.9f);
      CHECK(s.images(n, b.bottom - 1, b.right - 1) == 0.9f);
      lit += 0.9 * 10.0 * double(2 * s.sources[n][i] + 6);
      for (std::size_t j = 0; j < i; ++j) CHECK(s.cells[n][i] != s.cells[n][j]);
      if (i == 0) continue;
      const data::Box &a = s.boxes[n][i - 1];
      const Index rel = s.captions(n, 2 * i) - data::kFirstRelation;
      REQUIRE(rel >= 0);
      REQUIRE(rel < 4);
      ++relations[rel];
      if (rel == 0) CHECK((a.right <= b.left && a.top / 32 == b.top / 32));        // left of
      if (rel == 1) CHECK((a.bottom <= b.top && a.left / 32 == b.left / 32));      // above
      if (rel == 2) CHECK((a.right <= b.left && a.bottom <= b.top));               // up-left of
      if (rel == 3) CHECK((a.right <= b.left && b.bottom <= a.top));               // down-left of
    }
    // Only the garments' pixels are lit: the scene's sum is theirs.
    CHECK(double(xt::sum(xt::view(s.images, n))()) == doctest::Approx(lit).epsilon(1e-5));
  }
  for (std::size_t r = 0; r < 4; ++r) CHECK(relations[r] > 10);  // every relation comes up
  for (std::size_t k = 2; k <= 4; ++k) CHECK(counts[k] > 60);     // and every count of garments
  // The default: two garments, captions of 5 tokens.
  CHECK(data::make_caption_scenes(g, 3, 5).captions.shape(1) == 5);
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
  o = {}, o.max_garments = 5;
  CHECK_THROWS_WITH_AS(data::make_caption_scenes(g, 1, 0, o), Contains("garments per scene 2 to 5"), std::invalid_argument);
  o = {}, o.min_garments = 3;
  CHECK_THROWS_WITH_AS(data::make_caption_scenes(g, 1, 0, o), Contains("garments per scene 3 to 2"), std::invalid_argument);
}

TEST_CASE("compose_caption_scene: garments where one says, drawn and captioned as make_caption_scenes draws them") {
  const data::FashionMnist<float> g = rectangles(8);
  data::CaptionSceneOptions o;
  o.min_garments = 2, o.max_garments = 4;
  const data::CaptionScenes s = data::make_caption_scenes(g, 40, 3, o);
  for (std::size_t n = 0; n < s.size(); ++n) {
    // Each garment's move read back from its box (rectangle k starts at row 4, column 10), the
    // placements given in reverse: the caption's order is the scene's, not the list's.
    std::vector<data::Placement> placed;
    for (std::size_t i = s.garments(n); i-- > 0;) {
      const data::Box& b = s.boxes[n][i];
      const std::size_t cell = s.cells[n][i];
      placed.push_back({s.sources[n][i], cell, b.top - 4 - (cell / 2) * 32, b.left - 10 - (cell % 2) * 32});
    }
    const data::CaptionScenes one = data::compose_caption_scene(g, placed, o);
    REQUIRE(one.size() == 1);
    CHECK(xt::view(one.images, 0) == xt::view(s.images, n));
    CHECK(xt::view(one.captions, 0) == xt::view(s.captions, n));
    CHECK(one.boxes[0] == s.boxes[n]);
    CHECK(one.cells[0] == s.cells[n]);
    CHECK(one.sources[0] == s.sources[n]);
  }
  // Garment 3 (label 3, a dress, rows [4, 16) and columns [10, 20)) alone in the top-right cell, unmoved.
  const data::CaptionScenes alone = data::compose_caption_scene(g, {{3, 1, 0, 0}}, o);
  CHECK(data::caption_text(alone.captions, 0) == "dress");
  CHECK(alone.boxes[0][0] == data::Box{4, 42, 16, 52});
  const auto error = [&](const std::vector<data::Placement>& p) {
    try {
      data::compose_caption_scene(g, p, o);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("(no exception)");
  };
  CHECK(error({}) == "compose_caption_scene: 0 garments: a scene holds 1 to 4");
  CHECK(error({{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 0}}) == "compose_caption_scene: 5 garments: a scene holds 1 to 4");
  CHECK(error({{0, 2}, {1, 2}}) == "compose_caption_scene: two garments in cell 2");
  CHECK(error({{0, 4}}) == "compose_caption_scene: cell 4 of a grid of 4 (0 to 3, row by row)");
  CHECK(error({{8, 0}}) == "compose_caption_scene: garment 8 of a set of 8");
  CHECK(error({{0, 0, 5, 0}}) == "compose_caption_scene: a move of (5, 0) past the jitter 4");
  CHECK_THROWS_WITH_AS(data::compose_caption_scene(rectangles(0), {{0, 0}}, o), "compose_caption_scene: no garments to place",
                       std::invalid_argument);
}

TEST_CASE("caption_text and patches_in_box") {
  CHECK(data::caption_text({0, 10, 12, 9, 1}) == "bag left of sneaker");
  CHECK(data::caption_text({0, 6, 15, 11, 1}) == "coat down-left of boot");
  CHECK(data::caption_text({0, 6, 13, 11, 12, 2, 1, 16, 16}) == "coat above boot left of tshirt");
  CHECK(data::caption_text({0, 6, 13, 11, 1, 11, 11}) == "coat above boot");  // greedy steps after <eos>: not words
  CHECK_THROWS_WITH_AS(data::caption_text({0, 17}), Contains("token 17"), std::invalid_argument);
  // Patch 8 on 64: centres at 4, 12, 20, ...; a box over rows [10, 21) and columns [0, 5).
  const xt::xarray<bool> in = data::patches_in_box({10, 0, 21, 5}, 64, 8);
  REQUIRE(in.shape() == std::vector<std::size_t>{8, 8});
  CHECK(xt::sum(xt::cast<int>(in))() == 2);
  CHECK(in(1, 0));
  CHECK(in(2, 0));
  CHECK_THROWS_WITH_AS(data::patches_in_box({}, 64, 7), Contains("patch 7 does not divide the side 64"),
                       std::invalid_argument);
}

TEST_CASE("caption_text of a row, first_scene_with, box_patch_share and patch_names") {
  data::CaptionSceneOptions o;
  o.min_garments = 2, o.max_garments = 3;
  const data::CaptionScenes s = data::make_caption_scenes(rectangles(8), 20, 4, o);
  std::vector<Index> row(s.captions.shape(1));
  for (std::size_t t = 0; t < row.size(); ++t) row[t] = s.captions(3, t);
  CHECK(data::caption_text(s.captions, 3) == data::caption_text(row));
  CHECK_THROWS_WITH_AS(data::caption_text(s.captions, 20), Contains("caption_text: row 20"), std::out_of_range);
  const std::size_t three = data::first_scene_with(s, 3);
  CHECK(s.garments(three) == 3);
  for (std::size_t n = 0; n < three; ++n) CHECK(s.garments(n) != 3);
  CHECK(s.garments(data::first_scene_with(s, 4)) == 3);  // none has four: the first of the most
  CHECK_THROWS_WITH_AS(data::first_scene_with(data::select_scenes(s, {}), 2), Contains("first_scene_with"),
                       std::invalid_argument);
  // Patches of 16 on 64 (centres 16 apart): a garment k is 10 pixels wide and at most 20 high, so its
  // box holds the centres of at most two of the 16 patches.
  double share = 0, named = 0;
  for (std::size_t n = 0; n < s.size(); ++n)
    for (const data::Box& b : s.boxes[n]) share += double(xt::sum(xt::cast<int>(data::patches_in_box(b, 64, 16)))()) / 16, ++named;
  CHECK(data::box_patch_share(s, 16) == doctest::Approx(share / named));
  CHECK(data::box_patch_share(s, 16) <= 2.0 / 16);
  // Scene 0 by patches of 4: every patch named by row and column; those in garment g's box carry
  // "(2g+1 word)", as many as the box holds.
  const std::vector<std::string> names = data::patch_names(s, 0, 4);
  REQUIRE(names.size() == 256);
  CHECK(names[0].rfind("r1c1", 0) == 0);
  CHECK(names[17].rfind("r2c2", 0) == 0);
  for (std::size_t g = 0; g < s.garments(0); ++g) {
    const std::string tag = "(" + std::to_string(2 * g + 1) + " " + data::caption_words()[std::size_t(s.captions(0, 1 + 2 * g))] + ")";
    const xt::xarray<bool> in = data::patches_in_box(s.boxes[0][g], 64, 4);
    for (std::size_t p = 0; p < 256; ++p) CHECK((names[p].find(tag) != std::string::npos) == bool(in(p / 16, p % 16)));
  }
  CHECK_THROWS_WITH_AS(data::patch_names(s, 20, 4), Contains("patch_names: scene 20 of 20"), std::out_of_range);
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

TEST_CASE("score_captions: exact, words, relations, BLEU, and attention inside the named garment's box") {
  data::CaptionSceneOptions o;
  o.min_garments = 2, o.max_garments = 3;
  data::CaptionScenes s = data::make_caption_scenes(rectangles(8), 40, 3, o);
  const std::size_t N = s.size(), L = 6, P = 256;  // patches of 4 x 4: every box holds a patch's centre
  IndexArray words = xt::view(s.captions, xt::all(), xt::range(1, 7));
  // Attention all on a patch inside each garment's box at its word, uniform elsewhere.
  Array<float> w = xt::full_like(Array<float>::from_shape({N, L, P}), 1.0f / float(P));
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t g = 0; g < s.garments(n); ++g) {
      const xt::xarray<bool> in = data::patches_in_box(s.boxes[n][g], 64, 4);
      std::size_t p = 0;
      while (!in(p / 16, p % 16)) ++p;
      xt::view(w, n, 2 * g) = 0.0f;
      w(n, 2 * g, p) = 1.0f;
    }
  nn::CaptionScores sc = nn::score_captions(words, w, s, 4);
  CHECK(sc.exact == 1.0);
  CHECK(sc.tokens == 1.0);
  CHECK(sc.relation == 1.0);
  CHECK(sc.bleu == doctest::Approx(1.0));
  CHECK(sc.share == doctest::Approx(1.0));
  CHECK(sc.pointing == 1.0);
  CHECK(sc.outside == 0.0);
  CHECK(sc.peak == doctest::Approx(1.0));
  CHECK(sc.exact_by_garments.size() == 2);
  // Scene 0 loses its first garment word, scene 1 its <eos> (it runs on): two captions wrong.
  words(0, 0) = words(0, 0) == 2 ? 3 : 2;
  words(1, 2 * s.garments(1) - 1) = data::kFirstGarment;
  sc = nn::score_captions(words, w, s, 4);
  CHECK(sc.exact == doctest::Approx(38.0 / 40.0));
  CHECK(sc.bleu < 1.0);
  CHECK(sc.bleu > 0.8);
  CHECK(sc.relation == 1.0);
  // Uniform attention: the share is the box's share of the patches (a garment is at most 20 x 14
  // pixels of the 64 x 64), and the peak, patch 0 (a tie), is in no box: on the empty canvas.
  w = xt::full_like(w, 1.0f / float(P));
  sc = nn::score_captions(words, w, s, 4);
  CHECK(sc.share < 0.1);
  CHECK(sc.pointing == 0.0);
  CHECK(sc.outside == 1.0);
  CHECK(sc.peak == doctest::Approx(1.0 / double(P)));
  // Each garment word on the next garment's box (the last on the first's): never its own garment,
  // never empty canvas.
  for (std::size_t n = 0; n < N; ++n)
    for (std::size_t g = 0; g < s.garments(n); ++g) {
      const xt::xarray<bool> in = data::patches_in_box(s.boxes[n][(g + 1) % s.garments(n)], 64, 4);
      std::size_t p = 0;
      while (!in(p / 16, p % 16)) ++p;
      xt::view(w, n, 2 * g) = 0.0f;
      w(n, 2 * g, p) = 1.0f;
    }
  sc = nn::score_captions(words, w, s, 4);
  CHECK(sc.pointing == 0.0);
  CHECK(sc.outside == 0.0);
  CHECK_THROWS_WITH_AS(nn::score_captions(words, Array<float>::from_shape({N, L, 9}), s, 4), Contains("score_captions"),
                       std::invalid_argument);
}

TEST_CASE("doubly_stochastic_penalty: sum over patches of (tau - attention summed over the counted words)^2") {
  // Two rows of 3 steps over 2 patches; row 0 counts 2 steps, row 1 all 3.
  const Tensor<double> a(Array<double>{{{0.5, 0.5}, {1.0, 0.0}, {0.3, 0.7}}, {{0.2, 0.8}, {0.2, 0.8}, {0.6, 0.4}}}, true);
  const Tensor<double> y = nn::doubly_stochastic_penalty(a, IndexArray{2, 3});
  // Row 0: S = (1.5, 0.5): 0.25 + 0.25; row 1: S = (1.0, 2.0): 0 + 1. Mean over rows: 0.75.
  CHECK(y.value()() == doctest::Approx(0.75));
  y.backward();
  CHECK(a.grad()(0, 0, 0) == doctest::Approx(-(2.0 / 2.0) * (1.0 - 1.5)));
  CHECK(a.grad()(0, 2, 0) == 0.0);  // a step past the length: no gradient
  CHECK(a.grad()(1, 2, 1) == doctest::Approx(-(1.0 - 2.0)));
  // Attention that spreads one word's worth over every patch costs nothing.
  const Tensor<double> even(Array<double>{{{0.5, 0.5}, {0.5, 0.5}}});
  CHECK(nn::doubly_stochastic_penalty(even, IndexArray{2}).value()() == doctest::Approx(0.0));
  CHECK_THROWS_WITH_AS(nn::doubly_stochastic_penalty(a, IndexArray{2, 4}), Contains("doubly_stochastic_penalty: length 4"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(nn::doubly_stochastic_penalty(a, IndexArray{2}), Contains("lengths (1)"), ShapeError);
}

TEST_CASE("select_scenes, the caption halves, word counts and the scene drawn with its boxes") {
  data::CaptionSceneOptions o;
  o.min_garments = 2, o.max_garments = 4;
  const data::CaptionScenes s = data::make_caption_scenes(rectangles(6), 20, 9, o);
  const data::CaptionScenes b = data::select_scenes(s, {7, 2});
  REQUIRE(b.size() == 2);
  CHECK(xt::view(b.images, 0) == xt::view(s.images, 7));
  CHECK(xt::view(b.captions, 1) == xt::view(s.captions, 2));
  CHECK(b.boxes[0] == s.boxes[7]);
  CHECK(b.garments(1) == s.garments(2));
  CHECK_THROWS_WITH_AS(data::select_scenes(s, {20}), Contains("select_scenes: row 20 of 20"), std::out_of_range);
  const IndexArray in = data::caption_inputs(b), out = data::caption_targets(b), n = data::caption_word_counts(b);
  REQUIRE(in.shape() == std::vector<std::size_t>{2, 8});
  REQUIRE(out.shape() == std::vector<std::size_t>{2, 8});
  for (std::size_t r = 0; r < 2; ++r) {
    CHECK(in(r, 0) == data::kCaptionBos);
    CHECK(n(r) == Index(2 * b.garments(r)));
    CHECK(out(r, std::size_t(n(r)) - 1) == data::kCaptionEos);  // the last counted word is <eos>
    for (std::size_t t = 0; t + 1 < 8; ++t) CHECK(in(r, t + 1) == out(r, t));
  }
  // Box k drawn alone: its corner takes its colour, the other boxes' corners stay grey.
  const xt::xarray<double> rgb = data::scene_with_boxes(b, 0, 1);
  REQUIRE(rgb.shape() == std::vector<std::size_t>{64, 64, 3});
  const data::Box &b0 = b.boxes[0][0], &b1 = b.boxes[0][1];
  CHECK(rgb(b1.top, b1.left, 0) == 0.0);   // cyan: no red
  CHECK(rgb(b1.top, b1.left, 2) == 1.0);
  CHECK(rgb(b0.top, b0.left, 0) == rgb(b0.top, b0.left, 2));  // grey
  CHECK(xt::view(data::scene_with_boxes(b, 0, -2), xt::all(), xt::all(), 1) == xt::view(b.images, 0));
}

TEST_CASE("reinforce_loss: the cross-entropy minus the advantage-weighted log choices, padding left out") {
  nn::CaptionerConfig c;
  c.encoder.image_height = c.encoder.image_width = 8, c.encoder.patch = 4, c.encoder.num_layers = 0;
  c.encoder.layer = {8, 2, 16, 0.0, true, nn::Activation::GELU, 1e-6};
  c.vocab = 5, c.embed = 3, c.hidden = 4, c.attention_hidden = 3;
  Generator gen(3), draws(4);
  nn::Captioner<double> cap(c, gen);
  const Tensor<double> images(random_uniform<double>({2, 8, 8}, gen, 0, 1));
  const IndexArray inputs = {{0, 3, 2}, {0, 2, 4}}, targets = {{3, 2, 1}, {2, 1, 4}}, counts = {3, 2};
  const nn::CaptionPass<double> p = cap.teacher_forced(images, inputs, nn::Glimpse::hard, &draws);
  const nn::ReinforceLoss<double> r = nn::reinforce_loss(p, targets, counts, -1.5, 4);
  const Array<double> logp = log_softmax(p.logits, -1).value();
  const double r0 = logp(0, 0, 3) + logp(0, 1, 2) + logp(0, 2, 1), r1 = logp(1, 0, 2) + logp(1, 1, 1);
  CHECK(r.mean_reward == doctest::Approx((r0 + r1) / 2));
  const Array<double>& lc = p.log_choice.value();
  const double ce = -(r0 + r1) / 5.0;  // five targets that are not the ignored 4
  const double surrogate = ((r0 + 1.5) * (lc(0, 0) + lc(0, 1) + lc(0, 2)) + (r1 + 1.5) * (lc(1, 0) + lc(1, 1))) / 6.0;
  CHECK(r.loss.value()() == doctest::Approx(ce - surrogate));
  // Greedy captions in batches of 1 are the captions of the whole batch.
  const nn::Caption<double> whole = cap.greedy(images, 3, 0, nn::Glimpse::soft),
                            ones = nn::greedy_in_batches(cap, images.value(), 3, 0, nn::Glimpse::soft, 1);
  CHECK(ones.words == whole.words);
  CHECK(xt::allclose(ones.weights, whole.weights));
  const nn::CaptionPass<double> soft = cap.teacher_forced(images, inputs, nn::Glimpse::soft);
  CHECK_THROWS_WITH_AS(nn::reinforce_loss(soft, targets, counts, 0.0, 4), Contains("reinforce_loss"),
                       std::invalid_argument);
}

TEST_CASE("spread_of, flat_gradient, vector_length and vector_cosine") {
  // Three draws of two entries: means (2, 0); variances 1 and 4 (divided by D - 1 = 2): V = 5.
  const nn::DrawSpread s = nn::spread_of({{1.0, 2.0}, {2.0, 0.0}, {3.0, -2.0}});
  REQUIRE(s.mean.size() == 2);
  CHECK(s.mean[0] == doctest::Approx(2.0));
  CHECK(s.mean[1] == doctest::Approx(0.0));
  CHECK(s.variance == doctest::Approx(5.0));
  CHECK(nn::spread_of({{1.0}, {1.0}}).variance == 0.0);
  CHECK_THROWS_WITH_AS(nn::spread_of({{1.0}}), Contains("spread_of: 1 draws"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(nn::spread_of({{1.0}, {1.0, 2.0}}), Contains("draws of 1 and 2"), std::invalid_argument);
  CHECK(nn::vector_length({3.0, 4.0}) == doctest::Approx(5.0));
  CHECK(nn::vector_cosine({1.0, 0.0}, {2.0, 2.0}) == doctest::Approx(std::sqrt(0.5)));
  CHECK(nn::vector_cosine({1.0, 0.0}, {0.0, 0.0}) == 0.0);
  CHECK_THROWS_WITH_AS(nn::vector_cosine({1.0}, {1.0, 2.0}), Contains("vector_cosine"), std::invalid_argument);
  // y = sum(W x) for a Linear 3 -> 2: dy/dW_ij = x_j, dy/db_i = 1, whatever an earlier backward left.
  Generator gen(1);
  nn::Linear<float> lin(3, 2, gen);
  const Tensor<float> x(Array<float>{{1.0f, 2.0f, 3.0f}});
  sum(lin(x)).backward();  // a stale gradient, which flat_gradient must drop
  const std::vector<double> g = nn::flat_gradient(lin, lin.parameters(), sum(lin(x)));
  const std::vector<Tensor<float>> p = lin.parameters();
  REQUIRE(g.size() == p[0].value().size() + p[1].value().size());
  std::size_t k = 0;
  for (const Tensor<float>& t : p)
    for (std::size_t i = 0; i < t.value().size(); ++i, ++k)
      CHECK(g[k] == doctest::Approx(t.value().dimension() == 2 ? double(1 + i % 3) : 1.0));
}
