// Lesson 13: fine-tuning a pretrained BERT, and probing what pretraining put into it.
//
// Lesson 12 pretrained a small BERT on the characters of the Debian fortunes corpus by filling in
// masked characters. Here it earns its keep, or does not: we fine-tune it to tell which of five
// topic files an entry comes from, against the same network trained from its random start with the
// same recipe and batches and against a linear classifier on character frequencies, read the topic
// off its frozen features with linear probes, and look at where its [CLS] token attends. The topic
// sets and their batches are nn/data/cloze_corpus.
#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <memory>
#include <numeric>
#include <optional>

#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "lessons/kit/bert.hpp"
#include "lessons/kit/kit.hpp"
#include "nn/checkpoint.hpp"
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
using data::MaskedWindows;

// The split, the held-out masks, the topics, the model's sizes and phases, and how a token is shown
// are lessons/kit/bert's, as in lesson 12 (the same sizes, so that its checkpoint loads here); this
// lesson runs the first phase only when it is not given one. Fine-tuning's own settings beside them.
using bert::kHeldOutMaskSeed;
using bert::kTopics;
using bert::Phase;
using bert::shown;
using bert::shown_text;
using Corpus = data::ClozeCorpus;
using data::entry_ids;
using data::one_line_entry;

struct BertSettings : bert::ModelSettings {
  int finetune_epochs;
  std::size_t finetune_batch;
  double finetune_lr;
  std::size_t finetune_per_topic;  // training entries per topic at most (0: all the split has)
};

BertSettings settings() {
  return {bert::model_settings(), full_or_quick(10, 6), 32, full_or_quick(5e-4, 1e-3), full_or_quick<std::size_t>(100, 60)};
}

using data::TopicSet;

// ---------------------------------------------------------------------------------------------
// 1. The pretrained encoder.

