// The BERT of lessons 12 and 13, in one place: lesson 13 fine-tunes lesson 12's checkpoint, so the
// two must agree on the split, the held-out masks, the topics, the model's sizes and its
// pretraining phases. What each lesson does with the model stays in the lesson.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nn/data/cloze_corpus.hpp"
#include "nn/data/masked_windows.hpp"
#include "nn/transformer/masked_lm.hpp"

namespace attnlab::lessons::bert {

inline constexpr std::uint64_t kSplitSeed = 2018;      // the held-out entries: the same in every run
inline constexpr std::uint64_t kHeldOutMaskSeed = 99;  // the masks of the held-out windows: the same in every run
inline constexpr double kHeldOutShare = 0.1;           // of the entries, for validation and again for test
// Five topic files whose entries differ in what they talk about and how: hacker lore, mock
// dictionary entries, politics, verse and Zippy the Pinhead's non sequiturs.
inline const std::vector<std::string> kTopics = {"computers", "definitions", "politics", "songs-poems", "zippy"};

// Pretraining runs in two phases, as BERT's did (90 % of its steps on 128 tokens, then 512): short
// windows first, long ones after. Lesson 12's section 2 says why.
struct Phase {
  std::size_t context;   // tokens per window, [CLS] included
  std::size_t batch;     // windows per step
  std::size_t windows;   // windows per epoch, drawn at random places
  int epochs;
};

struct ModelSettings {
  std::size_t d_model, heads, layers, d_ff;
  Phase short_windows, long_windows;
  double pretrain_lr;
  std::size_t held_out_windows;  // validation windows scored after every pretraining epoch
  std::size_t context() const { return long_windows.context; }  // the longest sequence: fine-tuning's too
};

// The sizes and phases of the full run, or of --quick.
ModelSettings model_settings();

// The fortunes split by entry (kSplitSeed, kHeldOutShare), as characters.
nn::data::ClozeCorpus load_corpus();

// A token as the figures and the report show it: a character as the kit's visible() shows it, the
// specials as short marks ([MASK] as ▮, CLS, EOS); and a whole sequence so.
std::string shown(const nn::data::Vocab& v, Index id);
std::string shown_text(const nn::data::Vocab& v, const std::vector<Index>& ids);

// Pre-norm with a final norm, T5 relative bias, [CLS] pooled into a classifier over kTopics.
nn::EncoderModelConfig config(const nn::data::ClozeCorpus& c, const ModelSettings& r);

// Every model of the two lessons starts from this draw (the run's seed): the pretrained one, and the
// one fine-tuned from scratch, whose classifier therefore starts where the pretrained model's does
// (pretraining never touches the classifier).
std::unique_ptr<nn::MaskedLM<float>> new_model(const nn::data::ClozeCorpus& c, const ModelSettings& r);

// The masked-character scores of a held-out set, without the tape.
nn::data::ClozeScores score(nn::MaskedLM<float>& bert, const std::vector<nn::data::MaskedWindows>& set);

}  // namespace attnlab::lessons::bert
