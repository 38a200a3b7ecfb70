// Lesson 11's GPT and lesson 14's BERT as files another program can run (inspect, a test): the
// weights <stem>.npz (the recipe's checkpoint; its optimizer state, if any, is not read) beside
// the model card <stem>.json: the sizes, the character vocabulary in id order, the lesson and seed,
// and the held-out metric the run recorded, so that whoever loads it can check it still scores so.
// (The recurrent encoder-decoder of lessons 02 and 03 has its own card: seq2seq.hpp.)
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nn/data/masked_windows.hpp"
#include "nn/data/vocab.hpp"
#include "nn/transformer/causal_lm.hpp"
#include "nn/transformer/masked_lm.hpp"

namespace attnlab::lessons {

// A held-out metric as the lesson recorded it: {"gpt_test_bpc", 2.3358}.
using CardMetric = std::pair<std::string, double>;

// In a lesson: <stem>.json written into the output folder (atomically).
void write_gpt_card(const std::string& stem, const nn::CausalLMConfig& c, const nn::data::Vocab& vocab,
                    const CardMetric& held_out);
void write_bert_card(const std::string& stem, const nn::EncoderModelConfig& c, const nn::data::Vocab& vocab,
                     const CardMetric& held_out);

// What every card says besides the model.
struct CardInfo {
  std::string lesson;  // "11_gpt"
  long long seed = 0;
  bool quick = false;
  CardMetric held_out;
};

struct LoadedGpt {
  std::unique_ptr<nn::CausalLM<float>> model;  // in eval mode
  nn::data::Vocab vocab;
  CardInfo card;
};

struct LoadedBert {
  std::unique_ptr<nn::MaskedLM<float>> model;  // in eval mode
  nn::data::Vocab vocab;
  nn::data::ClozeIds ids;  // [CLS], [MASK] and the ordinary characters [first, end)
  CardInfo card;
};

// The model of folder/<stem>.json and folder/<stem>.npz, weights loaded. An IoError naming the file
// when one is missing or unreadable, std::runtime_error naming the card when it is not JSON, lacks
// a field, is another model's card, or names an unknown positional scheme; a ShapeError listing
// the mismatches when the weights do not fit the card.
LoadedGpt load_gpt(const std::string& folder, const std::string& stem);
LoadedBert load_bert(const std::string& folder, const std::string& stem);

}  // namespace attnlab::lessons
