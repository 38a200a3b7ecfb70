// Lesson 15: fine-tuning a pretrained BERT, and probing what pretraining put into it.
//
// Lesson 14 pretrained a small BERT on the characters of the Debian fortunes corpus by filling in
// masked characters. Here it earns its keep, or does not: we fine-tune it to tell which of five
// topic files an entry comes from, against the same network trained from its random start with the
// same recipe and batches and against a linear classifier on character frequencies, then again with
// fewer and fewer labels (where pretraining should pay most), then with the classifier on the mean of
// the tokens and trained alone first (where it does pay), read the topic off its frozen features
// with linear probes, and look at where its [CLS] token attends. The topic sets and their batches
// are nn/data/cloze_corpus; the settings, the recipe and the figures lessons/kit/bert; the probe
// lessons/kit/linear_probe; the paired comparison of two classifiers nn::paired_comparison.
#include <algorithm>
#include <cmath>
#include <memory>

#include "lessons/kit/bert.hpp"
#include "lessons/kit/image_classifier.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/linear_probe.hpp"
#include "nn/checkpoint.hpp"
#include "nn/confusions.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/cloze_corpus.hpp"
#include "nn/data/masked_windows.hpp"
#include "nn/transformer/masked_lm.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

using F = float;
using data::ClozeScores;
using data::MaskChoice;
// The split, the held-out masks, the topics, the model's sizes and phases, and how a token is shown
// are lessons/kit/bert's, as in lesson 14 (the same sizes, so that its checkpoint loads here); this
// lesson runs the first phase only when it is not given one. Fine-tuning's settings are beside them.
using bert::kTopics;
using BertSettings = bert::FineTuneSettings;
using Corpus = data::ClozeCorpus;
using data::TopicSet;
using TopicData = bert::TopicSplits;  // all_train, train (finetune_per_topic of each topic), validation, test
using Paired = nn::PairedComparison;  // two classifiers on one test set: only_a, only_b, gap, noise

// ---------------------------------------------------------------------------------------------
// 1. The pretrained encoder.

// Lesson 14's pretrained model when --from names its output folder; otherwise the same model
// pretrained here with lesson 14's first phase (windows of 31 characters). Saved as bert_mlm.npz.
std::unique_ptr<nn::MaskedLM<F>> pretrained_encoder(const Corpus& c, const BertSettings& r) {
  auto bert = bert::new_model(c, r);
  const std::string from = checkpoint_from("bert_mlm.npz");
  if (!from.empty()) {
    nn::load_checkpoint(from, bert->named_parameters());
    config("pretrained_from", from);
    say("The encoder is lesson 14's pretrained BERT, read from ", from, ": ", bert->parameter_count(), " parameters, $d = ",
        r.d_model, "$, ", r.layers, " layers of ", r.heads, " heads.");
  } else {
    const bert::Phase& ph = r.short_windows;
    const Recipe recipe = bert::pretraining_recipe(r, ph);
    Generator windows(seed() + 21), masks(seed() + 22);
    nn::MaskedLM<F>& b = *bert;
    const History h = bert::pretrain_phase(b, c, ph, recipe, windows, masks);
    timing("pretrain_seconds", h.seconds);
    const auto test = data::held_out_windows(c.ids, c.test, ph.context, full_or_quick<std::size_t>(2000, 600), 64,
                                             bert::kHeldOutMaskSeed);
    const data::CountedCloze counted(c.train, c.ids.first, c.ids.end);
    const ClozeScores s = bert::score(b, test), uni = counted.score_unigram(test);
    metric("mlm_test_accuracy_masked", s.accuracy_on(MaskChoice::masked));
    metric("unigram_test_accuracy_masked", uni.accuracy_on(MaskChoice::masked));
    say("Without --from (lesson 14's output folder) this lesson pretrains the encoder itself, as lesson 14's first "
        "phase does: the 80/10/10 rule on windows of ", ph.context - 1, " characters of the training entries, ",
        describe(recipe, bert::phase_steps(ph)), ". Its pretraining shows in the masked characters of held-out "
        "windows:");
    claim({"encoder_pretrained", "mlm_test_accuracy_masked > unigram_test_accuracy_masked + 0.05",
           text("under [MASK] it restores ", percent(s.accuracy_on(MaskChoice::masked), 1), " of the characters, "
                "against ", percent(uni.accuracy_on(MaskChoice::masked), 1), " for the most frequent character."),
           text("under [MASK] it restores only ", percent(s.accuracy_on(MaskChoice::masked), 1), " of the characters, "
                "against ", percent(uni.accuracy_on(MaskChoice::masked), 1), " for the most frequent character: "
                "barely pretrained.")});
  }
  nn::save_checkpoint(lesson().path("bert_mlm.npz"), bert->named_parameters());
  return bert;
}

