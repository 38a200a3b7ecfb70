// lessons/kit/caption_views: a captioner's attention on one scene, as a grid of images (one row per
// reader, one column per true word) and as an explorer input (the words it wrote against the named
// patches, the weights of its greedy caption); a scene past the end named.
#include <doctest/doctest.h>

#include <stdexcept>

#include <xtensor/xview.hpp>

#include "lessons/kit/caption_views.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;
using doctest::Contains;

namespace {
nn::CaptionerConfig tiny() {
  nn::CaptionerConfig c;
  c.encoder.image_height = c.encoder.image_width = 64;
  c.encoder.patch = 16, c.encoder.num_layers = 0;
  c.encoder.layer = {8, 2, 16, 0.0, true, nn::Activation::GELU, 1e-6};
  c.vocab = data::kCaptionVocab, c.embed = 4, c.hidden = 8, c.attention_hidden = 5;
  return c;
}

// Garments: bright squares (rows and columns [6, 22)), labels 0 to 9.
data::CaptionScenes scenes() {
  data::FashionMnist<float> g;
  g.images = xt::zeros<float>({std::size_t(10), std::size_t(28), std::size_t(28)});
  g.labels = IndexArray::from_shape({10});
  for (std::size_t k = 0; k < 10; ++k) {
    g.labels(k) = Index(k);
    xt::view(g.images, k, xt::range(6, 22), xt::range(6, 22)) = 0.8f;
  }
  data::CaptionSceneOptions o;
  o.min_garments = 2, o.max_garments = 3;
  return data::make_caption_scenes(g, 6, 1, o);
}
}  // namespace

TEST_CASE("caption_attention_input: the words written through <eos> against the named patches, with their weights") {
  Generator gen(2);
  nn::Captioner<float> cap(tiny(), gen);
  const data::CaptionScenes s = scenes();
  const AttentionInput in = caption_attention_input({"soft", &cap, nn::Glimpse::soft}, s, 2, 7);
  const nn::Caption<float> c = cap.greedy(Tensor<float>(data::select_scenes(s, {2}).images), 7, data::kCaptionBos,
                                          nn::Glimpse::soft);
  std::size_t words = 0;
  while (words < 7 && c.words(0, words++) != data::kCaptionEos) {}
  REQUIRE(in.queries.size() == words);
  CHECK(in.queries[0] == "1 " + data::caption_words()[std::size_t(c.words(0, 0))]);
  CHECK(in.keys == data::patch_names(s, 2, 16));
  CHECK(in.layers == std::vector<std::string>{"soft"});
  CHECK(in.name == "scene 2, soft: \"" + data::caption_text(c.words, 0) + "\"");
  REQUIRE(in.heads.size() == 1);
  REQUIRE(in.heads[0].size() == 1);
  REQUIRE(in.heads[0][0].shape() == std::vector<std::size_t>{words, 16});
  for (std::size_t w = 0; w < words; ++w)
    for (std::size_t p = 0; p < 16; ++p) CHECK(in.heads[0][0](w, p) == double(c.weights(0, w, p)));
  CHECK_THROWS_WITH_AS(caption_attention_input({"soft", &cap, nn::Glimpse::soft}, s, 6, 7),
                       Contains("caption_attention_input: scene 6 of 6"), std::out_of_range);
}

TEST_CASE("caption_words_grid: one row per reader, one column per true word and <eos>") {
  Generator gen(2);
  nn::Captioner<float> cap(tiny(), gen);
  const data::CaptionScenes s = scenes();
  const std::size_t n = data::first_scene_with(s, 3);
  const plots::Figure f =
      caption_words_grid({{"soft", &cap, nn::Glimpse::soft}, {"hard", &cap, nn::Glimpse::hard}}, s, n, 7);
  CHECK(f.rows() == 2);
  CHECK(f.cols() == int(data::caption_word_counts(s)(n)));
  CHECK_THROWS_WITH_AS(caption_words_grid({{"soft", &cap, nn::Glimpse::soft}}, s, 9, 7),
                       Contains("caption_words_grid: scene 9 of 6"), std::out_of_range);
}

TEST_CASE("caption_words_grid: a scene without garments (a picture) shows the words the first reader wrote") {
  Generator gen(3);
  nn::Captioner<float> cap(tiny(), gen);
  data::CaptionScenes picture = data::select_scenes(scenes(), {0});
  picture.boxes = {{}}, picture.cells = {{}}, picture.sources = {{}};  // what it shows is not known
  const nn::Caption<float> c = cap.greedy(Tensor<float>(picture.images), 7, data::kCaptionBos, nn::Glimpse::soft);
  std::size_t words = 0;
  while (words < 7 && c.words(0, words++) != data::kCaptionEos) {}
  const plots::Figure f = caption_words_grid({{"soft", &cap, nn::Glimpse::soft}}, picture, 0, 7);
  CHECK(f.rows() == 1);
  CHECK(f.cols() == int(words));  // not the 0 words of a true caption it does not have
}
