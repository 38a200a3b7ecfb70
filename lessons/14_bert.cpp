// Lesson 14: BERT, a bidirectional encoder pretrained by filling in masked characters of real
// English text.
//
// A GPT predicts the next token from the ones before it. BERT (Devlin et al. 2018) reads the whole
// text at once, both sides of every position, so it cannot be trained to predict "the next" token:
// it would see it. Instead some of its input is hidden and it must restore it (the cloze task,
// "masked language modelling"). Nobody labels anything: the text is its own supervision. We
// pretrain a small BERT on the characters of the Debian fortunes corpus, score its guesses on
// held-out text against counted baselines and read what its heads attend to; lesson 15 fine-tunes
// it. The windows, their masks and the counted baselines are nn/data/masked_windows. --long
// pretrains the same model for twice the epochs of each phase (twice as long as the default run);
// lesson 15 loads either run's checkpoint (--from its output folder).
#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>

#include "lessons/kit/bert.hpp"
#include "lessons/kit/explorer.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/offset_profile.hpp"
#include "lessons/kit/transformer_card.hpp"
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

// The split, the held-out masks, the model's sizes and phases, and how a token is shown
// are lessons/kit/bert's: lesson 15 fine-tunes this lesson's checkpoint and builds the same model.
using bert::kHeldOutMaskSeed;
using bert::kHeldOutShare;
using bert::kSplitSeed;
using bert::Phase;
using bert::shown;
using bert::shown_text;
using BertSettings = bert::ModelSettings;
using Corpus = data::ClozeCorpus;
using data::entry_ids;
using data::one_line_entry;

// The model's sizes and phases are lessons/kit/bert's: lesson 15 builds the same model to load this
// lesson's checkpoint. --long pretrains that model on the same windows twice as many epochs in
// each phase; a checkpoint of either run loads there (--from). Measured (issue 37), the longer
// pretraining fills in more characters but fine-tunes no better in lesson 15.
BertSettings settings_of_run() {
  BertSettings r = bert::model_settings();
  if (lesson().args().long_run && !quick()) r.short_windows.epochs *= 2, r.long_windows.epochs *= 2;
  return r;
}

// ---------------------------------------------------------------------------------------------
// 1. Text, characters and the masking rule.

void the_corpus(const Corpus& c) {
  std::size_t chars = 0;
  for (const auto& e : c.split.train) chars += data::fortune_chars(e.text).size();
  say("The Debian package fortunes holds ", c.split.train.size() + c.split.validation.size() + c.split.test.size(),
      " distinct entries (a later copy of an entry is dropped) in ", data::fortune_topics(c.split.train).size(),
      " files by topic. We split them by entry, ", percent(1 - 2 * kHeldOutShare, 0), " for training and ",
      percent(kHeldOutShare, 0), " each for validation and test, with a fixed seed, so that every run holds out the "
      "same entries. The model reads characters: the ", c.ids.end - c.ids.first, " characters of the training "
      "entries, the four specials every vocabulary here has (<pad> = 0, <bos>, <eos>, <unk>) and two of BERT's, "
      "[MASK] and [CLS], appended after them: ", c.vocab.size(), " tokens. Each entry ends with <eos>, BERT's [SEP].");
  table({"split", "entries", "characters"},
        {row("train", c.split.train.size(), c.train.size() - c.split.train.size()),
         row("validation", c.split.validation.size(), c.validation.size() - c.split.validation.size()),
         row("test", c.split.test.size(), c.test.size() - c.split.test.size())});
  config({{"split_seed", kSplitSeed}, {"vocabulary", c.vocab.size()}});
  metric("train_characters", double(chars));
}