// ---------------------------------------------------------------------------------------------
// 2. Fine-tuning: which file is an entry from?

// How the classifier reads the encoder and how it starts: sections 2 and 3 put it on [CLS]'s final
// vector and train everything from the first step; section 4 puts it on the mean of the real
// tokens' final vectors and trains it alone on the frozen encoder first.
struct Reading {
  nn::Pooling pooling = nn::Pooling::First;
  bool head_first = false;
};

struct FineTuned {
  std::unique_ptr<nn::MaskedLM<F>> bert;
  History history;
  IndexArray test_predicted;
  double test_accuracy = 0;
};

// One start fine-tuned on `labelled`: the classifier (read as `how` says) and every weight under it
// trained on the topics' cross-entropy, with the same recipe and batches for both starts
// (bert::fine_tune_recipe); validation after every epoch when asked (the curves of section 2).
// With how.head_first, the classifier first trains alone (bert::head_first_recipe) on the
// encoder's output computed without the tape: the encoder stays as it started.
FineTuned fine_tune(const Corpus& c, const TopicSet& labelled, const TopicData& d, const BertSettings& r, std::size_t context,
                    const std::string& label, const std::string& pretrained_weights, bool validate, const Reading& how = {}) {
  FineTuned f{bert::new_model(c, r, how.pooling), {}, {}, 0};
  if (!pretrained_weights.empty()) nn::load_checkpoint(pretrained_weights, f.bert->named_parameters());
  nn::EncoderModel<F>& model = f.bert->model;
  Generator crop(seed() + 32);
  if (how.head_first) {
    Recipe first = bert::head_first_recipe(r, labelled.size());
    first.label = label + ", classifier alone";
    bert::train_head_first(model, labelled, context, first, crop);
  }
  Recipe recipe = bert::fine_tune_recipe(r, labelled.size());
  recipe.label = label;
  if (validate)
    recipe.validate = [&] { return class_scores(bert::topic_probabilities(model, d.validation, context), d.validation.labels); };
  f.history = train(model, labelled.size(), [&](const std::vector<std::size_t>& rows) {
    const data::TopicBatch b = data::topic_batch(labelled, rows, context, &crop);
    return cross_entropy(model.forward(b.ids, b.real), b.labels);
  }, recipe);
  f.test_predicted = nn::argmax_last(bert::topic_probabilities(model, d.test, context));
  f.test_accuracy = nn::accuracy(f.test_predicted, d.test.labels);
  return f;
}

// The two starts on the same test entries: the entries only one of them gets right, the gap, and
// its chance scale (with n entries on which the two disagree, chance alone moves the gap by about
// sqrt(n) entries).
Paired paired(const FineTuned& pretrained, const FineTuned& scratch, const IndexArray& labels) {
  return nn::paired_comparison(pretrained.test_predicted, scratch.test_predicted, labels);
}

// The linear probe of lessons/kit/linear_probe, trained to convergence: full-batch AdamW, weight decay 0.05.
constexpr int kProbeSteps = 300;

ProbeScores probe(Array<F> train, Array<F> validation, Array<F> test, const TopicSet& labelled, const TopicData& d,
                  const std::string& label) {
  ProbeRecipe p;
  p.label = label, p.classes = kTopics.size(), p.steps = full_or_quick(kProbeSteps, kProbeSteps / 3);
  p.init_seed = seed() + 41, p.order_seed = seed();
  return linear_probe({train, labelled.labels}, {validation, d.validation.labels}, {test, d.test.labels}, p);
}

// A linear classifier on the character frequencies of the window the models read.
ProbeScores bag_of_characters(const Corpus& c, const TopicSet& labelled, const TopicData& d, std::size_t context) {
  const auto freq = [&](const TopicSet& s) { return data::character_frequencies(s, c.vocab.size(), context); };
  return probe(freq(labelled), freq(d.validation), freq(d.test), labelled, d, "bag of characters");
}

double bag_baseline(const Corpus& c, const TopicData& d, const BertSettings& r) {
  const ProbeScores s = bag_of_characters(c, d.train, d, r.context());
  say("The baseline: a linear classifier on the ", c.vocab.size(), " character frequencies of the same window the "
      "models read, trained to convergence (", full_or_quick(kProbeSteps, kProbeSteps / 3), " full-batch AdamW steps, "
      "weight decay 0.05): validation ", fixed(s.validation, 3), ", test ", fixed(s.test, 3), ".");
  metric("finetune_test_accuracy_bag_of_characters", s.test);
  claim({"bag_beats_chance", "finetune_test_accuracy_bag_of_characters > 0.35",
         text("Characters alone say a good deal (", fixed(s.test, 3), " against chance ", fixed(1.0 / double(kTopics.size()), 3),
              "): definitions are full of commas and colons, songs of line breaks, Zippy of capitals and exclamation marks."),
         text("Characters alone say little here: ", fixed(s.test, 3), " against chance ", fixed(1.0 / double(kTopics.size()), 3), ".")});
  return s.test;
}

