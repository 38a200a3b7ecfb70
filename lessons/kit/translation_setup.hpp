// The translation set-up lessons 08 and 09 share: the toy task and its sizes, the Transformer and
// the GRU encoder-decoder as lesson 08 trains them, and BLEU by length with the training lengths
// marked. Lesson 09 trains the same models on the same batches from the same first draws (the
// seeds below), so its numbers continue lesson 08's.
//
// Seeds, all offsets of the run's --seed: the task's sentences +1 and its split +2 (the task's
// options), every Transformer's first draw +3, every recipe's batch order +4, the GRU's first draw +5.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "lessons/kit/translators.hpp"
#include "nn/data/translation_task.hpp"
#include "nn/positional/positional.hpp"
#include "nn/rnn/seq2seq.hpp"
#include "nn/transformer/seq2seq.hpp"

namespace attnlab::lessons {

// Training sentences have at most kMaxTrainWords source words; the length split holds the longer
// ones the grammar makes (up to 15 words), which no model sees in training.
constexpr std::size_t kMaxTrainWords = 10;
constexpr std::size_t kLongestBucket = 14;  // BLEU by length: 14 and 15 words share one point (15 is rare)
// Label smoothing of every translation Transformer (Szegedy et al. 2016), in its loss.
constexpr double kLabelSmoothing = 0.1;

// The task's and the models' sizes; how each model trains is its Recipe.
struct TranslationPlan {
  std::size_t sentences = 0, per_long_length = 0;  // generated; kept per length in the length split
  std::size_t words_per_class = 0;                 // 0: the whole lexicon; quick: a smaller vocabulary
  std::size_t d_model = 64, heads = 4, d_ff = 128, layers = 2;
  std::size_t gru_hidden = 64;                     // embedding, encoder and decoder states, attention width
  int epochs = 0;                                  // every model: the same epochs of the same batches
  std::size_t batch = 0;
  long warmup = 0;                                 // Noam warm-up steps
};

// The plan of this run (--quick: a smaller vocabulary, fewer sentences, more epochs; --epochs
// honoured), written into the lesson's config.
TranslationPlan translation_plan();

// The task's options for a plan, seeded from the run's seed. std::invalid_argument naming
// translation_task_options for a plan without sentences.
nn::data::TranslationTaskOptions translation_task_options(const TranslationPlan& plan);

// The Transformer's configuration: the plan's sizes, post-norm layers with ReLU and dropout 0.1,
// the task's vocabularies, positions as `positional` says.
nn::Seq2SeqConfig translation_transformer_config(const TranslationPlan& plan, const nn::data::TranslationTask& task,
                                                 nn::Positional positional = nn::Positional::Sinusoidal);

// The paper's recipe: Adam (beta2 0.98, eps 1e-9), the Noam schedule with its peak d^-1/2 warmup^-1/2
// at the end of the warm-up, gradients clipped at norm 1; checkpoint "transformer.npz".
Recipe translation_transformer_recipe(const TranslationPlan& plan);

// A Transformer of the plan with the given positions, from the lessons' shared first draw.
std::unique_ptr<nn::Seq2SeqTransformer<float>> translation_transformer(
    const TranslationPlan& plan, const nn::data::TranslationTask& task,
    nn::Positional positional = nn::Positional::Sinusoidal);

// Trains a translation Transformer as the recipe says (train_translation with kLabelSmoothing),
// and after every epoch also scores the BLEU of its greedy translations of the longer split as
// "bleu_longer" (measured, never used to choose anything).
History train_translation_transformer(nn::Seq2SeqTransformer<float>& model, const nn::data::TranslationTask& task,
                                      Recipe recipe);

// The recurrent encoder-decoder of lesson 02 at the plan's width (Bahdanau's decoder), with the
// attention score `score` ("none": the fixed-vector bottleneck; "additive"), trained by Adam at
// 3e-3 on the Transformer's batches; `model` and `history` receive it, the translator points at
// them. std::invalid_argument naming train_translation_gru for an empty training split.
Translator train_translation_gru(const TranslationPlan& plan, const nn::data::TranslationTask& task,
                                 const std::string& score, const std::string& name, const std::string& key,
                                 std::unique_ptr<nn::rnn::Seq2Seq>& model, History& history);

// BLEU by source length of every curve in `series` (bleu_by_length with kLongestBucket), with the
// longest training sentence marked, saved as `stem`.
void save_translation_bleu_by_length(std::vector<plots::Series> series, const std::string& title,
                                     const std::string& stem, const std::string& caption);

}  // namespace attnlab::lessons