// Two held-out entries with the rule applied, as text and as a figure of short rows.
void masked_examples(const Corpus& c) {
  std::vector<bert::MaskedExample> examples;
  std::string block;
  Generator gen(seed() + 11);
  for (const data::Fortune* e : {&one_line_entry(c.split.validation, 30, 38), &one_line_entry(c.split.validation, 50, 58)}) {
    const std::vector<Index> ids = entry_ids(c, e->text);
    const data::MaskedTokens m = data::mask_tokens(ids, c.ids.mask, c.ids.first, c.ids.end, gen);
    examples.push_back({ids, m});
    std::string marks;
    for (MaskChoice ch : m.choice)
      marks += ch == MaskChoice::none ? " " : ch == MaskChoice::masked ? "M" : ch == MaskChoice::random ? "R" : "K";
    block += "text:   " + shown_text(c.vocab, ids) + "\ninput:  " + shown_text(c.vocab, m.input) + "\nchosen: " + marks + "\n\n";
  }
  verbatim(block + "M: replaced by [MASK], R: by a random character, K: kept; the model predicts the text's character at each.");
  save_figure(bert::masking_figure(c.vocab, examples, 20), "masking",
              "Two validation entries, cut into rows of 20 characters: as written (upper row of each pair) and as the "
              "model reads them (lower row). Chosen targets are shaded by what happened to them: replaced by [MASK] "
              "(\u25ae), by a random character, or kept; light cells are not targets.");
}

// The rule's shares measured over one epoch's worth of long training windows.
void the_masking_rule(const Corpus& c, const BertSettings& r) {
  say("BERT's rule: choose 15 % of the characters as targets. Replace a chosen character by [MASK] (shown \u25ae) "
      "80 % of the time, by a random character 10 % of the time, and leave it as it is 10 % of the time; the loss "
      "is the cross-entropy $-\\log p(x_i \\mid \\tilde x)$ of the original character $x_i$ given the masked text "
      "$\\tilde x$, averaged over the chosen places only. [CLS], <eos> and padding are never chosen. Why not always "
      "[MASK]? Because [MASK] never occurs after pretraining: a model that only learned to fix [MASK] places would "
      "have no reason to build a good representation of a character it can see. With 10 % random and 10 % "
      "unchanged, any character it reads may be wrong, so it must represent every one.");
  masked_examples(c);
  const Phase& ph = r.long_windows;
  Generator count_gen(seed() + 12);
  const data::MaskingShares m = data::measure_masking(c.ids, c.train, ph.context, ph.windows, count_gen);
  table({text("over ", ph.windows, " training windows of ", ph.context - 1, " characters"), "share"},
        {row("characters chosen as targets", percent(m.chosen, 2)), row("of the chosen: [MASK]", percent(m.masked, 2)),
         row("of the chosen: a random character", percent(m.random, 2)), row("of the chosen: kept", percent(m.kept, 2))});
  metric("masking_chosen_share", m.chosen);
  metric("masking_mask_share", m.masked);
  metric("masking_random_share", m.random);
  metric("masking_kept_share", m.kept);
  claim({"rule_shares_measured",
         "abs(masking_chosen_share - 0.15) < 0.01 and abs(masking_mask_share - 0.8) < 0.03 and "
         "abs(masking_random_share - 0.1) < 0.03 and abs(masking_kept_share - 0.1) < 0.03",
         text("Measured, the rule does what it says: ", percent(m.chosen, 1), " of the characters chosen, and of those ",
              percent(m.masked, 1), " masked, ", percent(m.random, 1), " replaced and ", percent(m.kept, 1), " kept."),
         text("The measured shares (", percent(m.chosen, 1), " chosen; ", percent(m.masked, 1), ", ", percent(m.random, 1),
              ", ", percent(m.kept, 1), ") stray from 15 % and 80/10/10.")});
}

// The attention pattern of a padded batch, BERT's beside GPT's.
void both_directions() {
  const std::size_t L = 8, real = 6;
  xt::xarray<double> bert = xt::zeros<double>({L, L}), gpt = xt::zeros<double>({L, L});
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t j = 0; j < L; ++j) bert(i, j) = j < real, gpt(i, j) = j <= i && j < real;
  const std::vector<std::string> tokens = {"CLS", "c", "a", "t", "s", "EOS", "pad", "pad"};
  plots::Figure fig(1800, 1000, 1, 2);
  fig.title("Which keys a query may use");
  plots::HeatmapOptions ho = attention_style(tokens, tokens);
  plots::heatmap(fig.panel(0).title("BERT: both sides").xlabel("Keys").ylabel("Queries"), bert, ho);
  plots::heatmap(fig.panel(1).title("GPT: the left only").xlabel("Keys"), gpt, ho);
  fig.shared_colorbar({ho.cmap, 0.0, 1.0, "1: allowed, 0: hidden"});
  save_figure(fig, "attention_masks",
              "Allowed keys (1) for each query of a sequence of 6 real tokens padded to 8: in BERT every real token, "
              "in a GPT itself and the tokens to its left. In BERT every position sees the whole text, which is why "
              "it cannot be trained to predict the next character and fills in hidden ones instead.");
  say("Without a causal mask every position sees every other: the representation of a character is built from "
      "both sides of it, $h_i = f(x_1, \\dots, x_L)$ rather than $f(x_1, \\dots, x_i)$. That is what makes BERT "
      "good at reading a text and unable to write one.");
}