// What pretraining put into the features, with nothing fine-tuned: the same linear classifier on
// the frozen encoder's outputs, pretrained against the random start.
void frozen_probes(const Corpus& c, const TopicData& d, const BertSettings& r, nn::MaskedLM<F>& pretrained) {
  const auto initial = bert::new_model(c, r);
  std::vector<std::vector<std::string>> rows;
  double probe_gain = 0;  // the mean-of-tokens probe, pretrained minus random
  for (bool mean : {false, true}) {
    std::vector<std::string> cells = {mean ? "mean of the tokens' vectors" : "[CLS]'s vector"};
    for (nn::MaskedLM<F>* m : {initial.get(), &pretrained}) {
      const auto features = [&](const TopicSet& s) { return bert::encoder_features(m->model, s, r.context(), mean); };
      const ProbeScores s = probe(features(d.train), features(d.validation), features(d.test), d.train, d, "probe");
      cells.push_back(fixed(s.test, 3));
      if (mean) probe_gain += m == &pretrained ? s.test : -s.test;
      metric(text("probe_test_accuracy_", m == &pretrained ? "pretrained" : "random", mean ? "_mean" : "_cls"), s.test);
    }
    rows.push_back(cells);
  }
  metric("probe_gain_pretrained_over_random", probe_gain);
  say("Before fine-tuning anything: how much of the topic can a linear classifier read off the frozen encoder's "
      "output? Once from the random weights pretraining started from, once from the pretrained ones, with the "
      "probe of the bag of characters:");
  table({"frozen encoder, linear classifier on", "random weights: test accuracy", "pretrained: test accuracy"}, rows);
  claim({"probe_reads_pretraining", "probe_gain_pretrained_over_random > 0.03",
         text("On the mean of the tokens' vectors the probe reads ", fixed(probe_gain, 3), " more of the topic from the "
              "pretrained encoder than from its random start: pretraining put something about the topic into the features."),
         text("On the mean of the tokens' vectors the probe reads about as much of the topic from the pretrained encoder "
              "as from its random start (a difference of ", fixed(probe_gain, 3), "): a random encoder's features "
              "already mix the characters, and the pretraining added little a linear probe can use."),
         Expect::either_way});
}

void confusion(const TopicData& d, const FineTuned& pretrained);

