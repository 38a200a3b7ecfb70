// An encoder tagger (nn::EncoderModel with Pooling::None: a tag per token), as lessons 05 and 07
// train and read it: its training on a tagging set; the tags it predicts, also with some heads
// switched off (nn/transformer/head_gates); the attention weights it gives a batch; where the
// heads of a layer look (offset_profile); what each head is worth, switched off alone and pruned
// least important first; and its attention on one sequence as the explorer's input.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xarray.hpp>

#include "core/tensor.hpp"
#include "lessons/kit/explorer.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/heads.hpp"
#include "lessons/kit/offset_profile.hpp"
#include "lessons/kit/tagging.hpp"
#include "lessons/kit/timing.hpp"
#include "lessons/kit/train.hpp"
#include "nn/data/tagged.hpp"
#include "nn/data/vocab.hpp"
#include "nn/transformer/encoder_model.hpp"
#include "nn/transformer/head_gates.hpp"
#include "plots/figure.hpp"

namespace attnlab::lessons {

// Trains the model as the recipe says (lessons/kit/train.hpp) on the mean cross-entropy of its
// tagged positions: targets of -100 (CrossEntropyOptions' ignore_index) are no tag and not scored.
History train_tagger(nn::EncoderModel<float>& model, const nn::data::Tagged& train, const Recipe& recipe);

// One training step of each model on `batch` (train_tagger's loss), timed in turn over `rounds`
// rounds by training_step_medians (lessons/kit/timing.hpp), whose errors it raises.
std::vector<Timing> tagger_step_medians(const std::vector<std::unique_ptr<nn::EncoderModel<float>>>& models,
                                        const nn::data::Tagged& batch, int rounds);

// Every layer's attention weights (B, h, L, L) on `inputs` (B, L), in eval mode without the tape.
std::vector<Tensor<float>> attention_on(nn::EncoderModel<float>& model, const IndexArray& inputs);

// The most likely tag of every position of `inputs` (N, L), in eval mode, 256 rows at a time;
// with `gates`, those heads switched off (empty: every head on). ShapeError naming encoder_tags
// for a pooled model (and with_head_gates' when the gates do not fit the encoder).
IndexArray encoder_tags(nn::EncoderModel<float>& model, const IndexArray& inputs, const nn::HeadGates& gates = {});

// The model's logits scored at two lengths (lessons/kit/tagging's evaluate_at_two_lengths, `batch`
// rows at a time): a learned table of positions cannot run at the longer one.
LengthScores evaluate_at_two_lengths(nn::EncoderModel<float>& model, const nn::data::Tagged& held_out,
                                     const nn::data::Tagged& held_out_long, std::size_t batch = 256);

// A tagger trained as the recipe says (train_tagger), then scored on held-out sets at the training
// length and at a longer one (evaluate_at_two_lengths, `batch` rows at a time).
struct ScoredTagger : LengthScores {
  std::unique_ptr<nn::EncoderModel<float>> model;
  History history;
};
ScoredTagger train_and_score(std::unique_ptr<nn::EncoderModel<float>> model, const nn::data::Tagged& train,
                             const nn::data::Tagged& test, const nn::data::Tagged& test_long, const Recipe& recipe,
                             std::size_t batch = 256);

// Taggers scored at two lengths, reported in the order given: each one's metrics
// token_accuracy_<name>_L<n> and exact_match_<name>_L<n> at every length it runs at (n: the held-out
// set's length, train_length or long_length); a table row each (the name, token accuracy and exact
// match at both lengths with 3 decimals, "n/a" where it cannot run, the final epoch's training loss
// with 4); and a bar panel per length of the taggers that run there (series "per-token accuracy"
// and "exact match"; titles and labels are the lesson's). std::invalid_argument naming
// report_two_lengths for no taggers or one that did not train.
struct TwoLengthReport {
  std::vector<std::vector<std::string>> rows;
  BarPanel bars[2];  // [0] at the training length, [1] at the longer one
};
using NamedTagger = std::pair<std::string, const ScoredTagger*>;
TwoLengthReport report_two_lengths(const std::vector<NamedTagger>& taggers, std::size_t train_length,
                                   std::size_t long_length);

// The longer length position by position: a table row per tagger (the name, its token accuracy over
// the positions before train_length and over those from it on, its exact match, with 3 decimals;
// "n/a" three times where it cannot run) and, for each that runs, its accuracy at every position
// as a curve (x from 0, in series_color of its place among `taggers`).
struct PositionReport {
  std::vector<std::vector<std::string>> rows;
  std::vector<plots::Series> curves;
};
PositionReport report_by_position(const std::vector<NamedTagger>& taggers, std::size_t train_length);

// The per-token accuracy of encoder_tags on a held-out set; positions tagged `ignore` are not scored.
double tag_accuracy(nn::EncoderModel<float>& model, const nn::data::Tagged& set, Index ignore,
                    const nn::HeadGates& gates = {});

// Where each head of layer `layer` looks on `inputs` (B, L): offset_profile of its weights.
// std::out_of_range naming offset_profile_of for a layer the model does not have.
OffsetProfile offset_profile_of(nn::EncoderModel<float>& model, const IndexArray& inputs, std::size_t layer = 0);

// The head of `model` with the most weight on the key `offset` places left of each query over
// `inputs` (head_for_offset on attention_on), with its mean weight on keys at least `far` places
// away (far_mass) and at every offset (its row of offset_profile's weight).
struct OffsetHead {
  HeadPick pick;
  double far = 0;
  xt::xarray<double> profile;  // (2L - 1): offsets -(L - 1) .. L - 1
};
OffsetHead offset_head(nn::EncoderModel<float>& model, const IndexArray& inputs, long offset, std::size_t far);

// Where chosen heads look, one panel per model (overlaid, equal peaks would hide each other), one
// above the other under `title`: each head's profile over offsets i - j from -(L - 1) to L - 1 in
// its colour, with markers, on 0 .. 1.05, the panel titled "<name> (layer l, head h)", and dashed
// lines at +-(trained - 0.5): offsets beyond trained - 1 never occurred in training (sequences of
// `trained` tokens). std::invalid_argument naming offset_heads_figure for no heads or a profile
// that does not hold 2L - 1 offsets.
struct NamedOffsetHead {
  std::string name;
  OffsetHead head;
  plots::Color color;
};
plots::Figure offset_heads_figure(const std::vector<NamedOffsetHead>& heads, std::size_t trained, const std::string& title);

struct HeadWorth {
  xt::xarray<double> importance;      // (layers, heads): validation accuracy lost with that head alone off
  std::vector<double> pruned;         // test accuracy with the k least important heads off, k = 0, 1, ...
  std::vector<IndexArray> alone_off;  // per head, layer-major: the validation tags with it alone off
};

// What each head is worth (nn::ablate_heads on the validation set, nn::prune_heads on the test set,
// in the order of the importance), positions tagged `ignore` not scored.
HeadWorth head_worth(nn::EncoderModel<float>& model, const nn::data::Tagged& validation, const nn::data::Tagged& test,
                     Index ignore);

// What each head is worth, drawn: one heatmap per model, one above the other under `title`, of its
// HeadWorth::importance (layers, heads) with each value printed, on one 0..1 red scale ("accuracy
// lost"); 550 pixels of height a model. PlotError naming head_importance_figure for no models.
plots::Figure head_importance_figure(const std::vector<std::pair<std::string, xt::xarray<double>>>& importances,
                                     const std::string& title);

// The explorer's tokens for a task where positions matter: "3 @0", "1 @1", ... (each token and its
// position), so that equal tokens stay apart in the page's lists.
std::vector<std::string> at_positions(const std::vector<std::string>& tokens);
// The same for a sequence of ids shown as numbers (digits), `one` (1, L) or (L).
std::vector<std::string> at_positions(const IndexArray& one);

// One sequence `one` (1, L) through the model, its queries and keys kept for the neuron view:
// every layer and head, named "layer 1", "layer 2", ..., as the explorer's input `name` with
// `tokens` as queries and keys (self_attention_input, then with_score_parts; their errors when the
// tokens do not fit).
AttentionInput explorer_input(nn::EncoderModel<float>& model, const std::string& name,
                              const std::vector<std::string>& tokens, const IndexArray& one);

// Several models on the same sequence as one explorer input: the layers of each model in turn,
// named "<its name>, layer 1", ... (the way to compare models in one page: choose a model's layer
// as a layer). std::invalid_argument naming explorer_input for no models, or models whose heads
// are scored at different scales (d_k).
using NamedModel = std::pair<std::string, nn::EncoderModel<float>*>;
AttentionInput explorer_input(const std::vector<NamedModel>& models, const std::string& name,
                              const std::vector<std::string>& tokens, const IndexArray& one);
// The same, the tokens `one`'s as `vocab` writes them, each @ its position (at_positions).
AttentionInput explorer_input(const std::vector<NamedModel>& models, const std::string& name,
                              const nn::data::Vocab& vocab, const IndexArray& one);

// The first two positions that hold the same token (the first token that repeats, at its first two
// places); nullopt when every token differs.
std::optional<std::pair<std::size_t, std::size_t>> first_repeat(const std::vector<std::string>& tokens);

}  // namespace attnlab::lessons