// ---------------------------------------------------------------------------------------------
// 2. Pretraining by masked language modelling.

struct Pretrained {
  std::unique_ptr<nn::MaskedLM<F>> bert;
  History history;  // both phases, one after the other
  std::size_t first_phase_epochs = 0, first_phase_steps = 0;
  ClozeScores test, unigram, neighbours;
};


// The counted baselines, then the model's parameters.
void baselines_and_model(const Corpus& c, const BertSettings& r, Pretrained& p) {
  const auto validation = data::held_out_windows(c.ids, c.validation, r.context(), r.held_out_windows, 64, kHeldOutMaskSeed);
  const auto test = data::held_out_windows(c.ids, c.test, r.context(), full_or_quick<std::size_t>(100000, 600), 64, kHeldOutMaskSeed);
  const data::CountedCloze counted(c.train, c.ids.first, c.ids.end);
  const double alpha = counted.best_alpha(validation, c.validation, {0.25, 1.0, 4.0, 16.0});
  p.unigram = counted.score_unigram(test);
  p.neighbours = counted.score_neighbours(test, c.test, alpha);
  say("Two counted baselines, fitted on the training characters and scored on the same held-out targets as the "
      "model. The unigram model reads nothing and always guesses the most frequent character ('",
      shown(c.vocab, counted.most_frequent()), "'). The neighbour model counts each character between its two "
      "neighbours, $p(c \\mid \\ell, r) = (n(\\ell c r) + \\alpha\\, p(c)) / (n(\\ell \\cdot r) + \\alpha)$ with "
      "$\\alpha = ", alpha, "$ chosen on validation, and reads the true neighbours even where the model sees a "
      "[MASK]: a local context of one character each side, with an edge.");
  nn::MaskedLM<F>& bert = *p.bert;
  table({"part", "parameters"},
        {row(text("character embedding (", c.vocab.size(), " x ", r.d_model, "), also the output layer"),
             bert.model.embed.parameter_count()),
         row(text("relative position bias (32 distance buckets x ", r.heads, " heads)"), bert.model.positional.parameter_count()),
         row(text(r.layers, " pre-norm encoder layers and the final norm (", r.heads, " heads, FFN ", r.d_ff, ")"),
             bert.model.encoder.parameter_count()),
         row("MLM head: dense, norm, output bias", bert.mlm.parameter_count()),
         row("[CLS] classifier (used when fine-tuning, lesson 15)", bert.model.head.parameter_count()),
         row("total", bert.parameter_count())});
  config({{"d_model", r.d_model}, {"heads", r.heads}, {"layers", r.layers}, {"d_ff", r.d_ff},
          {"positions", "relative (T5 buckets)"}, {"neighbour_alpha", alpha}});
}