void fine_tuning(const Corpus& c, const BertSettings& r, const TopicData& d, nn::MaskedLM<F>* bert, FineTuned& pretrained,
                 FineTuned& scratch) {
  say("The task: which of ", listing(kTopics), " does an entry come from? Each split keeps the same number of "
      "entries of every topic, so chance is ", percent(1.0 / double(kTopics.size()), 0), ": ", d.train.size(),
      " training entries (", d.train.size() / kTopics.size(), " per topic, drawn with the run's seed from the ",
      d.all_train.size() / kTopics.size(), " the training split has: labels are what costs, and what pretraining "
      "is meant to save), ", d.validation.size(), " validation and ", d.test.size(), " test entries (the rarest "
      "topic's count in those splits). The test entries were held out of pretraining too. The classifier reads the "
      "[CLS] token's vector after the last layer; in pretraining [CLS] was never a target, so whatever it gathers "
      "it learns now.");
  config({{"topics", kTopics}, {"finetune_epochs", r.finetune_epochs}, {"finetune_batch", r.finetune_batch},
          {"finetune_peak_lr", r.finetune_lr}, {"finetune_per_topic", r.finetune_per_topic}});
  const double bag = bag_baseline(c, d, r);
  frozen_probes(c, d, r, *bert);
  const Recipe recipe = bert::fine_tune_recipe(r, d.train.size());
  say("Now the same network twice, with the same recipe (", describe(recipe, fit_steps(d.train.size(), recipe)),
      ") and the same batches: once from the pretrained weights, once from the random ones pretraining started from.");
  pretrained = fine_tune(c, d.train, d, r, r.context(), "fine-tune pretrained", lesson().path("bert_mlm.npz"), true);
  scratch = fine_tune(c, d.train, d, r, r.context(), "fine-tune from scratch", "", true);
  nn::save_checkpoint(lesson().path("bert_topics.npz"), pretrained.bert->named_parameters());
  nn::save_checkpoint(lesson().path("scratch_topics.npz"), scratch.bert->named_parameters());

  const auto& pa = pretrained.history.validation_of("accuracy");
  const auto& sa = scratch.history.validation_of("accuracy");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t e = 0; e < pa.size(); ++e)
    rows.push_back(row(e + 1, fixed(pretrained.history.epoch_loss[e], 3), fixed(pa[e], 3),
                       fixed(scratch.history.epoch_loss[e], 3), fixed(sa[e], 3)));
  table({"epoch", "pretrained: training loss", "validation accuracy", "from scratch: training loss", "validation accuracy"}, rows);
  table({"model", "test accuracy"},
        {row("chance", fixed(1.0 / double(kTopics.size()), 3)), row("bag of characters, linear", fixed(bag, 3)),
         row("BERT from scratch", fixed(scratch.test_accuracy, 3)), row("BERT pretrained, fine-tuned", fixed(pretrained.test_accuracy, 3))});
  const Paired p = paired(pretrained, scratch, d.test.labels);
  say("Scored once on the ", d.test.size(), " test entries: pretrained and fine-tuned ", percent(pretrained.test_accuracy, 1),
      ", the same network from scratch ", percent(scratch.test_accuracy, 1), ", the bag of characters ", percent(bag, 1),
      ". The pretrained model alone gets ", p.only_a, " entries right, the one from scratch alone ", p.only_b,
      ": a gap of ", fixed(100 * p.gap, 1), " points. With $n$ entries on which the two disagree, chance alone moves "
      "the gap by about $\\sqrt{n}$ entries, here ", fixed(100 * p.noise, 1), " points.");
  metric("finetune_test_gap", p.gap);
  metric("finetune_test_gap_noise", p.noise);
  claim({"pretraining_pays", "finetune_test_gap > 2 * finetune_test_gap_noise",
         text("The gap is more than twice that: pretraining pays, ", fixed(100 * p.gap, 1), " points on the test entries."),
         text("The gap (", fixed(100 * p.gap, 1), " points) is not more than twice that: pretraining did not pay here."),
         Expect::either_way});
  claim({"pretraining_no_worse", "finetune_test_gap >= -2 * finetune_test_gap_noise",
         text("Nor is the pretrained start worse beyond chance: with ", d.train.size() / kTopics.size(), " labelled "
              "entries a topic the labels teach the network about as much as the pretraining did. The topics show in "
              "which words an entry uses, which the labelled entries teach well enough, and a model that restores a "
              "minority of masked characters has learned spelling more than meaning; section 3 takes labels away."),
         text("The pretrained start did worse than the random one by more than twice what chance explains (",
              fixed(-100 * p.gap, 1), " points): at this budget, pretraining cost the classifier."),
         Expect::either_way});
  metric("finetune_test_accuracy_pretrained", pretrained.test_accuracy);
  metric("finetune_test_accuracy_scratch", scratch.test_accuracy);
  metric("finetune_validation_accuracy_pretrained", pa.back());
  metric("finetune_validation_accuracy_scratch", sa.back());
  timing("finetune_seconds_pretrained", pretrained.history.seconds);
  timing("finetune_seconds_scratch", scratch.history.seconds);
  save_figure(bert::finetuning_figure(pretrained.history, scratch.history, bag, kTopics.size()), "finetuning",
              "Fine-tuning the pretrained BERT and the same network from its random start, same recipe and batches: "
              "training loss by step (means of half epochs, top) and validation accuracy after each epoch, with the "
              "bag-of-characters classifier and chance.");
  confusion(d, pretrained);
}

// The confusion matrix of the pretrained model on the test entries, and its most frequent mistake.
void confusion(const TopicData& d, const FineTuned& pretrained) {
  save_figure(confusion_figure(d.test.labels, pretrained.test_predicted, kTopics,
                               "Fine-tuned pretrained BERT: true topic (rows), predicted (columns)"),
              "confusion", "Confusion matrix of the fine-tuned pretrained model on the test entries; each row sums to 1.");
  const auto worst = nn::most_confused(d.test.labels, pretrained.test_predicted, kTopics.size(), 1);
  if (worst.empty()) return;
  const nn::Confusion& w = worst.front();
  say("Its most frequent confusion: ", kTopics[w.truth], " taken for ", kTopics[w.predicted], " (",
      percent(double(w.examples.size()) / double(d.test.size() / kTopics.size()), 0), " of the ", kTopics[w.truth],
      " test entries).");
}

// ---------------------------------------------------------------------------------------------
// 3. What pretraining buys: fewer labels.

