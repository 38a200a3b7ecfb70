// Lesson 20's captioner as files another program runs (`inspect captions`), and the test scenes
// the lesson scored it on, made again from what the card says.
//
// The files: <stem>.npz, the weights (the recipe's checkpoint), and <stem>.json, the model card
// (lessons/kit/model_card.hpp): the encoder's and the decoder's sizes, the caption words, how the
// decoder reads the patches (soft or hard), the lesson and seed, the held-out score, the recipe of
// the test scenes and the probe.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "lessons/kit/model_card.hpp"
#include "nn/caption/captioner.hpp"
#include "nn/data/caption_scenes.hpp"
#include "nn/data/fashion_mnist.hpp"

namespace attnlab::lessons {

// How a set of scenes is made: `count` scenes by make_caption_scenes(garments, count, seed,
// options), the garments the first `garments` of Fashion-MNIST's test file (0: all of it).
struct SceneRecipe {
  std::size_t count = 0, garments = 0;
  std::uint64_t seed = 0;
  nn::data::CaptionSceneOptions options;
};

// The recipe's garments (load_fashion_mnist's DataError, naming the package dataset-fashion-mnist,
// when the file is missing) and its scenes made of them.
nn::data::FashionMnist<float> recipe_garments(const SceneRecipe& r);
nn::data::CaptionScenes recipe_scenes(const SceneRecipe& r, const nn::data::FashionMnist<float>& garments);

// Writes <stem>.json into the lesson's output folder (atomically): the captioner's config, how it
// reads the patches, `length` (the words a caption may have, <eos> included), the held-out score,
// the recipe of the scenes it was measured on, and the probe (the teacher-forced logits of a fixed
// canvas and caption; the hard decoder reads fixed patches).
void write_captioner_card(const std::string& stem, nn::Captioner<float>& cap, nn::Glimpse glimpse, std::size_t length,
                          const HeldOut& held_out, const SceneRecipe& test);

struct LoadedCaptioner {
  std::unique_ptr<nn::Captioner<float>> model;
  nn::Glimpse glimpse = nn::Glimpse::soft;
  std::size_t length = 0;
  std::string lesson;
  long long seed = 0;
  HeldOut held_out;
  SceneRecipe test;
};

// folder/<stem>.json and folder/<stem>.npz. IoError naming the file when one is missing or
// unreadable; std::runtime_error naming the card for a missing field, a card of another model or
// other caption words, or weights that no longer compute the card's probe with this code (each with
// the command that rebuilds it); ShapeError listing the mismatches when the weights do not fit.
LoadedCaptioner load_captioner(const std::string& folder, const std::string& stem);

}  // namespace attnlab::lessons