Pretrained pretrain(const Corpus& c, const BertSettings& r) {
  Pretrained p{bert::new_model(c, r), {}, 0, 0, {}, {}, {}};
  nn::MaskedLM<F>& bert = *p.bert;
  baselines_and_model(c, r, p);
  const Phase &first = r.short_windows, &second = r.long_windows;
  const auto validation = data::held_out_windows(c.ids, c.validation, second.context, r.held_out_windows, 64, kHeldOutMaskSeed);
  const auto validation_short =
      data::held_out_windows(c.ids, c.validation, first.context, r.held_out_windows, 64, kHeldOutMaskSeed);
  const bool resumed = !checkpoint_from("bert_mlm.npz").empty();
  // Each phase: AdamW, a warm-up over 1/20 of its steps, a cosine decay to 1/20 of the peak (lessons/kit/bert).
  const auto recipe = [&](const Phase& ph, const std::string& checkpoint) {
    Recipe rp = bert::pretraining_recipe(r, ph);
    rp.checkpoint = checkpoint;
    rp.validate = [&] {
      const ClozeScores s = bert::score(bert, validation), t = bert::score(bert, validation_short);
      return Scores{{"loss", s.loss}, {"accuracy", s.accuracy}, {"loss_short", t.loss}, {"accuracy_short", t.accuracy}};
    };
    return rp;
  };
  Generator windows(seed() + 21), masks(seed() + 22);
  const auto phase = [&](const Phase& ph, const std::string& checkpoint) {
    return bert::pretrain_phase(bert, c, ph, recipe(ph, checkpoint), windows, masks);
  };
  const auto steps = bert::phase_steps;
  say("Pretraining reads windows of the training text drawn at random places, [CLS] in front, masked afresh each "
      "time: first ", first.epochs, " epochs of ", first.windows, " windows of ", first.context - 1, " characters (",
      steps(first), " steps in batches of ", first.batch, "), then ", second.epochs, " of ", second.windows,
      " windows of ", second.context - 1, " (", steps(second), " steps in batches of ", second.batch, "). Why short "
      "windows first? At the start every head spreads its attention evenly, so a character's neighbour gets $1/L$ "
      "of it and the gradient that would teach a head to look there is that weak; at $L = ", first.context, "$ the "
      "neighbours are ", second.context / first.context, " times as loud as at $L = ", second.context, "$, the "
      "heads find them, and the long windows then teach the model to use a wider context. The positions are T5's "
      "relative bias (a learned score per head for each distance, exact up to 7, then in log-spaced buckets), "
      "which carries over from short windows to long ones unchanged. Each phase: ", describe(recipe(first, ""), steps(first)),
      " (the first phase's count; the second's schedule has its own ", steps(second), " steps). After every epoch "
      "the model fills in the masked characters of ", r.held_out_windows, " validation windows of each length (",
      data::count_targets(validation_short), " targets in windows of ", first.context - 1, " characters, ",
      data::count_targets(validation), " in windows of ", second.context - 1, ").");
  auto phase_config = [](const Phase& ph) {
    return Json{{"context", ph.context}, {"batch", ph.batch}, {"windows", ph.windows}, {"epochs", ph.epochs}};
  };
  config({{"pretrain_short_windows", phase_config(first)}, {"pretrain_long_windows", phase_config(second)},
          {"pretrain_peak_lr", r.pretrain_lr}});
  say(lesson().args().long_run && !quick()
          ? "This is the --long run: each phase runs twice the epochs of the full run, the same model on the same windows."
          : "(--long runs each phase of the full run for twice as many epochs, the same model on the same windows.)");
  History h1;
  if (resumed) say("With --from, the pretrained model goes on with the long windows at once: the short windows are for the start "
                   "from random weights.");
  else h1 = phase(first, "");
  const History h2 = phase(second, "bert_mlm.npz");  // --from starts here; the model and AdamW's state are saved after it
  p.history = resumed ? h2 : joined(h1, h2);
  p.first_phase_epochs = h1.epoch_loss.size(), p.first_phase_steps = h1.steps;
  p.test = bert::score(bert, data::held_out_windows(c.ids, c.test, r.context(), full_or_quick<std::size_t>(100000, 600), 64,
                                                    kHeldOutMaskSeed));
  timing("pretrain_seconds", p.history.seconds);
  if (!resumed) timing("pretrain_short_step_ms", h1.median_step_ms());
  timing("pretrain_long_step_ms", h2.median_step_ms());
  return p;
}