using bert::LabelPoint;  // both starts' test accuracy, the bag's, their last training losses, the pair

// The pair of section 2 at every label count, each labelled set drawn from the same shuffle as
// section 2's (so every smaller set lies inside every larger one), on the windows pretraining read.
std::vector<LabelPoint> label_sweep(const Corpus& c, const BertSettings& r, const TopicData& d, const Reading& how,
                                    const std::string& label) {
  std::vector<LabelPoint> points;
  for (std::size_t n : bert::label_counts(r)) {
    const TopicSet labelled = data::topic_subset(d.all_train, kTopics.size(), n, seed() + 51);
    const std::size_t context = r.short_windows.context;
    const FineTuned p = fine_tune(c, labelled, d, r, context, text("pretrained, ", label, n, " a topic"),
                                  lesson().path("bert_mlm.npz"), false, how);
    const FineTuned s = fine_tune(c, labelled, d, r, context, text("from scratch, ", label, n, " a topic"), "", false, how);
    points.push_back({n, long(p.history.steps), p.test_accuracy, s.test_accuracy, bag_of_characters(c, labelled, d, context).test,
                      p.history.epoch_loss.back(), s.history.epoch_loss.back(), paired(p, s, d.test.labels)});
  }
  return points;
}

// The comparison of section 2 again with fewer labelled entries per topic.
std::vector<LabelPoint> fewer_labels(const Corpus& c, const BertSettings& r, const TopicData& d, const Paired& long_windows) {
  const std::vector<std::size_t> counts = bert::label_counts(r);
  std::vector<std::string> shown_counts;
  for (std::size_t n : counts) shown_counts.push_back(std::to_string(n));
  const std::size_t context = r.short_windows.context;
  say("Labels are what pretraining is meant to save, and ", r.finetune_per_topic, " a topic may be enough for the "
      "network to learn the topics on its own. So the same pair again with ", listing(shown_counts), " labelled "
      "entries a topic, each set drawn from the same shuffle as section 2's, so every smaller set lies inside every "
      "larger one. One more change: the encoder here was pretrained on windows of ", context - 1, " characters, and "
      "section 2's entries ran to ", r.context() - 1, ", distances its relative-position buckets never trained on (lesson "
      "12 measured what that costs). Here both starts, and the bag of characters, read what pretraining read: the "
      "first ", context - 1, " characters of an entry (a random window of that length in training). Both starts get "
      "the same batches, as before; a small set trains for more epochs, to ", r.least_steps, " steps at least (ten "
      "epochs of 25 entries would be ten steps). All are scored on the same ", d.test.size(), " test entries.");
  config("fewer_labels_context", context);
  const std::vector<LabelPoint> points = label_sweep(c, r, d, {}, "");
  std::vector<std::vector<std::string>> rows;
  std::size_t slower = 0;  // label counts at which the pretrained start ends with the higher training loss
  for (const LabelPoint& q : points) {
    rows.push_back(row(q.per_topic, q.steps, fixed(q.pretrained, 3), fixed(q.scratch, 3), fixed(100 * q.pair.gap, 1),
                       fixed(100 * 2 * q.pair.noise, 1), fixed(q.bag, 3), fixed(q.pretrained_loss, 3), fixed(q.scratch_loss, 3)));
    const std::string n = std::to_string(q.per_topic);
    metric("labels_" + n + "_test_accuracy_pretrained", q.pretrained);
    metric("labels_" + n + "_test_accuracy_scratch", q.scratch);
    metric("labels_" + n + "_test_gap", q.pair.gap);
    slower += q.pretrained_loss > q.scratch_loss;
  }
  table({"labelled entries a topic", "steps", "pretrained", "from scratch", "gap (points)", "twice its chance scale",
         "bag of characters", "last training loss, pretrained", "from scratch"}, rows);
  metric("label_counts_pretrained_trains_slower", double(slower));
  metric("label_counts", double(points.size()));
  // The fewest labels against the most: where pretraining pays, and whether it pays more with fewer.
  const LabelPoint &few = points.front(), &most = points.back();
  metric("fewest_labels_test_gap", few.pair.gap);
  metric("fewest_labels_test_gap_noise", few.pair.noise);
  metric("most_labels_test_gap", most.pair.gap);
  std::size_t paying = 0;
  for (const LabelPoint& q : points) paying += q.pair.gap > 2 * q.pair.noise;
  metric("label_counts_where_pretraining_pays", double(paying));
  claim({"pretraining_pays_with_few_labels", "fewest_labels_test_gap > 2 * fewest_labels_test_gap_noise",
         text("With ", few.per_topic, " labelled entries a topic pretraining pays: ", percent(few.pretrained, 1),
              " against ", percent(few.scratch, 1), " from scratch, a gap of ", fixed(100 * few.pair.gap, 1),
              " points, more than twice its chance scale (", fixed(100 * few.pair.noise, 1), "). What the masked "
              "characters taught, the few labels need not."),
         few.pair.gap < -2 * few.pair.noise
             ? text("With ", few.per_topic, " labelled entries a topic the pretrained start does worse than scratch by "
                    "more than twice the chance scale (", percent(few.pretrained, 1), " against ", percent(few.scratch, 1),
                    ", a gap of ", fixed(100 * few.pair.gap, 1), " points, the scale ", fixed(100 * few.pair.noise, 1),
                    "): at this pretraining budget, what the masked characters taught does not stand in for labels.")
             : text("Even with ", few.per_topic, " labelled entries a topic the gap (", fixed(100 * few.pair.gap, 1),
                    " points: ", percent(few.pretrained, 1), " against ", percent(few.scratch, 1), ") is not more than "
                    "twice its chance scale (", fixed(100 * few.pair.noise, 1), "): at this pretraining budget, what the "
                    "masked characters taught does not stand in for labels."),
         Expect::either_way});
  claim({"pays_more_with_fewer_labels", "fewest_labels_test_gap > most_labels_test_gap",
         text("Pretraining does better against scratch with ", few.per_topic, " labels a topic than with ", most.per_topic,
              " (a gap of ", fixed(100 * few.pair.gap, 1), " points against ", fixed(100 * most.pair.gap, 1), "): the more "
              "labels, the more of what pretraining might give the labels teach by themselves."),
         text("Pretraining does no better against scratch with ", few.per_topic, " labels a topic than with ",
              most.per_topic, " (a gap of ", fixed(100 * few.pair.gap, 1), " points against ", fixed(100 * most.pair.gap, 1),
              "): at this budget fewer labels do not make it count for more."),
         Expect::either_way});
  // Why: who learns the labelled entries faster, in the same steps on the same batches.
  claim({"pretrained_trains_slower", "label_counts_pretrained_trains_slower == label_counts",
         text("At every label count the pretrained start ends its training with the higher loss on its own labelled "
              "entries (the last two columns): in the same steps it fits them less well than the random start. The "
              "masked-character features are a worse place to start learning topics from than random ones, at this "
              "pretraining budget and fine-tuning rate: [CLS] never took part in pretraining, and the rest was "
              "shaped to restore characters, not to tell topics apart."),
         text("The pretrained start does not end with the higher training loss at every label count (", slower, " of ",
              points.size(), "): what it lacks on the test entries it does not lack in fitting its labelled ones."),
         Expect::either_way});
  metric("finetune_test_gap_long_windows", long_windows.gap);
  claim({"short_windows_suit_pretraining", "most_labels_test_gap > finetune_test_gap_long_windows",
         text("With all ", most.per_topic, " labels a topic, the pretrained start does better against scratch on the "
              "windows it was trained on: a gap of ", fixed(100 * most.pair.gap, 1), " points here against ", fixed(100 * long_windows.gap, 1),
              " on section 2's longer ones."),
         text("With all ", most.per_topic, " labels a topic, the pretraining windows do not help the pretrained start: "
              "a gap of ", fixed(100 * most.pair.gap, 1), " points here against ", fixed(100 * long_windows.gap, 1),
              " on section 2's longer ones."),
         Expect::either_way});
  save_figure(bert::labels_figure(bert::label_curves(points, "What pretraining buys as the labels get fewer"), kTopics.size()), "labels",
              "Top: test accuracy of the pretrained BERT fine-tuned and of the same network from scratch (same batches), "
              "and of a linear bag of characters, against the labelled entries a topic. Bottom: the gap between the "
              "two BERTs in points, between dashed lines at twice its chance scale (the square root of the entries "
              "on which they disagree); outside them, the gap is more than chance on this test set.");
  return points;
}

