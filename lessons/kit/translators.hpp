// Translators compared (lesson 08): each model's greedy translations of the held-out test split
// and of the split longer than any training sentence, and the tables, figures and text that tell
// the models apart. The numbers come from nn/translate.hpp and nn/translation_scores.hpp; this
// file only lays them out.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "lessons/kit/figures.hpp"
#include "lessons/kit/history.hpp"
#include "lessons/kit/train.hpp"
#include "nn/data/translation_task.hpp"
#include "nn/rnn/seq2seq.hpp"
#include "nn/transformer/seq2seq.hpp"
#include "nn/translate.hpp"

namespace attnlab::lessons {

struct Translator {
  std::string name, key;  // in the lesson's tables and legends; in its metric names
  std::size_t parameters = 0;
  const History* history = nullptr;
  std::vector<nn::data::Sequence> test, longer;  // nn::translate of task.test and task.longer_ids
};

// A trained model's translations of both held-out splits (greedy, batched).
Translator translator(const std::string& name, const std::string& key, nn::Seq2SeqTransformer<float>& model,
                      const History& history, const nn::data::TranslationTask& task);
Translator translator(const std::string& name, const std::string& key, nn::rnn::Seq2Seq& model,
                      const History& history, const nn::data::TranslationTask& task);

// Trains the translation Transformer as the recipe says: the label-smoothed cross-entropy of each
// batch of training pairs (sources without <eos>, <pad> ignored), and after every epoch the held-out
// "loss" (smoothed) and "nll" (plain) of task.validation, without the tape, then the recipe's own
// validate scores, if any. std::invalid_argument naming the recipe's label for an empty training or
// validation split or a smoothing outside [0, 1).
History train_translation(nn::Seq2SeqTransformer<float>& model, const nn::data::EncodedSplits& task, Recipe recipe,
                          double smoothing);

// A translator's corpus BLEU by source length, the test split's points then the longer split's
// (sources of longest_group words and more share the last point), as a curve named after it.
plots::Series bleu_by_length(const Translator& t, const nn::data::TranslationTask& task, std::size_t longest_group);

// Curves of BLEU by length (0 to 1, with markers) and a dashed line at x = boundary (the longest
// training sentence, plus a half), saved as `stem`.
void save_bleu_by_length(std::vector<plots::Series> series, double boundary, LineFigureOptions style,
                         const std::string& stem, const std::string& caption);

// A sentence and its translations for a verbatim block, each label padded to 11 columns:
//   source     the old fox ...
//   reference  ...
//   greedy     ...   (right)
// "(right)" marks an output equal to the reference.
std::string compared_translations(const nn::data::TranslationPair& pair,
                                  const std::vector<std::pair<std::string, std::string>>& outputs);

// A beam sweep (nn::beam_sweep) of one split, named for the tables and legends.
struct SweptSplit {
  std::string name;  // "test"
  const nn::BeamSweep* sweep;
  const nn::data::EncodedPairs* split;
};

// Table rows of BLEU: "greedy", then "beam w" for w = 1..widest, a column per (split, alpha) in
// that order (the greedy row repeats its BLEU under every alpha).
std::vector<std::vector<std::string>> beam_sweep_rows(const std::vector<SweptSplit>& swept, std::size_t widest,
                                                      const std::vector<double>& alphas);

// Two figures over the beam width: BLEU ("beam_width") and the mean output length beside the
// references' mean lengths ("beam_length"; the first split's reference grey, the others black).
void save_beam_sweep_figures(const std::vector<SweptSplit>& swept, std::size_t widest, const std::vector<double>& alphas,
                             const std::string& bleu_caption, const std::string& length_caption);

}  // namespace attnlab::lessons