// The validation table and the claims on the two phases.
void phases(const Pretrained& p, const BertSettings& r) {
  const History& h = p.history;
  const auto &vl = h.validation_of("loss"), &va = h.validation_of("accuracy");
  const auto &vls = h.validation_of("loss_short"), &vas = h.validation_of("accuracy_short");
  const std::size_t short_chars = r.short_windows.context - 1, long_chars = r.long_windows.context - 1;
  std::vector<std::vector<std::string>> rows;
  for (std::size_t e = 0; e < vl.size(); ++e)
    rows.push_back(row(e + 1, e < p.first_phase_epochs ? short_chars : long_chars, fixed(h.epoch_loss[e], 3),
                       fixed(vls[e], 3), fixed(vas[e], 3), fixed(vl[e], 3), fixed(va[e], 3)));
  table({"epoch", "trained on windows of", "training loss", text("validation loss, ", short_chars),
         text("accuracy, ", short_chars), text("validation loss, ", long_chars), text("accuracy, ", long_chars)}, rows);
  const std::size_t fe = p.first_phase_epochs;
  if (fe < 2) return;  // resumed with --from: one phase only
  metric("short_phase_first_validation_loss_short", vls[0]);
  metric("short_phase_last_validation_loss_short", vls[fe - 1]);
  metric("short_phase_last_validation_loss_long", vl[fe - 1]);
  metric("long_phase_last_validation_loss_long", vl.back());
  claim({"short_windows_learn", "short_phase_last_validation_loss_short < short_phase_first_validation_loss_short - 0.02",
         text("On windows of ", short_chars, " characters the validation loss falls while the model trains on them, "
              "from ", fixed(vls[0], 3), " nats after the first epoch to ", fixed(vls[fe - 1], 3), " after the last (accuracy ",
              fixed(vas[0], 3), ", then ", fixed(vas[fe - 1], 3), ")."),
         text("On windows of ", short_chars, " characters the validation loss hardly moves while the model trains on "
              "them: ", fixed(vls[0], 3), " nats after the first epoch, ", fixed(vls[fe - 1], 3), " after the last.")});
  claim({"long_windows_lag", "short_phase_last_validation_loss_long > short_phase_last_validation_loss_short",
         text("At the end of that phase the long windows score worse (", fixed(vl[fe - 1], 3), " nats against ",
              fixed(vls[fe - 1], 3), "): distances beyond ", short_chars, " fall in relative-position buckets it "
              "has never trained, and each query spreads its attention over more keys."),
         text("At the end of that phase the long windows score no worse (", fixed(vl[fe - 1], 3), " nats against ",
              fixed(vls[fe - 1], 3), "): the wider context makes up for the untrained distances."),
         Expect::either_way});
  claim({"long_windows_mend", "long_phase_last_validation_loss_long < short_phase_last_validation_loss_long",
         text("Training on the long windows lowers their loss, from ", fixed(vl[fe - 1], 3), " to ", fixed(vl.back(), 3),
              " nats (accuracy ", fixed(va[fe - 1], 3), " to ", fixed(va.back(), 3), "): BERT's own 512-token phase "
              "existed to teach the positions beyond 128."),
         text("Training on the long windows did not lower their loss (", fixed(vl[fe - 1], 3), " then ",
              fixed(vl.back(), 3), " nats).")});
}