// ---------------------------------------------------------------------------------------------
// 4. Fine-tuning that reads what pretraining trained.

// Section 3's sweep again with the classifier on the mean of the tokens, trained alone first, for
// both starts; against section 3's `plain` points (the same labelled sets and test entries).
void read_what_pretraining_trained(const Corpus& c, const BertSettings& r, const TopicData& d, const std::vector<LabelPoint>& plain) {
  say("Two things in section 3 work against the pretrained start. The classifier reads [CLS], whose final vector "
      "pretraining never trained, while it trained every character's to say what surrounds it. And the classifier "
      "starts from random weights: its first gradients drag the pretrained encoder towards whatever lowers them "
      "before it points anywhere useful (Kumar et al. 2022 showed that this can distort pretrained features, and "
      "proposed training the classifier first: a linear probe, then fine-tuning). So the sweep once more with two changes to "
      "fine-tuning, for both starts alike so that the comparison stays fair: the classifier reads the mean of the "
      "real tokens' final vectors ([CLS] and <eos> included, padding not), and it first trains alone on the frozen "
      "encoder's output, ", describe(bert::head_first_recipe(r, kTopics.size()), r.head_first_steps), " at least; "
      "then everything trains with section 3's recipe on the same batches.");
  config({{"head_first_steps", r.head_first_steps}, {"head_first_lr", r.head_first_lr}});
  const std::vector<LabelPoint> points = label_sweep(c, r, d, {nn::Pooling::Mean, true}, "mean, classifier first, ");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const LabelPoint &q = points[i], &was = plain[i];
    rows.push_back(row(q.per_topic, fixed(q.pretrained, 3), fixed(q.scratch, 3), fixed(100 * q.pair.gap, 1),
                       fixed(100 * 2 * q.pair.noise, 1), fixed(was.pretrained, 3), fixed(was.scratch, 3)));
    const std::string at = "lpft_labels_" + std::to_string(q.per_topic);
    metric(at + "_test_accuracy_pretrained", q.pretrained);
    metric(at + "_test_accuracy_scratch", q.scratch);
    metric(at + "_test_gap", q.pair.gap);
  }
  table({"labelled entries a topic", "pretrained", "from scratch", "gap (points)", "twice its chance scale",
         "section 3: pretrained", "section 3: from scratch"}, rows);
  const bert::SweepComparison k = bert::compare_sweeps(points, plain);
  metric("lpft_label_counts_pretrained_ahead", double(k.ahead));
  metric("lpft_label_counts_over_best_scratch", double(k.over_best_scratch));
  metric("lpft_most_labels_gap_over_best_scratch", points.back().pretrained - std::max(points.back().scratch, plain.back().scratch));
  metric("lpft_mean_gap", k.mean_gap);
  metric("plain_mean_gap", k.plain_mean_gap);
  metric("lpft_pretrained_change", k.pretrained_change);
  metric("lpft_scratch_change", k.scratch_change);
  const std::string of = text(" of the ", points.size(), " label counts");
  claim({"lpft_gap_positive", "lpft_mean_gap > 0",
         text("Read this way, pretraining pays: averaged over the label counts the pretrained start is ",
              fixed(100 * k.mean_gap, 1), " points ahead, where in section 3 it was ", fixed(100 * std::abs(k.plain_mean_gap), 1),
              k.plain_mean_gap < 0 ? " points behind" : " points ahead", " (at a single count the gap passes twice its "
              "chance scale at ", k.beyond_chance, of, ")."),
         text("Even read this way, pretraining does not pay in this run: averaged over the label counts the gap is ",
              fixed(100 * k.mean_gap, 1), " points; the pretrained start is ahead at ", k.ahead, of, " (a quick run's "
              "encoder is smaller and pretrained for less: the full run is where this is expected to hold)."),
         Expect::full_run});
  claim({"lpft_pretrained_ahead_everywhere", "lpft_label_counts_pretrained_ahead == label_counts",
         "It is ahead at every one of them.",
         text("Not at every label count in this run (", k.ahead, of, "): at a single count the seed moves the gap "
              "by several points."),
         Expect::either_way});
  claim({"lpft_helps_pretrained_only", "lpft_pretrained_change > 0 and lpft_scratch_change < 0",
         text("The same two changes move the two starts apart: against section 3, averaged over the label counts, "
              "the pretrained start gains ", fixed(100 * k.pretrained_change, 1), " points of test accuracy and the "
              "random one loses ", fixed(-100 * k.scratch_change, 1), ". So part of the gap is scratch's loss: against "
              "the better of scratch's two recipes the pretrained start is ahead at ", k.over_best_scratch, of, "."),
         text("Against section 3, averaged over the label counts, the pretrained start moves ",
              fixed(100 * k.pretrained_change, 1), " points of test accuracy and the random one ",
              fixed(100 * k.scratch_change, 1), "; against the better of scratch's two recipes the pretrained start is "
              "ahead at ", k.over_best_scratch, of, "."),
         Expect::either_way});
  save_figure(bert::labels_figure(bert::label_curves(points, "The mean of the tokens, the classifier first: what pretraining buys"),
                                  kTopics.size()), "labels_head_first",
              "Section 3's figure for fine-tuning that reads the mean of the tokens' final vectors and trains the "
              "classifier alone first, for both starts: test accuracy against the labelled entries a topic (top), "
              "the gap between the two BERTs in points between dashed lines at twice its chance scale (bottom).");
}

