// Lesson 10: training a Transformer stably: label smoothing, the place of the layer norm, the warm-up.
//
// Lesson 08 trained an encoder-decoder Transformer on a toy translation with the paper's recipe:
// post-norm layers, label smoothing 0.1, and the Noam schedule with its linear warm-up. Here each
// of those choices is taken away in turn, everything else equal (the same initial weights, the
// same batches), and we measure what changes: the model's confidence against its accuracy without
// smoothing; and, for post-norm and pre-norm layers, the training loss with and without the
// warm-up, at the lesson's learning rate and at twice it.
#include <algorithm>
#include <cmath>

#include "lessons/kit/explorer.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/translation_model.hpp"
#include "lessons/kit/translation_setup.hpp"
#include "nn/data/translation_task.hpp"
#include "nn/transformer/seq2seq.hpp"
#include "nn/translate.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

using Transformer = nn::Seq2SeqTransformer<float>;
constexpr Index kPad = data::Vocab::pad;

// Lesson 08's task and model sizes (lessons/kit/translation_setup.hpp: the same sentences, split and
// first draws), without its longer split, which this lesson does not use; the budgets of its runs.
struct Plan : TranslationPlan {
  int smoothing_epochs;  // each of the two label-smoothing runs
  int ablation_epochs;   // each of the eight norm and warm-up runs
  double peak;           // Noam's peak, d^-1/2 w^-1/2 at the full run's w = 400
};

Plan make_plan() {
  Plan p;
  p.sentences = full_or_quick<std::size_t>(30000, 4000);
  p.words_per_class = full_or_quick<std::size_t>(0, 10);
  p.smoothing_epochs = epochs(5, 6);
  p.ablation_epochs = full_or_quick(2, 1);
  p.batch = full_or_quick<std::size_t>(64, 32);
  p.warmup = full_or_quick<long>(400, 50);  // the quick run warms up over fewer steps to the same peak
  p.peak = 1.0 / std::sqrt(double(p.d_model) * 400.0);
  config({{"sentences_generated", p.sentences}, {"words_per_class", p.words_per_class}, {"d_model", p.d_model},
          {"heads", p.heads}, {"d_ff", p.d_ff}, {"layers", p.layers}, {"smoothing_epochs", p.smoothing_epochs},
          {"ablation_epochs", p.ablation_epochs}, {"batch", p.batch}, {"warmup", p.warmup}, {"peak_lr", p.peak}});
  return p;
}

// One training of the Transformer: which norm placement, schedule, smoothing, rate.
struct Arm {
  std::string name, key;
  bool pre_norm = false, warmup = true;
  double smoothing = 0.1, lr_scale = 1.0;
  int epochs = 1;
};

struct Trained {
  std::unique_ptr<Transformer> model;
  History history;
};

// Lesson 08's Transformer and recipe (Adam with beta2 0.98 and eps 1e-9, the Noam schedule, gradients
// clipped at norm 1), at this arm's norm placement, peak and epochs, no checkpoint; without the
// warm-up, the schedule's peak from step 1 (Decay::inverse_sqrt_no_warmup). Every arm starts from
// lesson 08's first draw and sees its batches.
Trained train_arm(const Plan& p, const data::TranslationTask& t, const Arm& a) {
  nn::Seq2SeqConfig c = translation_transformer_config(p, t);
  c.layer.norm_first = a.pre_norm;
  Generator gen(seed() + 3);
  Trained out{std::make_unique<Transformer>(c, gen), {}};
  Transformer& m = *out.model;
  Recipe r = translation_transformer_recipe(p);
  r.label = a.name, r.epochs = a.epochs, r.lr = p.peak * a.lr_scale, r.checkpoint.clear();
  if (!a.warmup) r.decay = Decay::inverse_sqrt_no_warmup;
  r.validate = [&] {
    const nn::TokenScores s = nn::teacher_forced_scores(m, t.validation, a.smoothing);
    return Scores{{"loss", s.loss}, {"nll", s.nll}};
  };
  CrossEntropyOptions ce;
  ce.ignore_index = kPad, ce.label_smoothing = a.smoothing;
  out.history = train(m, t.train.size(), [&](const std::vector<std::size_t>& rows) {
    const data::Seq2SeqBatch b = data::make_seq2seq_batch(t.train, rows, /*source_eos=*/false);
    return cross_entropy(m.forward(b.source.ids, b.decoder_input.ids, b.source.allowed(), b.decoder_input.allowed()),
                         b.decoder_target.ids, ce);
  }, r);
  return out;
}

double bleu_of(Transformer& m, const data::EncodedPairs& split) {
  return nn::corpus_bleu(nn::translate(m, split), split.target).score;
}

