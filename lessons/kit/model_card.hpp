// What the model cards of the lessons share (lessons/kit/vit_model, translation_model,
// transformer_card and seq2seq): a card is <stem>.json beside the weights <stem>.npz, and says what
// another program needs to rebuild the model and trust it:
//
//   * the sizes and choices the model was built with, and its vocabularies or class names;
//   * the lesson and seed that trained it (the command that rebuilds it);
//   * the held-out metric the lesson measured on it ("test_acc_vit" 0.9021 on 10000 test images);
//   * a probe (the Transformers' cards): the model's outputs on one fixed input, computed by the
//     lesson right after training.
//
// The probe is what makes a stale checkpoint a clear error rather than garbage: a loader builds
// the model the card describes with the code it has, loads the weights, recomputes the probe and
// refuses when the outputs differ. A change to the code that keeps every weight's name and shape
// (other positions, another norm placement or activation) loads without a ShapeError, but no
// longer computes what the weights were trained for; the probe catches it.
#pragma once

#include <string>
#include <vector>

#include "lessons/story/lesson.hpp"
#include "nn/data/vocab.hpp"
#include "nn/layers.hpp"
#include "nn/transformer/layers.hpp"

namespace attnlab::lessons {

// A model card read from a file; `who` ("load_vit") leads every message.
struct Card {
  std::string who, file;
  Json json;
  // IoError naming the file when it is missing or unreadable, std::runtime_error when it is not JSON.
  static Card read(const std::string& file, const std::string& who);
  // The card's `key`; std::runtime_error "who: 'file' has no "key"" when absent.
  const Json& field(const std::string& key) const;
  // field(key) must equal `expected` (what this code builds); std::runtime_error naming both otherwise.
  void expect(const std::string& key, const Json& expected, const std::string& rebuild) const;
  // The card's "activation", "gelu" or "relu"; std::runtime_error naming the card for another.
  nn::Activation activation() const;
};

// "gelu" or "relu": how a card writes a layer's activation.
std::string activation_name(nn::Activation a);

// Where a model came from, the fields every card begins with: "lesson", "seed", "quick".
struct CardOrigin {
  std::string lesson;  // "11_gpt"
  long long seed = 0;
  bool quick = false;
};
Json card_origin();                        // the running lesson's (lessons/story/lesson)
CardOrigin origin_of(const Card& card);    // std::runtime_error naming the card when one is missing

// A Transformer layer's sizes and choices on a card, in one vocabulary for every model: "d_model",
// "heads", "kv_heads" (grouped-query attention's key/value heads, as many as heads without it),
// "d_ff", "norm_first", "activation", "norm_eps". put_layer adds them to `card`; layer_of reads
// them back (dropout 0: a loaded model runs, it does not train). layer_of also reads the names
// cards had before they shared this vocabulary, "feed_forward" (lesson 16's) and "eps" (lessons
// 10 and 12's), and a card without "kv_heads" as one with as many as heads.
void put_layer(Json& card, const nn::LayerConfig& l);
nn::LayerConfig layer_of(const Card& card);

// The held-out score the lesson measured on the model, as the card keeps it.
struct HeldOut {
  std::string metric;  // the lesson's metric name, as in its metrics.json and reference
  double value = 0;
  std::size_t examples = 0;
  std::string split;   // what the examples were, in words
};
Json to_json(const HeldOut& h);
HeldOut held_out_of(const Card& card);

// Refuses (std::runtime_error naming the card, the largest difference and `rebuild`, the command
// that trains a model this code can run) when `now` differs from the card's "probe" "outputs" by
// more than `tolerance` anywhere, or has another length.
void check_probe(const Card& card, const std::vector<double>& now, double tolerance, const std::string& rebuild);

// A vocabulary on a card: its tokens after the four specials, in id order; and back.
std::vector<std::string> card_tokens(const nn::data::Vocab& v);
nn::data::Vocab vocab_from_card(const std::vector<std::string>& tokens);

}  // namespace attnlab::lessons