// ---------------------------------------------------------------------------------------------
// 5. Where [CLS] looks.

// [CLS]'s attention in every layer over one held-out entry the fine-tuned model gets right.
void cls_attention(const Corpus& c, const FineTuned& f, const FineTuned& scratch, const BertSettings& r) {
  const TopicSet d = data::topic_set(c, c.split.test, kTopics);
  const bert::ExampleEntry e = bert::example_entry(d, f.test_predicted, r.context());
  const std::vector<Index>& ids = e.ids;
  const std::string& topic = kTopics[std::size_t(d.labels(e.row))];
  const std::string title = text("Where [CLS] looks in a held-out ", topic, " entry (fine-tuned model)");
  save_figure(bert::cls_attention_figure(bert::attention_input(f.bert->model, c.vocab, ids, title), title), "cls_attention",
              "The fine-tuned pretrained model's [CLS] query over a test entry it classifies correctly: each layer's "
              "weights (mean of the heads), then each head of the last layer, over the characters.");
  // Both fine-tuned models in the attention explorer (lessons/kit/explorer.hpp), with their queries and keys.
  show_explorer(bert::fine_tuned_explorer_page(f.bert->model, scratch.bert->model, c.vocab, ids, topic), "explorer",
                "The attention explorer: every head of both fine-tuned models on the same test entry; hover a "
                "character to see what it reads, click it to see its scores term by term");

  // Over every test entry: how much of [CLS]'s attention lands on the specials, on spaces and
  // punctuation, and on letters and digits, per layer, against those tokens' share of the text.
  const bert::ClsMass m = bert::cls_attention_by_kind(f.bert->model, c, d, r.context());
  table({"over the " + std::to_string(d.size()) + " test entries", "[CLS] and <eos>", "spaces and punctuation", "letters and digits"},
        bert::cls_mass_rows(m));
  metric("cls_attention_on_specials_last_layer", m.by_layer.back()[0]);
  metric("cls_attention_on_letters_last_layer", m.by_layer.back()[2]);
}