void pretraining_results(const Corpus& c, const Pretrained& p, const BertSettings& r) {
  phases(p, r);
  const std::size_t n_test = p.test.count_by_choice[1] + p.test.count_by_choice[2] + p.test.count_by_choice[3];
  say("On the ", n_test, " masked characters of the test windows (", c.split.test.size(), " held-out entries):");
  const auto line = [](const std::string& name, const ClozeScores& s) {
    return row(name, fixed(s.loss, 3), fixed(s.loss / std::log(2.0), 3), fixed(s.accuracy, 3), fixed(s.accuracy_on(MaskChoice::masked), 3),
               fixed(s.accuracy_on(MaskChoice::random), 3), fixed(s.accuracy_on(MaskChoice::kept), 3));
  };
  table({"model", "loss (nats)", "bits per character", "accuracy", "on [MASK]", "on random", "on kept"},
        {line("unigram (reads nothing)", p.unigram), line("neighbours (true left and right)", p.neighbours), line("BERT", p.test)});
  const double masked = p.test.accuracy_on(MaskChoice::masked), uni_masked = p.unigram.accuracy_on(MaskChoice::masked);
  metric("mlm_test_accuracy", p.test.accuracy);
  metric("mlm_test_loss", p.test.loss);
  metric("mlm_test_accuracy_masked", masked);
  // bert_mlm.npz's model card, so that inspect (and a test) can run the model: lessons/kit/transformer_card.
  write_bert_card("bert_mlm", bert::config(c, r), c.vocab, {"mlm_test_accuracy_masked", masked});
  metric("mlm_test_accuracy_random", p.test.accuracy_on(MaskChoice::random));
  metric("mlm_test_accuracy_kept", p.test.accuracy_on(MaskChoice::kept));
  metric("unigram_test_accuracy", p.unigram.accuracy);
  metric("unigram_test_accuracy_masked", uni_masked);
  metric("unigram_test_loss", p.unigram.loss);
  metric("neighbours_test_accuracy", p.neighbours.accuracy);
  metric("neighbours_test_loss", p.neighbours.loss);
  claim({"mlm_beats_unigram",
         "mlm_test_accuracy_masked > unigram_test_accuracy_masked + 0.05 and mlm_test_loss < unigram_test_loss - 0.2",
         text("Under [MASK], where it must guess from the context alone, BERT restores ", percent(masked, 1),
              " of the held-out characters against the unigram guess's ", percent(uni_masked, 1), ", and its loss is ",
              fixed(p.test.loss, 3), " nats per target against ", fixed(p.unigram.loss, 3), ": it reads the context."),
         text("BERT does not clearly beat the unigram guess: under [MASK] ", percent(masked, 1), " against ",
              percent(uni_masked, 1), ", loss ", fixed(p.test.loss, 3), " against ", fixed(p.unigram.loss, 3),
              " nats.")});
  claim({"mlm_reads_kept", "mlm_test_accuracy_kept > 0.8",
         text("Where the rule left the character in place the model reads the answer and gets ",
              percent(p.test.accuracy_on(MaskChoice::kept), 1), " right; where it put a random character it must "
              "notice the character does not fit (", percent(p.test.accuracy_on(MaskChoice::random), 1), ")."),
         text("Where the rule left the character in place the model gets only ", percent(p.test.accuracy_on(MaskChoice::kept), 1),
              " right: it has not learned to trust what it sees.")});
  // How much text this run's pretraining read: every window's characters (15 % of them targets),
  // over the characters of the training entries.
  const auto characters = [](const Phase& ph) { return double(ph.windows * std::size_t(ph.epochs) * (ph.context - 1)); };
  const double read = (characters(r.long_windows) + (p.first_phase_epochs > 0 ? characters(r.short_windows) : 0.0)) /
                      double(c.train.size() - c.split.train.size());
  metric("pretrain_text_read", read);
  const std::string budget = text("in this run the model read the training text ", fixed(read, 1), " times");
  claim({"mlm_beats_neighbours", "mlm_test_accuracy > neighbours_test_accuracy",
         text("BERT beats even the neighbour counts, ", percent(p.test.accuracy, 1), " against ",
              percent(p.neighbours.accuracy, 1), " over all targets, though the counts read the true neighbours where "
              "BERT may see a [MASK]: ", budget, ", and its context reaches past the two neighbours."),
         text("The neighbour counts, which read the true neighbours where BERT may see a [MASK], do better (",
              percent(p.neighbours.accuracy, 1), " against ", percent(p.test.accuracy, 1), " over all targets): a local "
              "count is hard to beat at the character level, and ", budget, " (the quick run is too short for this; "
              "the full run and --long read it more often)."),
         Expect::full_run});
  claim({"mlm_loss_beats_neighbours", "mlm_test_loss < neighbours_test_loss",
         text("Its loss is lower too, ", fixed(p.test.loss, 3), " nats per target against the counts' ",
              fixed(p.neighbours.loss, 3), ": it is not only right more often, it also gives the true character more "
              "probability on average."),
         text("Its loss is still higher than the counts' (", fixed(p.test.loss, 3), " nats per target against ",
              fixed(p.neighbours.loss, 3), "): on average it gives the true character less probability, and the loss "
              "punishes a confident miss harder than accuracy does."),
         Expect::either_way});
  save_figure(bert::pretraining_figure(p.history, p.first_phase_epochs, p.first_phase_steps, r, p.unigram, p.neighbours),
              "mlm_training",
              text("Top: training loss by step and validation loss after each epoch, in nats per masked character, "
                   "with the two counted baselines on the test targets (dashed). Bottom: validation accuracy after each "
                   "epoch, on validation windows of both lengths. Training windows of ", r.short_windows.context - 1,
                   " characters until the gray line, of ", r.long_windows.context - 1, " after it."));
}

