// Training the recurrent encoder-decoder of nn/rnn (lessons 02 and 03) through the kit's one
// training entry point: the lesson states a Recipe, this says what a batch's loss is.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lessons/kit/model_card.hpp"
#include "lessons/kit/timing.hpp"
#include "lessons/kit/train.hpp"
#include "nn/data/batch.hpp"
#include "nn/rnn/seq2seq.hpp"

namespace attnlab::lessons {

// A run of an encoder-decoder on a generated task: how many examples to generate, the model's
// sizes, and how to train it.
struct Seq2SeqPlan {
  std::size_t examples = 0;
  nn::rnn::Seq2SeqConfig model;
  Recipe recipe;
};

// The plan in the run's configuration (metrics.json): examples, the sizes, epochs, batch, lr, clip.
void record(const Seq2SeqPlan& plan);

// A trained encoder-decoder's held-out scores as metrics, named with `suffix` ("" or "_dot", say):
// test_exact_match<suffix> and test_char_accuracy<suffix> of `test`, validation_loss<suffix> the
// last "loss" of h's validation. std::invalid_argument naming record_scores when h has none.
void record_scores(const std::string& suffix, const nn::rnn::Evaluation& test, const History& h);

// Trains `model` on data.train as the recipe says: the teacher-forced cross-entropy per target
// token of each batch of pairs, and after every epoch the same loss on data.validation, without the
// tape, as the held-out score "loss" (the recipe's own validate is replaced). std::invalid_argument
// naming the recipe's label when the training or the validation split is empty.
History train_seq2seq(nn::rnn::Seq2Seq& model, const nn::data::EncodedSplits& data, Recipe recipe);

// What each attention score costs in the encoder-decoder of `model`'s sizes, one fresh model per
// score (drawn from `seed`): the median CPU and wall time of (1) a whole training step on `batch`
// (forward, backward, clipping at 1, Adam) and (2) the decoder's attention alone, forward and
// backward, on random queries (B, T, Hd) and keys (B, S, 2He) of the batch's shapes. The
// 2 x scores pieces take turns in every one of `rounds` rounds (interleaved_medians), so a burst
// of load hits all alike. std::invalid_argument for no scores or fewer than 1 round.
struct ScoreCost {
  Timing step, attention;
};
std::vector<ScoreCost> time_scores(const nn::rnn::Seq2SeqConfig& model, const std::vector<std::string>& scores,
                                   std::size_t source_vocab, std::size_t target_vocab,
                                   const nn::data::Seq2SeqBatch& batch, int rounds, std::uint64_t seed);

// A trained encoder-decoder as files another program can run: <stem>.npz, its weights (the
// recipe's checkpoint), and <stem>.json, its model card: the sizes, the score, a local window and
// how it is placed (only for local attention), both vocabularies in id order, and what the lesson
// and seed were. write_model_card writes the card into the output
// folder (atomically).
void write_model_card(const std::string& stem, const nn::rnn::Seq2SeqConfig& c, const nn::data::Vocab& source,
                      const nn::data::Vocab& target);
// The same card with the held-out score the lesson measured on the model (lessons/kit/model_card).
void write_model_card(const std::string& stem, const nn::rnn::Seq2SeqConfig& c, const nn::data::Vocab& source,
                      const nn::data::Vocab& target, const HeldOut& held_out);

struct LoadedSeq2Seq {
  std::unique_ptr<nn::rnn::Seq2Seq> model;
  nn::data::Vocab source, target;
  std::string lesson;  // the card's: which lesson trained it, with what seed
  long long seed = 0;
  bool quick = false;               // trained by a --quick run
  std::optional<HeldOut> held_out;  // when the card has one
};

// The model of folder/<stem>.json and folder/<stem>.npz, weights loaded. An IoError naming the file
// when one is missing or unreadable, std::runtime_error naming the card when it lacks a field, names
// an unknown style or score, or holds a "held_out" that is not one; a ShapeError listing the
// mismatches when the weights do not fit the card.
LoadedSeq2Seq load_seq2seq(const std::string& folder, const std::string& stem);

}  // namespace attnlab::lessons