// Lesson 12's pretrained model when --from names its output folder; otherwise the same model
// pretrained here with lesson 12's first phase (windows of 31 characters). Saved as bert_mlm.npz.
std::unique_ptr<nn::MaskedLM<F>> pretrained_encoder(const Corpus& c, const BertSettings& r) {
  auto bert = bert::new_model(c, r);
  const std::string from = checkpoint_from("bert_mlm.npz");
  if (!from.empty()) {
    nn::load_checkpoint(from, bert->named_parameters());
    config("pretrained_from", from);
    say("The encoder is lesson 12's pretrained BERT, read from ", from, ": ", bert->parameter_count(), " parameters, $d = ",
        r.d_model, "$, ", r.layers, " layers of ", r.heads, " heads.");
  } else {
    const Phase& ph = r.short_windows;
    Recipe recipe;
    recipe.label = text("pretraining, ", ph.context - 1, " characters"), recipe.epochs = ph.epochs, recipe.batch = ph.batch;
    recipe.lr = r.pretrain_lr, recipe.weight_decay = 0.01, recipe.beta2 = 0.98, recipe.warmup = 0.05;
    recipe.decay = Decay::cosine, recipe.floor = 0.05, recipe.clip = 1.0, recipe.seed = seed();
    Generator windows(seed() + 21), masks(seed() + 22);
    nn::MaskedLM<F>& b = *bert;
    const History h = train(b, ph.windows, [&](const std::vector<std::size_t>& rows) {
      const data::MaskedWindows w = data::masked_windows(
          c.ids, c.train, data::random_starts(rows.size(), c.train.size(), ph.context, windows), ph.context, masks);
      return cross_entropy(b.forward(w.ids, w.real, w.positions), w.targets);
    }, recipe);
    timing("pretrain_seconds", h.seconds);
    const auto test = data::held_out_windows(c.ids, c.test, ph.context, full_or_quick<std::size_t>(2000, 600), 64, kHeldOutMaskSeed);
    const data::CountedCloze counted(c.train, c.ids.first, c.ids.end);
    const ClozeScores s = bert::score(b, test), uni = counted.score_unigram(test);
    metric("mlm_test_accuracy_masked", s.accuracy_on(MaskChoice::masked));
    metric("unigram_test_accuracy_masked", uni.accuracy_on(MaskChoice::masked));
    say("Without --from (lesson 12's output folder) this lesson pretrains the encoder itself, as lesson 12's first "
        "phase does: the 80/10/10 rule on windows of ", ph.context - 1, " characters of the training entries, ",
        describe(recipe, fit_steps(ph.windows, recipe)), ". Its pretraining shows in the masked characters of held-out "
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

struct TopicData {
  TopicSet train, validation, test;
};

// Class probabilities (N, K) of every entry of a set, from their beginnings.
Array<F> topic_probabilities(nn::EncoderModel<F>& model, const TopicSet& s, std::size_t context) {
  model.eval();
  return rows_in_batches(s.size(), 64, [&](const std::vector<std::size_t>& rows) {
    const data::TopicBatch b = data::topic_batch(s, rows, context, nullptr);
    return softmax(model.forward(b.ids, b.real), -1).value();
  });
}

struct FineTuned {
  std::unique_ptr<nn::MaskedLM<F>> bert;
  History history;
  IndexArray test_predicted;
  double test_accuracy = 0;
};

// The same recipe for both starts: AdamW, a 10 % warm-up then a cosine decay, the same epochs and
// the same batches.
Recipe finetune_recipe(const BertSettings& r) {
  Recipe f;
  f.epochs = r.finetune_epochs, f.batch = r.finetune_batch, f.lr = r.finetune_lr, f.weight_decay = 0.01;
  f.warmup = 0.1, f.decay = Decay::cosine, f.floor = 0.05, f.clip = 1.0, f.seed = seed() + 31;
  return f;
}

FineTuned fine_tune(const Corpus& c, const TopicData& d, const BertSettings& r, const std::string& label,
                    const std::string& pretrained_weights) {
  FineTuned f{bert::new_model(c, r), {}, {}, 0};
  if (!pretrained_weights.empty()) nn::load_checkpoint(pretrained_weights, f.bert->named_parameters());
  nn::EncoderModel<F>& model = f.bert->model;
  Recipe recipe = finetune_recipe(r);
  recipe.label = label;
  recipe.validate = [&] { return class_scores(topic_probabilities(model, d.validation, r.context()), d.validation.labels); };
  Generator crop(seed() + 32);
  f.history = train(model, d.train.size(), [&](const std::vector<std::size_t>& rows) {
    const data::TopicBatch b = data::topic_batch(d.train, rows, r.context(), &crop);
    return cross_entropy(model.forward(b.ids, b.real), b.labels);
  }, recipe);
  f.test_predicted = nn::argmax_last(topic_probabilities(model, d.test, r.context()));
  f.test_accuracy = nn::accuracy(f.test_predicted, d.test.labels);
  return f;
}

// A linear classifier on fixed features (N, k), standardized with the training set's means and
// spreads, trained to convergence: full-batch AdamW, weight decay 0.05. Returns its validation
// and test accuracy.
struct LinearClassifier : nn::Module<F> {
  LinearClassifier(std::size_t features, Generator& gen) : linear(features, kTopics.size(), gen) {
    register_module("linear", linear);
  }
  nn::Linear<F> linear;
};

struct ProbeScores {
  double validation = 0, test = 0;
};

constexpr int kProbeSteps = 300;

ProbeScores linear_probe(Array<F> train, Array<F> validation, Array<F> test, const TopicData& d, const std::string& label) {
  const Array<F> mu = xt::mean(train, {0});
  const Array<F> sd = xt::sqrt(xt::mean(xt::square(train - mu), {0})) + F(1e-3);
  for (Array<F>* a : {&train, &validation, &test}) *a = (*a - mu) / sd;
  Generator gen(seed() + 41);
  LinearClassifier probe(train.shape()[1], gen);
  Recipe recipe;  // full-batch AdamW at a constant rate, to convergence
  recipe.label = label, recipe.epochs = full_or_quick(kProbeSteps, kProbeSteps / 3), recipe.batch = 0;
  recipe.lr = 1e-2, recipe.weight_decay = 0.05, recipe.decay = Decay::constant, recipe.clip = 0, recipe.seed = seed();
  lessons::train(probe, d.train.size(), [&](const std::vector<std::size_t>& rows) {
    return cross_entropy(probe.linear(Tensor<F>(data::take_rows(train, rows))), data::take_rows(d.train.labels, rows));
  }, recipe);
  NoGrad no_grad;
  const auto accuracy = [&](const Array<F>& x, const IndexArray& y) {
    return nn::accuracy(nn::argmax_last(probe.linear(Tensor<F>(x)).value()), y);
  };
  return {accuracy(validation, d.validation.labels), accuracy(test, d.test.labels)};
}

// A frozen encoder's output for every entry: [CLS]'s final vector, or the mean of the real tokens'.
Array<F> encoder_features(nn::EncoderModel<F>& model, const TopicSet& s, std::size_t context, bool mean_of_tokens) {
  model.eval();
  const std::size_t d = model.config().layer.d_model;
  return rows_in_batches(s.size(), 64, [&](const std::vector<std::size_t>& rows) {
    const data::TopicBatch b = data::topic_batch(s, rows, context, nullptr);
    const Array<F> h = model.features(b.ids, b.real).value();  // (B, L, d)
    Array<F> f = xt::zeros<F>({rows.size(), d});
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::size_t n = 0;
      for (std::size_t l = 0; l < h.shape()[1]; ++l) {
        if (mean_of_tokens ? !b.real.mask()(i, l) : l > 0) continue;
        xt::view(f, i) += xt::view(h, i, l);
        ++n;
      }
      xt::view(f, i) /= F(std::max<std::size_t>(n, 1));
    }
    return f;
  });
}

double bag_of_characters(const Corpus& c, const TopicData& d, const BertSettings& r) {
  const ProbeScores s = linear_probe(data::character_frequencies(d.train, c.vocab.size(), r.context()), data::character_frequencies(d.validation, c.vocab.size(), r.context()),
                                     data::character_frequencies(d.test, c.vocab.size(), r.context()), d, "bag of characters");
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
      nn::EncoderModel<F>& e = m->model;
      const ProbeScores s = linear_probe(encoder_features(e, d.train, r.context(), mean),
                                         encoder_features(e, d.validation, r.context(), mean),
                                         encoder_features(e, d.test, r.context(), mean), d, "probe");
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

void fine_tuning(const Corpus& c, const BertSettings& r, nn::MaskedLM<F>* bert, FineTuned& pretrained, FineTuned& scratch) {
  TopicData d{data::topic_set(c, c.split.train, kTopics, r.finetune_per_topic), data::topic_set(c, c.split.validation, kTopics),
              data::topic_set(c, c.split.test, kTopics)};
  say("The task: which of ", listing(kTopics), " does an entry come from? Each split keeps the same number of "
      "entries of every topic, so chance is ", percent(1.0 / double(kTopics.size()), 0), ": ", d.train.size(),
      " training entries (", d.train.size() / kTopics.size(), " per topic: labels are what costs, and what pretraining "
      "is meant to save), ", d.validation.size(), " validation and ", d.test.size(), " test entries (the rarest "
      "topic's count in those splits). The test entries were held out of pretraining too. The classifier reads the "
      "[CLS] token's vector after the last layer; in pretraining [CLS] was never a target, so whatever it gathers "
      "it learns now.");
  config({{"topics", kTopics}, {"finetune_epochs", r.finetune_epochs}, {"finetune_batch", r.finetune_batch},
          {"finetune_peak_lr", r.finetune_lr}});
  const double bag = bag_of_characters(c, d, r);
  frozen_probes(c, d, r, *bert);
  const Recipe recipe = finetune_recipe(r);
  say("Now the same network twice, with the same recipe (", describe(recipe, fit_steps(d.train.size(), recipe)),
      ") and the same batches: once from the pretrained weights, once from the random ones pretraining started from.");
  pretrained = fine_tune(c, d, r, "fine-tune pretrained", lesson().path("bert_mlm.npz"));
  scratch = fine_tune(c, d, r, "fine-tune from scratch", "");
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
  // Where the two disagree: entries only one of them gets right (a paired look at one test set).
  std::size_t only_pretrained = 0, only_scratch = 0;
  for (std::size_t i = 0; i < d.test.size(); ++i) {
    const bool p_right = pretrained.test_predicted(i) == d.test.labels(i), s_right = scratch.test_predicted(i) == d.test.labels(i);
    only_pretrained += p_right && !s_right;
    only_scratch += s_right && !p_right;
  }
  const double gap = pretrained.test_accuracy - scratch.test_accuracy;
  // With n entries on which the two disagree, chance alone moves the gap by about sqrt(n) entries.
  const double noise = std::sqrt(double(only_pretrained + only_scratch)) / double(d.test.size());
  say("Scored once on the ", d.test.size(), " test entries: pretrained and fine-tuned ", percent(pretrained.test_accuracy, 1),
      ", the same network from scratch ", percent(scratch.test_accuracy, 1), ", the bag of characters ", percent(bag, 1),
      ". The pretrained model alone gets ", only_pretrained, " entries right, the one from scratch alone ", only_scratch,
      ": a gap of ", fixed(100 * gap, 1), " points. With $n$ entries on which the two disagree, chance alone moves "
      "the gap by about $\\sqrt{n}$ entries, here ", fixed(100 * noise, 1), " points.");
  metric("finetune_test_gap", gap);
  metric("finetune_test_gap_noise", noise);
  claim({"pretraining_pays", "finetune_test_gap > 2 * finetune_test_gap_noise",
         text("The gap is more than twice that: pretraining pays, ", fixed(100 * gap, 1), " points on the test entries."),
         text("The gap (", fixed(100 * gap, 1), " points) is not more than twice that: pretraining did not pay here."),
         Expect::either_way});
  claim({"pretraining_no_worse", "finetune_test_gap >= -2 * finetune_test_gap_noise",
         text("Nor is the pretrained start worse beyond chance: at this pretraining budget the labels teach the network "
              "about as much as the pretraining did. The topics show in which words an entry uses, which the labelled "
              "entries teach well enough, and a model that restores a minority of masked characters has learned "
              "spelling more than meaning; BERT's gains came from pretraining thousands of times longer."),
         text("The pretrained start did worse than the random one by more than twice what chance explains (",
              fixed(-100 * gap, 1), " points): at this budget, pretraining cost the classifier."),
         Expect::either_way});
  metric("finetune_test_accuracy_pretrained", pretrained.test_accuracy);
  metric("finetune_test_accuracy_scratch", scratch.test_accuracy);
  metric("finetune_validation_accuracy_pretrained", pa.back());
  metric("finetune_validation_accuracy_scratch", sa.back());
  timing("finetune_seconds_pretrained", pretrained.history.seconds);
  timing("finetune_seconds_scratch", scratch.history.seconds);

  plots::Figure fig(1800, 1900, 2, 1);
  fig.title("Fine-tuning on five topics: pretrained against from scratch");
  const auto by_step = [](const History& h) { return windowed(h.loss, std::max<std::size_t>(1, h.steps_per_epoch / 2)); };
  const Windowed wp = by_step(pretrained.history), ws = by_step(scratch.history);
  plots::LineOptions training_style;
  plots::line_plot(fig.panel(0).title("Training loss").xlabel("step").ylabel("cross-entropy"),
                   {curve("pretrained", wp.x, wp.y), curve("from scratch", ws.x, ws.y)}, training_style);
  plots::LineOptions lo;
  lo.markers = true;
  lo.ymin = 0.0;
  lo.ymax = 1.0;
  std::vector<double> x(pa.size());
  std::iota(x.begin(), x.end(), 1.0);
  plots::Series chance = curve("chance", {1.0, double(pa.size())}, {1.0 / double(kTopics.size()), 1.0 / double(kTopics.size())});
  chance.dashed = true;
  chance.color = plots::Color{0.6, 0.6, 0.6};
  plots::Series bag_line = curve("bag of characters (test)", {1.0, double(pa.size())}, {bag, bag});
  bag_line.dashed = true;
  bag_line.color = plots::series_color(2);
  plots::line_plot(fig.panel(1).title("Validation accuracy").xlabel("epoch").ylabel("accuracy"),
                   {curve("pretrained", x, pa), curve("from scratch", x, sa), bag_line, chance}, lo);
  save_figure(fig, "finetuning",
              "Fine-tuning the pretrained BERT and the same network from its random start, same recipe and batches: "
              "training loss by step (means of half epochs, top) and validation accuracy after each epoch, with the "
              "bag-of-characters classifier and chance.");

  // The confusion matrix of the pretrained model on the test entries.
  const std::size_t K = kTopics.size();
  const Array<double> confusion = nn::confusion_rates(d.test.labels, pretrained.test_predicted, K);
  plots::Figure cf(1800, 1500);
  cf.title("Pretrained BERT, fine-tuned: true topic (rows) against predicted (columns), test entries");
  confusion_panel(cf.panel(0), confusion, kTopics, "share of the true topic");
  save_figure(cf, "confusion", "Confusion matrix of the fine-tuned pretrained model on the test entries; each row sums to 1.");
  std::size_t worst_t = 0, worst_p = 1;
  for (std::size_t t = 0; t < K; ++t)
    for (std::size_t q = 0; q < K; ++q)
      if (t != q && confusion(t, q) > confusion(worst_t, worst_p)) worst_t = t, worst_p = q;
  say("Its most frequent confusion: ", kTopics[worst_t], " taken for ", kTopics[worst_p], " (",
      percent(confusion(worst_t, worst_p), 0), " of the ", kTopics[worst_t], " test entries).");
}

// ---------------------------------------------------------------------------------------------
// 3. Where [CLS] looks.

// Runs one sequence through a model and returns each layer's weights (h, L, L).
std::vector<xt::xarray<double>> attention_on(nn::EncoderModel<F>& model, const std::vector<Index>& ids) {
  NoGrad no_grad;
  model.eval();
  model.features(xt::adapt(ids, {std::size_t(1), ids.size()}));
  std::vector<xt::xarray<double>> out;
  for (const Tensor<F>& w : model.attention_weights()) out.push_back(xt::cast<double>(xt::view(w.value(), 0)));
  return out;
}

// [CLS]'s attention in every layer over one held-out entry the fine-tuned model gets right.
void cls_attention(const Corpus& c, const FineTuned& f, const BertSettings& r) {
  const TopicSet d = data::topic_set(c, c.split.test, kTopics);
  std::optional<std::size_t> pick;
  for (std::size_t i = 0; i < d.size() && !pick; ++i)
    if (d.entries[i].size() >= 24 && d.entries[i].size() <= 40 && f.test_predicted(i) == d.labels(i)) pick = i;
  if (!pick) pick = 0;
  std::vector<Index> ids = d.entries[*pick];
  if (ids.size() > r.context()) ids.resize(r.context());
  const auto layers = attention_on(f.bert->model, ids);
  const std::size_t L = layers.size(), H = layers[0].shape()[0];
  xt::xarray<double> rows = xt::zeros<double>({L + H, ids.size()});
  std::vector<std::string> labels, cells;
  for (std::size_t l = 0; l < L; ++l) {
    xt::view(rows, l) = xt::mean(xt::view(layers[l], xt::all(), 0, xt::all()), {0});
    labels.push_back(text("layer ", l + 1, " (mean of heads)"));
  }
  for (std::size_t h = 0; h < H; ++h) {
    xt::view(rows, L + h) = xt::view(layers[L - 1], h, 0, xt::all());
    labels.push_back(text("layer ", L, ", head ", h + 1));
  }
  for (std::size_t k = 0; k < L + H; ++k)
    for (Index id : ids) cells.push_back(shown(c.vocab, id));
  plots::HeatmapOptions ho;
  ho.cell_text = cells;
  ho.y_labels = labels;
  ho.x_labels = number_labels(ids.size(), 10);
  ho.colorbar_label = "attention weight of [CLS]";
  ho.cmap = plots::Colormap::reds();
  HeatmapFigureOptions hs;
  hs.title = text("Where [CLS] looks in a held-out ", kTopics[std::size_t(d.labels(*pick))], " entry (fine-tuned model)");
  hs.xlabel = "position";
  hs.width = 2000;
  hs.height = int(400 + 1800 / ids.size() * (L + H));
  save_figure(heatmap_figure(rows, ho, hs), "cls_attention",
              "The fine-tuned pretrained model's [CLS] query over a test entry it classifies correctly: each layer's "
              "weights (mean of the heads), then each head of the last layer, over the characters.");

  // Over every test entry: how much of [CLS]'s attention lands on the specials, on spaces and
  // punctuation, and on letters and digits, per layer, against those tokens' share of the text.
  std::vector<std::array<double, 3>> mass(L, std::array<double, 3>{});
  std::array<double, 3> share{};
  const auto kind = [&](Index id) {
    if (id < c.ids.first || id >= c.ids.end) return 0;
    const std::string& t = c.vocab.token(id);
    return (t.size() == 1 && std::isalnum(static_cast<unsigned char>(t[0]))) ? 2 : 1;
  };
  for (std::size_t i = 0; i < d.size(); ++i) {
    std::vector<Index> e = d.entries[i];
    if (e.size() > r.context()) e.resize(r.context());
    const auto a = attention_on(f.bert->model, e);
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t j = 0; j < e.size(); ++j)
        mass[l][std::size_t(kind(e[j]))] += xt::mean(xt::view(a[l], xt::all(), 0, j))() / double(d.size());
    for (Index id : e) share[std::size_t(kind(id))] += 1.0 / double(e.size()) / double(d.size());
  }
  std::vector<std::vector<std::string>> table_rows = {
      row("share of the tokens", percent(share[0], 1), percent(share[1], 1), percent(share[2], 1))};
  for (std::size_t l = 0; l < L; ++l)
    table_rows.push_back(row(text("layer ", l + 1, ": [CLS]'s attention"), percent(mass[l][0], 1), percent(mass[l][1], 1),
                             percent(mass[l][2], 1)));
  table({"over the " + std::to_string(d.size()) + " test entries", "[CLS] and <eos>", "spaces and punctuation", "letters and digits"},
        table_rows);
  metric("cls_attention_on_specials_last_layer", mass[L - 1][0]);
  metric("cls_attention_on_letters_last_layer", mass[L - 1][2]);
}

// ---------------------------------------------------------------------------------------------
// 4. What to take away.

void takeaway() {
  say("Fine-tuning puts a classifier on the [CLS] vector and trains everything on the labels; a probe trains only a "
      "linear layer on frozen features, so it measures what pretraining alone put there. Whether this run's "
      "pretraining was worth labels is the claim of section 2, measured against the same network from scratch and "
      "a bag of characters. The output folder keeps bert_mlm.npz (the encoder this run started from), "
      "bert_topics.npz and scratch_topics.npz (the two fine-tuned models); numpy reads them with np.load.");
}

}  // namespace

int main(int argc, char** argv) {
  LessonInfo info{"13_fine_tuning", "Fine-tuning BERT: topics of fortunes, with and without pretraining",
                  "Lesson 12's BERT fine-tuned to tell five fortune files apart, against the same network from scratch "
                  "and a bag of characters; linear probes on the frozen encoder; where [CLS] looks",
                  "finetune_test_accuracy_pretrained", "", {"bert_mlm.npz"}};
  info.lead_figure = "finetuning";
  return run_lesson(info, argc, argv, [] {
    const BertSettings r = settings();
    checkpoint_from("bert_mlm.npz");  // a bad --from fails here, before any work
    const Corpus c = bert::load_corpus();
    section("1. The pretrained encoder");
    const auto bert = pretrained_encoder(c, r);
    section("2. Fine-tuning: which file is an entry from?");
    FineTuned pre, scratch;
    fine_tuning(c, r, bert.get(), pre, scratch);
    section("3. Where [CLS] looks");
    cls_attention(c, pre, r);
    section("4. What to take away");
    takeaway();
  });
}