// ---------------------------------------------------------------------------------------------
// 6. What to take away.

void takeaway() {
  say("Fine-tuning puts a classifier on the [CLS] vector and trains everything on the labels; a probe trains only a "
      "linear layer on frozen features, so it measures what pretraining alone put there. Whether this run's "
      "pretraining was worth labels is the claim of section 2, measured against the same network from scratch and "
      "a bag of characters, of section 3 with fewer labels, where pretraining has the most to give, and of section 4, "
      "where fine-tuning reads what pretraining trained (the mean of the tokens) and trains the classifier before "
      "the encoder: how a pretrained model is fine-tuned decides whether its pretraining shows. The output folder "
      "keeps bert_mlm.npz (the encoder this run started from), "
      "bert_topics.npz and scratch_topics.npz (the two fine-tuned models); numpy reads them with np.load.");
}

}  // namespace

int main(int argc, char** argv) {
  LessonInfo info{"15_fine_tuning", "Fine-tuning BERT: topics of fortunes, with and without pretraining",
                  "Lesson 14's BERT fine-tuned to tell five fortune files apart, against the same network from scratch "
                  "and a bag of characters, with fewer and fewer labels, read from [CLS] and from the mean of the tokens with the "
                  "classifier trained first; linear probes on the frozen encoder; where [CLS] looks",
                  "finetune_test_accuracy_pretrained", "", {"bert_mlm.npz"}};
  info.lead_figure = "finetuning";
  return run_lesson(info, argc, argv, [] {
    const BertSettings r = bert::fine_tune_settings();
    checkpoint_from("bert_mlm.npz");  // a bad --from fails here, before any work
    const Corpus c = bert::load_corpus();
    section("1. The pretrained encoder");
    const auto bert = pretrained_encoder(c, r);
    section("2. Fine-tuning: which file is an entry from?");
    const TopicData d = bert::topic_splits(c, kTopics, r.finetune_per_topic, seed() + 51);
    FineTuned pre, scratch;
    fine_tuning(c, r, d, bert.get(), pre, scratch);
    section("3. What pretraining buys: fewer labels");
    const std::vector<LabelPoint> plain = fewer_labels(c, r, d, paired(pre, scratch, d.test.labels));
    section("4. Fine-tuning that reads what pretraining trained");
    read_what_pretraining_trained(c, r, d, plain);
    section("5. Where [CLS] looks");
    cls_attention(c, pre, scratch, r);
    section("6. What to take away");
    takeaway();
  });
}