// The model's guesses at the masks of one held-out sentence.
void fill_in(const Corpus& c, nn::MaskedLM<F>& bert) {
  const std::vector<Index> ids = entry_ids(c, one_line_entry(c.split.test, 50, 70).text);
  // Every fifth character masked (a harder test than 15 %: less context around each).
  std::vector<Index> input = ids, where;
  for (std::size_t l = 3; l + 1 < ids.size(); l += 5) input[l] = c.ids.mask, where.push_back(Index(l));
  NoGrad no_grad;
  bert.eval();
  const IndexArray in = xt::adapt(input, {std::size_t(1), input.size()});
  const Array<F> logp = log_softmax(bert.forward(in, std::nullopt, xt::adapt(where, {where.size()})), -1).value();
  std::size_t right = 0;
  std::set<Index> firsts;
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k = 0; k < where.size(); ++k) {
    const std::vector<Index> order = bert::likeliest(logp, k, c.ids, 3);
    const Index truth = ids[std::size_t(where[k])];
    right += order[0] == truth;
    firsts.insert(order[0]);
    std::string top;
    for (std::size_t t = 0; t < 3; ++t)
      top += (t ? "  " : "") + shown(c.vocab, order[t]) + " " + fixed(std::exp(logp(k, std::size_t(order[t]))), 2);
    rows.push_back(row(where[k], shown(c.vocab, truth), top));
  }
  say("A held-out entry with every fifth character hidden, and the model's three best guesses for each hidden one "
      "(the probability it gives them).");
  verbatim("text:  " + shown_text(c.vocab, ids) + "\ninput: " + shown_text(c.vocab, input));
  table({"position", "truth", "best guesses"}, rows);
  metric("fill_in_right", double(right));
  metric("fill_in_hidden", double(where.size()));
  metric("fill_in_distinct_first_guesses", double(firsts.size()));
  claim({"fill_in_reads_context", "fill_in_distinct_first_guesses >= 2 and fill_in_right >= 2",
         text(right, " of the ", where.size(), " hidden characters come first in its ranking, and its first guesses "
              "differ from place to place (", firsts.size(), " different characters): each guess is made for its "
              "place, from the characters on both sides."),
         text(right, " of the ", where.size(), " hidden characters come first in its ranking, and its first guesses "
              "take only ", firsts.size(), " different values: the model barely uses the context here.")});
}

// ---------------------------------------------------------------------------------------------
// 3. What the heads attend to.

// Every head of every layer of the pretrained model on one held-out sentence.
void head_grid_of_one_sentence(const Corpus& c, nn::MaskedLM<F>& bert) {
  const data::Fortune* pick = &one_line_entry(c.split.test, 24, 34);
  const AttentionInput in = bert::attention_input(bert.model, c.vocab, entry_ids(c, pick->text), text("\"", pick->text, "\""));
  save_figure(bert::head_grid_figure(in, "Every head of the pretrained BERT on one held-out sentence"), "head_grid",
              text("The ", in.layers.size() * in.heads[0].size(), " heads of the pretrained model (no fine-tuning) "
                   "reading \"", pick->text, "\". Each panel: row i is query character i's attention over all characters."));
  // The same heads in the attention explorer (lessons/kit/explorer.hpp): hover a character to read its weights.
  show_explorer({"Lesson 14: the pretrained BERT's heads on a held-out sentence", "characters (queries)",
                 "characters (keys)", "The model of this run before any fine-tuning. Choose a layer and a head, hover "
                 "a character to see which characters it reads, or open the model view for every head at once.", {in}},
                "explorer", "The attention explorer on the same sentence: every head of every layer, a character's "
                            "weights on hover");
}