// ---------------------------------------------------------------------------------------------
// 1. Label smoothing.

void label_smoothing(const Plan& p, const data::TranslationTask& t) {
  say("The task, the model and the recipe of lesson 08: ", t.train.size(), " training sentences of the toy "
      "translation, a post-norm encoder-decoder with ", p.layers, " + ", p.layers, " layers, $d = ", p.d_model, "$. "
      "Label smoothing with $\\varepsilon$ trains towards $q = (1 - \\varepsilon)\\,\\mathrm{onehot} + \\varepsilon / V$ "
      "instead of the one-hot target. Two models, the same initial weights and batches, trained ", p.smoothing_epochs,
      " epochs with $\\varepsilon = 0$ and $\\varepsilon = 0.1$, then scored on the test sentences: BLEU of greedy "
      "translations, and teacher-forced, the share of words whose first choice is right (accuracy) and the mean "
      "probability the model gives its first choice (confidence).");
  Trained plain = train_arm(p, t, {"no smoothing", "ls0", false, true, 0.0, 1.0, p.smoothing_epochs});
  Trained smoothed = train_arm(p, t, {"smoothing 0.1", "ls01", false, true, 0.1, 1.0, p.smoothing_epochs});
  const nn::TokenScores a = nn::teacher_forced_scores(*plain.model, t.test),
                        b = nn::teacher_forced_scores(*smoothed.model, t.test);
  const double bleu_a = bleu_of(*plain.model, t.test), bleu_b = bleu_of(*smoothed.model, t.test);
  table({"$\\varepsilon$", "BLEU test", "word accuracy", "confidence", "test cross-entropy"},
        {row("0", fixed(bleu_a, 4), fixed(a.accuracy, 4), fixed(a.confidence, 4), fixed(a.nll, 4)),
         row("0.1", fixed(bleu_b, 4), fixed(b.accuracy, 4), fixed(b.confidence, 4), fixed(b.nll, 4))});
  metric("ls0_bleu_test", bleu_a);
  metric("ls01_bleu_test", bleu_b);
  metric("ls0_confidence", a.confidence);
  metric("ls0_accuracy", a.accuracy);
  metric("ls01_confidence", b.confidence);
  metric("ls01_accuracy", b.accuracy);
  metric("ls0_overconfidence", a.confidence - a.accuracy);
  metric("ls01_overconfidence", b.confidence - b.accuracy);
  claim({"smoothing_lowers_confidence", "ls01_confidence < ls0_confidence - 0.02",
         text("Smoothing pulls the model away from certainty: its first choice gets ", fixed(b.confidence, 3),
              " of the probability on average, against ", fixed(a.confidence, 3), " without."),
         text("Smoothing barely changes the confidence: ", fixed(b.confidence, 3), " against ", fixed(a.confidence, 3),
              " without.")});
  claim({"smoothing_less_overconfident", "abs(ls01_overconfidence) < abs(ls0_overconfidence)",
         text("Against the accuracy, the smoothed model is the better calibrated: confidence minus accuracy is ",
              fixed(b.confidence - b.accuracy, 3), " against ", fixed(a.confidence - a.accuracy, 3), " (0: calibrated "
              "on average; below 0: under-confident)."),
         text("Against the accuracy, the smoothed model is not the better calibrated: confidence minus accuracy is ",
              fixed(b.confidence - b.accuracy, 3), " against ", fixed(a.confidence - a.accuracy, 3), " without "
              "smoothing (0: calibrated on average; below 0: under-confident)."),
         Expect::either_way});
  claim({"smoothing_keeps_bleu", "abs(ls01_bleu_test - ls0_bleu_test) < 0.02",
         text("The translations are as good either way: BLEU ", fixed(bleu_b, 3), " with smoothing, ", fixed(bleu_a, 3),
              " without."),
         text("BLEU differs by more than 0.02: ", fixed(bleu_b, 3), " with smoothing, ", fixed(bleu_a, 3), " without."),
         Expect::either_way});
  plots::Figure fig(1600, 1000);
  fig.title("Label smoothing 0 against 0.1: held-out scores");
  bar_panel(fig.panel(0).ylabel("score"), {"BLEU test", "word accuracy", "confidence"},
            {{"smoothing 0", {bleu_a, a.accuracy, a.confidence}}, {"smoothing 0.1", {bleu_b, b.accuracy, b.confidence}}},
            3, 1.05);
  save_figure(fig, "ablation_smoothing", "Held-out BLEU, word accuracy and confidence with and without label smoothing.");
  // Both models' cross-attention side by side in the attention explorer (lessons/kit/explorer.hpp).
  const data::EncodedPairs shown = nn::spread_evenly(t.test, 3);
  ExplorerPage page{"Lesson 10: cross-attention with and without label smoothing", "target words", "source words",
                    "The two models of section 1 on three test sentences, teacher-forced on the reference translation. "
                    "Each target word draws lines to the source words its decoder read while predicting it; the layers "
                    "of the model trained without smoothing come first, then the smoothed model's. Hover a word to "
                    "read its weights, click it for the neuron view.", {}};
  for (std::size_t i = 0; i < shown.size(); ++i) {
    AttentionInput none = translated_sentence_input(*plain.model, shown, i, t.source_vocab, t.target_vocab);
    const std::string name = none.name;
    page.inputs.push_back(side_by_side(name, {{"ε = 0", std::move(none)},
        {"ε = 0.1", translated_sentence_input(*smoothed.model, shown, i, t.source_vocab, t.target_vocab)}}));
  }
  show_explorer(page, "explorer", "The attention explorer: the cross-attention of the models trained with and without "
                                  "label smoothing, side by side, on three test sentences");
}

