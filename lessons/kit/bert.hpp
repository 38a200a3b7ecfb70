// The BERT of lessons 14 and 15, in one place: lesson 15 fine-tunes lesson 14's checkpoint, so the
// two must agree on the split, the held-out masks, the topics, the model's sizes and its
// pretraining phases. What each lesson does with the model stays in the lesson.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "lessons/kit/explorer.hpp"
#include "lessons/kit/train.hpp"
#include "plots/figure.hpp"
#include "nn/data/cloze_corpus.hpp"
#include "nn/data/masked_windows.hpp"
#include "nn/metrics.hpp"
#include "nn/transformer/masked_lm.hpp"

namespace attnlab::lessons::bert {

inline constexpr std::uint64_t kSplitSeed = 2018;      // the held-out entries: the same in every run
inline constexpr std::uint64_t kHeldOutMaskSeed = 99;  // the masks of the held-out windows: the same in every run
inline constexpr double kHeldOutShare = 0.1;           // of the entries, for validation and again for test
// Five topic files whose entries differ in what they talk about and how: hacker lore, mock
// dictionary entries, politics, verse and Zippy the Pinhead's non sequiturs.
inline const std::vector<std::string> kTopics = {"computers", "definitions", "politics", "songs-poems", "zippy"};

// Pretraining runs in two phases, as BERT's did (90 % of its steps on 128 tokens, then 512): short
// windows first, long ones after. Lesson 14's section 2 says why.
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

// Lesson 15's fine-tuning beside the model's sizes (lesson 14's, so that its checkpoint loads):
// epochs, batch and peak rate; the labelled training entries per topic; the smaller label counts
// of its section 3; the fewest steps a small labelled set trains for.
struct FineTuneSettings : ModelSettings {
  int finetune_epochs;
  std::size_t finetune_batch;
  double finetune_lr;
  std::size_t finetune_per_topic;         // labelled training entries per topic, drawn with the run's seed
  std::vector<std::size_t> fewer_labels;  // the label counts of section 3, below finetune_per_topic
  long least_steps;                       // a smaller set trains for more epochs, to this many steps at least
  // Lesson 15's section 4: the classifier trained alone on the frozen encoder's output for this
  // many steps at least, at this constant rate, before everything is fine-tuned.
  long head_first_steps = 0;
  double head_first_lr = 1e-2;
};

// The fine-tuning settings of the full run, or of --quick, on model_settings().
FineTuneSettings fine_tune_settings();

// Fine-tuning's recipe on `examples` labelled entries, the same for a pretrained and a random start:
// AdamW (weight decay 0.01) at peak r.finetune_lr, a 10 % warm-up then a cosine decay to 1/20 of
// the peak, gradients clipped at norm 1, batches of r.finetune_batch in the order of the run's seed
// + 31, for r.finetune_epochs epochs, or more when a set too small fills fewer than r.least_steps
// steps. std::invalid_argument naming fine_tune_recipe for no examples or a batch of 0.
Recipe fine_tune_recipe(const FineTuneSettings& r, std::size_t examples);

// The label counts of lesson 15's sweeps: r.fewer_labels, then r.finetune_per_topic.
std::vector<std::size_t> label_counts(const FineTuneSettings& r);

// The classifier's recipe before fine-tuning (lesson 15's section 4, "linear probe, then
// fine-tune", Kumar et al. 2022), for the classifier alone on the frozen encoder's output: AdamW
// (weight decay 0.01) at the constant rate r.head_first_lr, no warm-up, gradients clipped at norm
// 1, batches of r.finetune_batch in the order of the run's seed + 31, enough epochs for
// r.head_first_steps steps at least. std::invalid_argument naming head_first_recipe for no
// examples, a batch of 0 or no steps.
Recipe head_first_recipe(const FineTuneSettings& r, std::size_t examples);

// The classifier of `model` trained alone with `recipe` (head_first_recipe) on the topics'
// cross-entropy of `labelled`, read as in fine-tuning (a random window of `context` tokens drawn
// with `crop`), on the encoder's output computed without the tape: the encoder is left as it was.
History train_head_first(nn::EncoderModel<float>& model, const nn::data::TopicSet& labelled, std::size_t context,
                         const Recipe& recipe, Generator& crop);

// The topic sets of fine-tuning: every training entry of the `topics` (the rarest one's count of
// each), `per_topic` of each of them drawn from it with `seed` (topic_subset), and the validation
// and test entries; the split is the corpus's (load_corpus: test entries held out of pretraining too).
struct TopicSplits {
  nn::data::TopicSet all_train, train, validation, test;
};
TopicSplits topic_splits(const nn::data::ClozeCorpus& c, const std::vector<std::string>& topics, std::size_t per_topic,
                         std::uint64_t seed);

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
// The same draw with the classifier reading another pooling (nn::Pooling::Mean: the mean of the
// real tokens' final vectors); the parameters, and so the checkpoints, are the same.
std::unique_ptr<nn::MaskedLM<float>> new_model(const nn::data::ClozeCorpus& c, const ModelSettings& r, nn::Pooling pooling);

// The k likeliest characters ([ids.first, ids.end), never a special) at row `row` of
// log-probabilities (N, V), likeliest first. std::invalid_argument naming likeliest when the row
// is not in logp, the characters are not in its columns, or k is more than there are characters.
std::vector<Index> likeliest(const Array<float>& logp, std::size_t row, const nn::data::ClozeIds& ids, std::size_t k);

// The masked-character scores of a held-out set, without the tape.
nn::data::ClozeScores score(nn::MaskedLM<float>& bert, const std::vector<nn::data::MaskedWindows>& set);

// The recipe of one phase of pretraining, the same in both lessons: AdamW (weight decay 0.01, beta2
// 0.98) at peak r.pretrain_lr, a warm-up over 1/20 of the phase's steps and a cosine decay to 1/20 of
// the peak, gradients clipped at norm 1, the phase's epochs and batch, batches in the order of the
// run's seed, labelled by the windows' length.
Recipe pretraining_recipe(const ModelSettings& r, const Phase& ph);

// The steps of one phase: ceil(windows / batch) per epoch, times its epochs.
long phase_steps(const Phase& ph);

// One phase of pretraining: ph.epochs epochs of ph.windows windows of ph.context tokens, [CLS] first,
// each drawn at a random place of the training stream with `windows` and masked afresh by the
// 80/10/10 rule with `masks`; the loss is the cross-entropy of the targets. `recipe` is
// pretraining_recipe(r, ph), perhaps with a validation or a checkpoint added (its epochs, batch and
// label are set from the phase again, so they cannot disagree with it). std::invalid_argument naming
// pretrain_phase when the phase has no windows, no batch or a context below 2.
History pretrain_phase(nn::MaskedLM<float>& bert, const nn::data::ClozeCorpus& c, const Phase& ph, Recipe recipe,
                       Generator& windows, Generator& masks);

// Each layer's attention weights (h, L, L) when `model` reads the one sequence `ids` (eval mode, no
// tape). std::invalid_argument naming attention_on for an empty sequence.
std::vector<xt::xarray<double>> attention_on(nn::EncoderModel<float>& model, const std::vector<Index>& ids);

// The attention of every head of every layer when `model` reads `ids`, for the explorer and the
// figures: the tokens as shown() shows them, layers named "layer 1", "layer 2", ... (eval mode, no
// tape); with `score_parts`, each head's queries, keys and position bias too, for the explorer's
// neuron view. std::invalid_argument naming attention_on for an empty sequence.
AttentionInput attention_input(nn::EncoderModel<float>& model, const nn::data::Vocab& v, const std::vector<Index>& ids,
                               const std::string& name, bool score_parts = false);

// Every head of every layer of `in` in one figure, two panels a row ("Layer l, head h"), on one
// colour scale from 0 to the largest weight of any head. std::invalid_argument naming
// head_grid_figure when `in` has no head.
plots::Figure head_grid_figure(const AttentionInput& in, const std::string& title);

// The classifier's probabilities (N, K) for every entry of a topic set, each read from its
// beginning, `context` tokens at most (eval mode, no tape, 64 entries a pass).
Array<float> topic_probabilities(nn::EncoderModel<float>& model, const nn::data::TopicSet& s, std::size_t context);

// A frozen encoder's output for every entry of a topic set (N, d), each read from its beginning:
// [CLS]'s final vector, or the mean of the real tokens' final vectors ([CLS] and <eos> included).
Array<float> encoder_features(nn::EncoderModel<float>& model, const nn::data::TopicSet& s, std::size_t context,
                              bool mean_of_tokens);

// Lesson 15's example entry: the first entry of `s` of 24 to 40 tokens that `predicted` gets right
// (the first entry when none is), its row, and its tokens cut to `context`. std::invalid_argument
// naming example_entry for an empty set or predictions that do not cover it.
struct ExampleEntry {
  std::size_t row = 0;
  std::vector<Index> ids;
};
ExampleEntry example_entry(const nn::data::TopicSet& s, const IndexArray& predicted, std::size_t context);

// Lesson 15's explorer page: the entry `ids`, of topic `topic`, read by the pretrained model
// fine-tuned, then by the one fine-tuned from scratch, each with its queries and keys.
ExplorerPage fine_tuned_explorer_page(nn::EncoderModel<float>& pretrained, nn::EncoderModel<float>& scratch,
                                      const nn::data::Vocab& v, const std::vector<Index>& ids, const std::string& topic);

// Lesson 15's figure of where [CLS] looks: the [CLS] row (query 0) of every layer of `in`, the
// mean of its heads, then of each head of the last layer, over the tokens. std::invalid_argument
// naming cls_attention_figure when `in` has no layer or no token.
plots::Figure cls_attention_figure(const AttentionInput& in, const std::string& title);

// [CLS]'s attention over every entry of a set (read from its beginning, `context` tokens at most),
// by the kind of token it lands on: 0 the specials ([CLS], <eos>, anything outside the
// characters), 1 the other characters (spaces, punctuation), 2 letters and digits. by_layer[l][k]:
// the mean over entries of layer l's weight (mean of its heads) on kind k; share[k]: the mean share
// of kind k among an entry's tokens. std::invalid_argument naming cls_attention_by_kind for an empty set.
struct ClsMass {
  std::vector<std::array<double, 3>> by_layer;
  std::array<double, 3> share{};
};
ClsMass cls_attention_by_kind(nn::EncoderModel<float>& model, const nn::data::ClozeCorpus& c, const nn::data::TopicSet& s,
                              std::size_t context);
// Those shares as a table's rows (percentages, one decimal): "share of the tokens" first, then
// "layer l: [CLS]'s attention" for every layer; the columns are the three kinds in order.
std::vector<std::vector<std::string>> cls_mass_rows(const ClsMass& m);

// Lesson 14's figure of the masking rule: each example (its tokens, and what the rule made of them)
// cut into rows of `width` tokens, each row as written above the row as the model reads it, the
// cells shaded by what the rule did (none, [MASK], random, kept). std::invalid_argument naming
// masking_figure for a width of 0, no tokens, or an example whose input or choices do not match it.
struct MaskedExample {
  std::vector<Index> ids;
  nn::data::MaskedTokens masked;
};
plots::Figure masking_figure(const nn::data::Vocab& v, const std::vector<MaskedExample>& examples, std::size_t width);

// Lesson 14's pretraining figure: the training loss by step and the validation loss (top) and
// accuracy (bottom) after every epoch on windows of both lengths ("loss", "accuracy", "loss_short",
// "accuracy_short" in h), beside the counted baselines, with a line where the long windows start
// (first_phase_steps; 0 when the run began with them). std::invalid_argument naming
// pretraining_figure when the scores do not cover every epoch or the first phase is not in the run.
plots::Figure pretraining_figure(const History& h, std::size_t first_phase_epochs, std::size_t first_phase_steps,
                                 const ModelSettings& r, const nn::data::ClozeScores& unigram,
                                 const nn::data::ClozeScores& neighbours);

// Lesson 15's fine-tuning figure: the training loss by step (means of half epochs) of the two
// starts, and their validation accuracy ("accuracy") after every epoch beside the bag of
// characters' test accuracy and chance (1 / classes). std::invalid_argument naming
// finetuning_figure when the two histories' accuracies are empty or of different lengths.
plots::Figure finetuning_figure(const History& pretrained, const History& scratch, double bag, std::size_t classes);

// Lesson 15's label-count figure: test accuracy of both starts and of the bag of characters against
// the labelled entries a topic (log scale), then the gap (pretrained minus scratch, in points)
// between dashed lines at twice its chance scale. std::invalid_argument naming labels_figure
// when the curves are empty or of different lengths.
struct LabelCurves {
  std::vector<double> per_topic, pretrained, scratch, bag;
  std::vector<double> gap, noise;  // shares (0.05: 5 points)
  std::string title = "What pretraining buys as the labels get fewer";
};
plots::Figure labels_figure(const LabelCurves& c, std::size_t classes);

// One label count of lesson 15's sweeps: the test accuracy of both starts and of the bag of
// characters, each start's training loss in its last epoch, and the two starts paired on the test
// entries (nn::paired_comparison: pretrained as a, scratch as b).
struct LabelPoint {
  std::size_t per_topic = 0;
  long steps = 0;
  double pretrained = 0, scratch = 0, bag = 0;
  double pretrained_loss = 0, scratch_loss = 0;
  nn::PairedComparison pair;
};
// The points as labels_figure draws them, under `title`.
LabelCurves label_curves(const std::vector<LabelPoint>& points, const std::string& title);

// One sweep (`changed`) against another (`plain`) over the same label counts, labelled sets and
// test entries: the label counts at which changed's pretrained start is ahead of its scratch (gap
// above 0), ahead by more than twice the gap's chance scale, and ahead of scratch under either
// sweep's recipe; changed's mean gap over the label counts, and each start's mean change in test
// accuracy from plain to changed. std::invalid_argument naming compare_sweeps when the sweeps are
// empty or their label counts differ.
struct SweepComparison {
  std::size_t ahead = 0, beyond_chance = 0, over_best_scratch = 0;
  double mean_gap = 0, plain_mean_gap = 0, pretrained_change = 0, scratch_change = 0;  // plain: section 3's
};
SweepComparison compare_sweeps(const std::vector<LabelPoint>& changed, const std::vector<LabelPoint>& plain);

}  // namespace attnlab::lessons::bert