// The mean weight each head puts at each offset from the query, over held-out windows.
void attention_by_offset(const Corpus& c, nn::MaskedLM<F>& bert, const BertSettings& r) {
  const std::size_t windows = full_or_quick<std::size_t>(64, 16);
  NoGrad no_grad;
  bert.eval();
  bert.model.features(data::reading_windows(c.ids.cls, c.validation, windows, r.context()));  // no masks
  const auto weights = bert.model.attention_weights();
  const std::size_t L = weights.size(), H = weights[0].shape()[1];
  const NearOffsets near = near_offsets(weights, 8);  // offsets -8 .. +8 (lessons/kit/offset_profile)
  std::size_t rightward = 0;  // heads that put more weight right of the query than left of it
  for (std::size_t l = 0; l < L; ++l) {
    const SideMass sides = side_mass(weights[l].value(), 1);  // [CLS] left out
    for (std::size_t h = 0; h < H; ++h) rightward += sides.right[h] > sides.left[h];
  }
  save_figure(near_offsets_figure(near, "Attention by relative position, per head (pretrained model, held-out text)"),
              "offsets",
              text("For every head, the mean weight a query character puts on the character at each offset from it, over ",
                   windows, " validation windows of ", r.context() - 1, " characters."));
  // The sharpest head at -1 and at +1, and how many heads look more to the right than to the left.
  const std::size_t prev = near.sharpest(-1), next = near.sharpest(+1);
  metric("best_previous_character_head_mass", near.at(prev, -1));
  metric("best_next_character_head_mass", near.at(next, +1));
  metric("heads_looking_right", double(rightward));
  const double uniform = 1.0 / double(r.context() - 1);
  const double best_neighbour = std::max(near.at(prev, -1), near.at(next, +1));
  say("A query spread evenly over a window of ", r.context() - 1, " characters would give each ", percent(uniform, 1),
      ". ", near.heads[prev], " puts ", percent(near.at(prev, -1), 1), " of its weight on the character just before "
      "it, ", near.heads[next], " ", percent(near.at(next, +1), 1), " on the one just after. "
      "The rows repeat from layer to layer because T5's bias is one table shared by all layers (32 distance buckets x ",
      H, " heads): head $k$ of every layer is given the same preference for where to look, and the layers differ in "
      "what the queries and keys match on top of it (the head grid above).");
  metric("uniform_attention_share", uniform);
  claim({"heads_find_neighbours",
         "max(best_previous_character_head_mass, best_next_character_head_mass) > 4 * uniform_attention_share",
         text("The heads prefer the characters next to the query: the sharpest puts ", percent(best_neighbour, 1),
              " of its weight on one neighbour, ", fixed(best_neighbour / uniform, 1), " times the even share."),
         text("No head singles out a neighbour: the sharpest puts ", percent(best_neighbour, 1), " of its weight on "
              "one, ", fixed(best_neighbour / uniform, 1), " times the even share.")});
  claim({"some_heads_look_right", "heads_looking_right >= 1",
         text("Nothing stops a head from looking right, and ", rightward, " of the ", L * H, " put more weight to the "
              "right of the query than to its left."),
         text("None of the ", L * H, " heads puts more weight to the right of the query than to its left, though "
              "nothing stops them."),
         Expect::either_way});
}


// ---------------------------------------------------------------------------------------------
// 4. What to take away.

void takeaway() {
  say("The cloze task turns unlabelled text into a training signal: hide some characters, ask for them back, and "
      "score the answer with $-\\log p(x_i \\mid \\tilde x)$. Reading both sides makes the encoder a reader, not a "
      "writer; the 80/10/10 rule keeps it honest about the characters it can see. What this run's model reached "
      "against the counted baselines is measured in section 2. The output folder keeps bert_mlm.npz, the pretrained "
      "model and its AdamW state: --from that folder continues pretraining from it here, and lesson 15 fine-tunes it "
      "(numpy reads it with np.load); the checkpoint of a --long run is the same model pretrained longer, and loads "
      "there the same way.");
}

}  // namespace

int main(int argc, char** argv) {
  LessonInfo info{"14_bert", "BERT: masked language modelling on fortunes",
                  "The 80/10/10 masking rule, a small BERT pretrained on characters of the fortunes corpus against "
                  "counted baselines, and what its heads attend to",
                  "mlm_test_accuracy_masked", "", {"bert_mlm.npz"}};
  info.lead_figure = "mlm_training";
  return run_lesson(info, argc, argv, [] {
    const BertSettings r = settings_of_run();
    checkpoint_from("bert_mlm.npz");  // a bad --from fails here, before any work
    const Corpus c = bert::load_corpus();
    section("1. Text, characters and the masking rule");
    the_corpus(c);
    the_masking_rule(c, r);
    both_directions();
    section("2. Pretraining: fill in the masked characters");
    Pretrained p = pretrain(c, r);
    pretraining_results(c, p, r);
    fill_in(c, *p.bert);
    section("3. What the heads attend to");
    head_grid_of_one_sentence(c, *p.bert);
    attention_by_offset(c, *p.bert, r);
    section("4. What to take away");
    takeaway();
  });
}