// ---------------------------------------------------------------------------------------------
// 2. The norm's place and the warm-up.

// How unsteady a loss curve is: the largest rise of the mean loss over windows of `window` steps
// above the lowest mean before it (0 for a curve that only falls).
double largest_rise(const std::vector<double>& loss, std::size_t window) {
  const Windowed w = windowed(loss, window);
  double lowest = 1e300, rise = 0;
  for (double v : w.y) rise = std::max(rise, v - lowest), lowest = std::min(lowest, v);
  return rise;
}

void norm_and_warmup(const Plan& p, const data::TranslationTask& t) {
  say("Post-norm puts the layer norm after each residual sum, $x \\leftarrow \\mathrm{LayerNorm}(x + f(x))$, so the "
      "gradient that reaches a lower layer has passed through every norm above it. Pre-norm, $x \\leftarrow x + "
      "f(\\mathrm{LayerNorm}(x))$, keeps an identity path from the loss to the embeddings. The usual account (Xiong et "
      "al. 2020) is that post-norm needs the warm-up and pre-norm does not. The Noam schedule is $$\\eta(s) = \\eta_{"
      "\\max} \\min\\left(s / w,\\; \\sqrt{w / s}\\right),$$ a linear rise over $w = ", p.warmup, "$ steps to $\\eta_{\\max} = ",
      fixed(p.peak, 5), "$; without the warm-up, $\\eta(s) = \\eta_{\\max} \\min(1, \\sqrt{w / s})$: the peak from the "
      "first step, then the same decay. We train the four combinations for ", p.ablation_epochs,
      p.ablation_epochs == 1 ? " epoch" : " epochs", " each, everything else equal, at $\\eta_{\\max}$ and at "
      "$2\\eta_{\\max}$.");
  std::vector<Arm> arms;
  for (double scale : {1.0, 2.0})
    for (bool pre : {false, true})
      for (bool warm : {true, false})
        arms.push_back({text(pre ? "pre-norm" : "post-norm", warm ? ", warm-up" : ", no warm-up"),
                        text(pre ? "pre" : "post", warm ? "_warmup" : "_nowarmup", scale == 1.0 ? "_lr1" : "_lr2"), pre,
                        warm, 0.1, scale, p.ablation_epochs});
  std::vector<Trained> runs;
  for (const Arm& a : arms) {
    Arm named = a;
    named.name = text(a.name, ", lr x", int(a.lr_scale));
    runs.push_back(train_arm(p, t, named));
  }
  const std::size_t steps = runs.front().history.steps, window = std::max<std::size_t>(1, steps / 40);
  const std::size_t early = std::min<std::size_t>(steps, std::size_t(p.warmup));
  std::vector<std::vector<std::string>> rows;
  for (int panel = 0; panel < 2; ++panel) {
    std::vector<plots::Series> series;
    for (std::size_t i = 0; i < arms.size(); ++i) {
      const Arm& a = arms[i];
      if ((a.lr_scale == 2.0) != (panel == 1)) continue;
      const History& h = runs[i].history;
      const double early_loss = mean_over(h.loss, 0, early), rise = largest_rise(h.loss, window);
      const double val = h.validation_of("loss").back(), b = bleu_of(*runs[i].model, t.test);
      rows.push_back(row(text("×", int(a.lr_scale)), a.name, fixed(early_loss, 3), fixed(rise, 3), fixed(val, 3), fixed(b, 4)));
      const Windowed w = windowed(h.loss, window);
      series.push_back(curve(a.name, w.x, w.y));
      metric("ablation_" + a.key + "_early_loss", early_loss);
      metric("ablation_" + a.key + "_largest_rise", rise);
      metric("ablation_" + a.key + "_validation_loss", val);
      metric("ablation_" + a.key + "_bleu_test", b);
    }
    LineFigureOptions lo{text("Training loss, peak learning rate ", fixed((panel + 1) * p.peak, 4),
                              panel ? " (twice)" : "", window > 1 ? text(" (means of ", window, " steps)") : ""),
                         "training step", "label-smoothed loss (nats per word)"};
    save_figure(line_figure(series, lo), panel ? "ablation_norm_lr2" : "ablation_norm_lr1",
                text("Training loss by step of post-norm and pre-norm, with and without warm-up, at ",
                     panel ? "twice the peak learning rate" : "the peak learning rate of lesson 08", "."));
  }
  table({"rate", "recipe", text("mean loss, first ", early, " steps"), text("largest rise (", window, "-step means)"),
         "validation loss", "BLEU test"},
        rows);
  auto val_of = [&](bool pre, bool warm, double scale) {
    for (std::size_t i = 0; i < arms.size(); ++i)
      if (arms[i].pre_norm == pre && arms[i].warmup == warm && arms[i].lr_scale == scale)
        return runs[i].history.validation_of("loss").back();
    return 0.0;
  };
  std::vector<std::string> gains;
  for (double scale : {1.0, 2.0})
    for (bool pre : {false, true}) {
      const double gain = val_of(pre, false, scale) - val_of(pre, true, scale);
      gains.push_back(text(pre ? "pre-norm" : "post-norm", " at ×", int(scale), " ", gain >= 0 ? "+" : "", fixed(gain, 3)));
      metric(text("warmup_gain_", pre ? "pre" : "post", "_lr", int(scale)), gain);
    }
  say("What the warm-up is worth, as the validation loss without it minus the loss with it (positive: the warm-up "
      "helps): ", listing(gains), ". The largest rise measures spikes: how far the loss, averaged over ", window,
      " steps, climbs back above its lowest point so far.");
  claim({"postnorm_needs_warmup", "warmup_gain_post_lr2 > 0.5",
         text("At twice the rate post-norm needs the warm-up: without it the validation loss is ",
              fixed(val_of(false, false, 2.0), 3), " against ", fixed(val_of(false, true, 2.0), 3), " with it."),
         text("At twice the rate post-norm does without the warm-up in this run: validation loss ",
              fixed(val_of(false, false, 2.0), 3), " without it, ", fixed(val_of(false, true, 2.0), 3), " with it.")});
  claim({"prenorm_needs_it_less", "warmup_gain_pre_lr2 < warmup_gain_post_lr2",
         text("Pre-norm needs it less: the warm-up is worth ", fixed(val_of(true, false, 2.0) - val_of(true, true, 2.0), 3),
              " to pre-norm at twice the rate, ", fixed(val_of(false, false, 2.0) - val_of(false, true, 2.0), 3),
              " to post-norm."),
         text("Pre-norm does not need it less here: the warm-up is worth ",
              fixed(val_of(true, false, 2.0) - val_of(true, true, 2.0), 3), " to pre-norm at twice the rate, ",
              fixed(val_of(false, false, 2.0) - val_of(false, true, 2.0), 3), " to post-norm.")});
  claim({"warmup_small_at_lesson_rate", "abs(warmup_gain_post_lr1) < 0.2 and abs(warmup_gain_pre_lr1) < 0.2",
         text("At lesson 08's rate the warm-up changes the validation loss by less than 0.2 for either placement (",
              listing({gains[0], gains[1]}), ")."),
         text("At lesson 08's rate the warm-up changes the validation loss by 0.2 or more for some placement (",
              listing({gains[0], gains[1]}), ")."),
         Expect::either_way});
}

}  // namespace

int main(int argc, char** argv) {
  LessonInfo info{"10_training_stability", "Training a Transformer stably: label smoothing, norm placement, warm-up",
                  "Lesson 08's Transformer trained without label smoothing, and with pre-norm or post-norm layers, with "
                  "and without the warm-up, at two learning rates.",
                  "warmup_gain_post_lr2"};
  info.lead_figure = "ablation_norm_lr2";
  return run_lesson(info, argc, argv, [] {
    const Plan plan = make_plan();
    const data::TranslationTask task = data::make_translation_task(translation_task_options(plan));
    section("1. Label smoothing");
    label_smoothing(plan, task);
    section("2. The norm's place and the warm-up");
    norm_and_warmup(plan, task);
  });
}
