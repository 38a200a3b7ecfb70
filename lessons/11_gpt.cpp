// Lesson 11: a character-level GPT trained on real English text, against counted n-grams.
//
// A decoder-only Transformer (GPT) learns one thing: the next token from the ones before it. The
// causal mask is what makes that a training signal: position t may look only left, so one forward
// pass over a text makes a prediction at every position, each from its own past, and every one of
// them is trained at once (teacher forcing). We train a small GPT on the characters of the Debian
// fortunes corpus (some 15,000 quotations, jokes and verses) and hold it to the baseline that held
// language modelling for decades: n-gram counts with interpolated Kneser-Ney smoothing, scored on
// exactly the same held-out characters. Then we look inside: the mask and a trained head, and the
// loss at each position. Lesson 12 generates text with GPTs like it and measures what each new
// character costs (the KV cache, and sharing keys and values); lesson 13 takes the same model
// apart on a copying task: induction heads.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "core/runtime/parallel.hpp"
#include "lessons/kit/causal_lm_explorer.hpp"
#include "lessons/kit/fortunes_gpt.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/transformer_card.hpp"
#include "lessons/kit/window_training.hpp"
#include "nn/data/char_corpus.hpp"
#include "nn/lm/by_position.hpp"
#include "nn/lm/kneser_ney_orders.hpp"
#include "nn/lm/score.hpp"
#include "nn/transformer/causal_lm.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;
namespace lm = attnlab::nn::lm;

namespace {

using F = float;
using Vocab = data::Vocab;
using Sequences = data::Sequences;

constexpr double kDiscount = 0.75;           // Kneser-Ney's one discount
const double kLn2 = std::log(2.0);

// What a run trains: full (the 10-minute run on 2 cores), --quick (seconds) and --long (four times
// the full run's steps).
struct GptSettings {
  std::size_t train_entries = 0, held_out_entries = 0;  // 0: all of them (quick takes a slice)
  std::size_t max_order = 10;                           // Kneser-Ney orders 1 .. max_order
  std::size_t d_model = 128, heads = 4, layers = 4, context = 64, batch = 64;
  long steps = 4400;
  int evaluations = 16;              // validation points during training
  std::size_t monitor_entries = 300; // validation entries scored at each point
  double lr = 3e-3;
};

GptSettings settings_of_run() {
  GptSettings r;
  if (lesson().args().long_run) {  // the same GPT, reading four times as many characters
    r.steps = 4 * r.steps;
    r.evaluations = 2 * r.evaluations;
  }
  if (quick()) {
    r.train_entries = 2500, r.held_out_entries = 150, r.max_order = 6;
    r.d_model = 48, r.heads = 2, r.layers = 2, r.context = 32, r.batch = 32;
    r.steps = 600, r.evaluations = 3, r.monitor_entries = 60;
  }
  // --epochs N: N validation points, each after the same number of steps as by default.
  const long per_point = r.steps / r.evaluations;
  r.evaluations = epochs(r.evaluations, r.evaluations);
  r.steps = per_point * r.evaluations;
  return r;
}

// ---------------------------------------------------------------------------------------------
// 1. The corpus as characters (lessons/kit/fortunes_gpt: the split lesson 12 reads too).

using Corpus = data::CharCorpus;

void the_corpus(const Corpus& c) {
  const std::size_t topics = data::fortune_topics(c.split.train).size();
  say("The Debian package fortunes installs ", topics, " files of fortune cookies by topic. Split by entry (a text "
      "and its reformatted copies never land in two splits), ", c.split.train.size(), " entries train the models, ",
      c.split.validation.size(), " are held out for validation and ", c.split.test.size(), " for the test, scored once "
      "at the end. The vocabulary is the ", c.vocab.size() - Vocab::num_specials, " characters of the training entries "
      "(letters, digits, punctuation, newline) after the four special tokens. Both kinds of model read every entry as "
      "<bos> text <eos> and predict everything after <bos>: each character and the end of the entry.");
  table({"split", "entries", "characters predicted"},
        {row("train", c.split.train.size(), data::predicted_characters(c.train)),
         row("validation", c.split.validation.size(), data::predicted_characters(c.validation)),
         row("test", c.split.test.size(), data::predicted_characters(c.test))});
  verbatim(c.split.validation.front().text);
  say("That is the first validation entry, from the file '", c.split.validation.front().topic, "'.");
  config({{"split_seed", kFortunesSplitSeed}, {"train_entries", c.split.train.size()},
          {"validation_entries", c.split.validation.size()}, {"test_entries", c.split.test.size()},
          {"vocabulary", c.vocab.size()}});
  metric("train_characters", double(data::predicted_characters(c.train)));
}

// ---------------------------------------------------------------------------------------------
// 2. Looking only left.

// Pre-norm, GELU, no dropout, rotary positions, the output tied to the embedding: the kit's
// fortunes_gpt_config says why each.
nn::CausalLMConfig gpt_config(const GptSettings& r, const Vocab& v) {
  return fortunes_gpt_config(v.size(), {r.d_model, r.heads, r.layers, r.context});
}

void looking_left(nn::CausalLM<F>& untrained, const Corpus& c) {
  const std::size_t n = 12;
  const std::vector<Index> ids = data::opening(c.validation.front(), n);
  say("A language model factors the probability of a text into next-token predictions, "
      "$$P(x_1, \\dots, x_T) = \\prod_{t=1}^{T} P(x_t \\mid x_1, \\dots, x_{t-1}).$$ "
      "The prediction at position $t$ must not see $x_{t+1}$ or anything "
      "later: that is the answer it is graded on. Self-attention, left alone, lets every position read every other, "
      "so the GPT masks the scores: query t may attend to keys 0 .. t only (the lower triangle below), and a masked "
      "key gets weight exactly 0, not a small number: the score $s_{tj}$ is set to $-\\infty$ for $j > t$ before the softmax.");
  save_figure(causal_mask_figure(token_labels(ids, c.vocab), "The causal mask: query t may attend to keys 0 .. t"),
              "causal_mask", "The causal mask over the first characters of a held-out entry: 1 where a query may "
                             "attend, 0 above the diagonal.");

  // The whole point, checked: change the characters after t and nothing at or before t moves.
  untrained.eval();
  std::vector<Index> changed = ids;
  for (std::size_t t = n / 2; t < n; ++t) changed[t] = Index(Vocab::num_specials) + Index(t % 7);
  const std::vector<double> change = lm::logit_change_by_position(untrained, ids, changed);
  // The largest change at positions < n/2, and from n/2 on.
  const double before = *std::max_element(change.begin(), change.begin() + long(n / 2));
  const double after = *std::max_element(change.begin() + long(n / 2), change.end());
  metric("future_change_max_diff", before);
  metric("past_change_max_diff", after);
  claim({"mask_hides_the_future", "future_change_max_diff == 0 and past_change_max_diff > 0",
         text("On an untrained GPT: replacing characters ", n / 2, " .. ", n - 1, " of this input changes the logits at "
              "positions 0 .. ", n / 2 - 1, " by exactly 0, and those from ", n / 2, " on by up to ", fixed(after, 3), "."),
         text("On an untrained GPT: replacing characters ", n / 2, " .. ", n - 1, " of this input changes the logits at "
              "positions 0 .. ", n / 2 - 1, " by ", sci(before), " (not 0) and those from ", n / 2, " on by ",
              sci(after), ".")});
  say("So one forward pass over a window of L characters makes L predictions, each from its own past, and the loss "
      "averages all L of them: every position of every window is a training example, and the model is fed the true "
      "previous characters rather than its own guesses (teacher forcing). Section 5 shows the loss at each position.");
}

// ---------------------------------------------------------------------------------------------
// 3. Counted baselines: interpolated Kneser-Ney.

using Baselines = lm::KneserNeyOrders;  // every order counted once, the best chosen on validation

Baselines ngram_baselines(const Corpus& c, const GptSettings& r) {
  say("Before any network: count. An n-gram model predicts a character from the $n - 1$ before it by how often each "
      "character followed that context $h$ in the training text. Unseen contexts are the problem, and smoothing is the "
      "whole art. Interpolated Kneser-Ney (Chen & Goodman 1998) subtracts a discount $D = 0.75$ from every count and "
      "hands the freed mass to the next shorter context $h'$, recursively down to a uniform distribution, so every "
      "character keeps some probability:");
  say("$$P(w \\mid h) = \\frac{\\max(c(h, w) - D, 0)}{c(h)} + \\frac{D\\,N_{1+}(h\\,\\cdot)}{c(h)}\\,P(w \\mid h'),$$ "
      "with $N_{1+}(h\\,\\cdot)$ the number of distinct characters seen after $h$. "
      "Its lower orders count in how many different contexts a string occurs, not how often (\"Francisco\" is frequent "
      "but follows only \"San\"): they are only asked when the longer context is rare.");
  Baselines b = lm::count_kneser_ney_orders(c.train, c.validation, c.vocab.size(), r.max_order, Vocab::bos, Vocab::eos,
                                            kDiscount);
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k = 1; k <= r.max_order; ++k) {
    rows.push_back(row(k, b.model->distinct(k), fixed(b.nats(k), 4), fixed(b.nats(k) / kLn2, 4)));
    metric(text("kn_val_bpc_order", k), b.nats(k) / kLn2);
  }
  table({"order n", "distinct n-grams in training", "validation nats / char", "bits / char"}, rows);
  const std::vector<double> coverage = b.model->context_coverage(c.validation);
  const std::size_t mid = std::min<std::size_t>(5, r.max_order), top = r.max_order;
  metric("kn_best_order", double(b.best_order));
  metric(text("kn_context_seen_order", top), coverage[top - 1]);
  metric("kn_best_val_bpc", b.best() / kLn2);
  say("Counting all ", r.max_order, " orders took ", fixed(b.count_seconds, 1), " s. The ", mid - 1, " characters "
      "before a validation character occurred in the training text for ", percent(coverage[mid - 1], 0), " of them, "
      "the ", top - 1, " characters before it for ", percent(coverage[top - 1], 0), ". A uniform guess over the ",
      c.vocab.size() - 1, " possible tokens would cost $\\log_2 ", c.vocab.size() - 1, " = ",
      fixed(std::log2(double(c.vocab.size() - 1)), 2), "$ bits.");
  claim({"longer_contexts_help", "kn_val_bpc_order2 < kn_val_bpc_order1 - 0.5 and kn_best_order >= 4",
         text("Longer contexts help: from ", fixed(b.nats(1) / kLn2, 3), " bits (characters by frequency) to ",
              fixed(b.nats(2) / kLn2, 3), " with one character of context, down to ", fixed(b.best() / kLn2, 3),
              " at order ", b.best_order, "."),
         text("Longer contexts help less than expected: ", fixed(b.nats(1) / kLn2, 3), " bits at order 1, ",
              fixed(b.nats(2) / kLn2, 3), " at order 2, the best order only ", b.best_order, ".")});
  claim({"ngram_wall", "kn_best_order < kn_max_order",
         text("Past order ", b.best_order, " the contexts are so specific that many held-out ones were never seen and "
              "the counts that do exist are too few to trust: the held-out loss rises again. That is the wall a counted "
              "model hits: it cannot share what it learned about \"the cat\" with \"a cat\"."),
         text("Every longer order still helped, up to the longest counted here (", r.max_order, "): the quick run "
              "counts too few orders on too little text to reach the point where longer contexts stop helping."),
         Expect::full_run, {{"kn_max_order", double(r.max_order)}}});
  timing("kn_count_seconds", b.count_seconds);
  std::vector<double> orders, bits;
  for (std::size_t k = 1; k <= r.max_order; ++k) orders.push_back(double(k)), bits.push_back(b.nats(k) / kLn2);
  const LineFigureOptions style{"Kneser-Ney n-grams: held-out bits per character by order",
                                "order n (the context is n - 1 characters)", "validation bits per character", false, false, true};
  save_figure(line_figure({curve("interpolated Kneser-Ney, D = 0.75", orders, bits)}, style), "ngram_orders",
              "Validation bits per character of the counted models, order 1 (characters by frequency) to the longest.");
  return b;
}

// ---------------------------------------------------------------------------------------------
// 4. Training the GPT.

// The drop in the monitored validation bits from the second-to-last evaluation to the last.
double gpt_monitor_bpc_drop(const std::vector<double>& bpc) {
  return bpc.size() > 1 ? bpc[bpc.size() - 2] - bpc.back() : 0.0;
}

struct Trained {
  std::unique_ptr<nn::CausalLM<F>> gpt;
  History history;
  double validation_nats = 0;
};

void profile_step(const Corpus& c, const GptSettings& r) {
  // Forward and backward of a throwaway model of the same shapes, under the op profiler.
  const WindowPlan plan{r.context, r.batch, r.steps, r.evaluations, seed() + 91};
  const StepProfile prof = profile_window_steps(gpt_config(r, c.vocab), c.stream, plan, seed() + 90, 3);
  verbatim(prof.table);
  say("Three forward and backward passes under the op profiler (the time of each op; the times are this run's and "
      "move with the machine's load). The largest shares: ", prof.largest(3), ". 'linear' is every matrix product of the "
      "projections, the feed-forward and the output, on OpenBLAS; 'attention' is the causal attention over ", r.context,
      "-character windows; the elementwise ops (GELU, layer norm, the residual additions and RoPE's rotations) are "
      "the rest.");
  for (const OpTime& t : prof.times) timing(text("profile_ms_", t.op), t.total_ms() / 3.0);
}

Trained train_gpt(const Corpus& c, const Baselines& kn, const GptSettings& r) {
  Generator gen(seed());
  Trained t{std::make_unique<nn::CausalLM<F>>(gpt_config(r, c.vocab), gen), {}, 0};
  nn::CausalLM<F>& model = *t.gpt;
  const long total = r.steps;  // a multiple of r.evaluations
  const WindowPlan plan{r.context, r.batch, total, r.evaluations, seed() + 1};
  const std::size_t tokens_per_step = plan.tokens_per_step();
  Recipe recipe;
  recipe.label = "GPT", recipe.epochs = r.evaluations, recipe.batch = r.batch, recipe.seed = seed();
  recipe.lr = r.lr, recipe.weight_decay = 0.1, recipe.beta2 = 0.99, recipe.clip = 1.0;
  recipe.warmup = double(std::min(100L, total / 10)), recipe.floor = 0.05;
  recipe.checkpoint = "gpt.npz";
  table({"what", "value"},
        {row("layers, pre-norm", r.layers), row("d_model", r.d_model), row("heads", r.heads),
         row("feed-forward width", 4 * r.d_model), row("context (characters)", r.context),
         row("positions", "rotary (RoPE): queries and keys turned by their position"), row("output", "tied to the token embedding"),
         row("parameters", model.parameter_count()), row("windows per step", r.batch),
         row("characters per step", tokens_per_step), row("steps", total),
         row("characters read", text(fixed(double(total * long(tokens_per_step)) / 1e6, 1), " million, ",
                                      fixed(double(total * long(tokens_per_step)) / double(c.stream.size()), 1),
                                      " times the training text"))});
  config({{"gpt_layers", r.layers}, {"gpt_d_model", r.d_model}, {"gpt_heads", r.heads}, {"gpt_context", r.context},
          {"gpt_batch", r.batch}, {"gpt_steps", total}, {"gpt_peak_lr", r.lr},
          {"gpt_parameters", model.parameter_count()}});
  profile_step(c, r);
  const std::size_t per_point = std::size_t(total / r.evaluations) * r.batch;  // windows between validation points
  say("Training: ", describe(recipe, fit_steps(per_point, recipe)), ". Each step reads ", r.batch, " windows of ",
      r.context, " characters at random places in the training text, and every position of every window is a "
      "prediction: the loss is their mean cross-entropy, $-\\frac{1}{BL}\\sum_{b,t} \\log p(x_{b,t+1} \\mid x_{b,\\le t})$. "
      "A fixed set of ", std::min(r.monitor_entries, c.validation.size()), " validation entries is scored ",
      r.evaluations, " times along the way.");
  const Sequences monitor(c.validation.begin(), c.validation.begin() + long(std::min(r.monitor_entries, c.validation.size())));
  t.history = train_on_windows(model, c.stream, monitor, plan, recipe);

  t.validation_nats = lm::mean_of(lm::causal_lm_token_nats(model, c.validation, Vocab::bos, Vocab::eos, r.context));
  const double gpt_bits = t.validation_nats / kLn2;
  const double steps_per_s = double(t.history.steps) / t.history.seconds;
  say("After ", t.history.steps, " steps (", fixed(t.history.seconds, 0), " s, ", fixed(t.history.median_step_ms(), 0),
      " ms a step on ", t.history.threads_text(), ", ",
      fixed(steps_per_s * double(tokens_per_step) / 1000, 1), " thousand characters a second) the GPT scores ",
      fixed(gpt_bits, 3), " bits per character on all the validation entries (", fixed(t.validation_nats, 4),
      " nats), against ", fixed(kn.nats(4) / kLn2, 3), " for the 4-gram and ", fixed(kn.best() / kLn2, 3),
      " for the best counted model (order ", kn.best_order, ").");
  const double read = double(t.history.steps * long(tokens_per_step)) / double(c.stream.size());
  const std::vector<double>& curve_bpc = t.history.validation_of("bpc");
  metric("gpt_val_bpc", gpt_bits);
  metric("gpt_val_minus_kn2_bpc", gpt_bits - kn.nats(2) / kLn2);
  metric("gpt_val_minus_kn4_bpc", gpt_bits - kn.nats(4) / kLn2);
  metric("gpt_val_minus_kn_best_bpc", gpt_bits - kn.best() / kLn2);
  metric("gpt_monitor_bpc_last_drop", gpt_monitor_bpc_drop(curve_bpc));
  claim({"gpt_beats_bigram", "gpt_val_minus_kn2_bpc < -0.2",
         text("The GPT is below the counted bigram (", fixed(kn.nats(2) / kLn2, 3), " bits) by ",
              fixed(kn.nats(2) / kLn2 - gpt_bits, 3), " bits per character: it has learnt more than which character "
              "tends to follow which."),
         text("The GPT is not clearly below the counted bigram (", fixed(kn.nats(2) / kLn2, 3), " bits, a margin of ",
              fixed(kn.nats(2) / kLn2 - gpt_bits, 3), "): it has learnt little beyond which character follows which.")});
  claim({"gpt_beats_4gram", "gpt_val_minus_kn4_bpc < 0",
         text("It also beats the 4-gram, by ", fixed(kn.nats(4) / kLn2 - gpt_bits, 3), " bits per character."),
         text("It does not reach the 4-gram (", fixed(gpt_bits - kn.nats(4) / kLn2, 3), " bits behind): the quick "
              "run reads the training text ", fixed(read, 1), " times with a small model; the full run passes it."),
         Expect::full_run});
  claim({"gpt_beats_best_ngram", "gpt_val_minus_kn_best_bpc < 0",
         text("It beats the best n-gram too, by ", fixed(kn.best() / kLn2 - gpt_bits, 3), " bits per character."),
         text("It is ", fixed(gpt_bits - kn.best() / kLn2, 3), " bits behind the best n-gram: the quick run reads "
              "the training text ", fixed(read, 1), " times with a small model; the full run's larger GPT, "
              "reading the whole training text several times over, passes it."),
         Expect::full_run});
  claim({"gpt_still_improving", "gpt_monitor_bpc_last_drop > 0",
         text("Its validation loss was still falling at the last evaluation (", fixed(gpt_monitor_bpc_drop(curve_bpc), 3),
              " bits below the one before): more steps would help."),
         text("Its validation loss had stopped falling by the last evaluation (", fixed(gpt_monitor_bpc_drop(curve_bpc), 3),
              " bits against the one before)."),
         Expect::either_way});
  timing("gpt_train_seconds", t.history.seconds);
  timing("gpt_step_ms", t.history.median_step_ms());
  timing("gpt_characters_per_second", steps_per_s * double(tokens_per_step));

  // The curve: validation bits per character at each point, against the counted models.
  std::vector<BitsLevel> levels;
  const char* colors[] = {"#17becf", "#9467bd", "#8c564b", "#e377c2"};
  for (std::size_t k : {std::size_t(2), std::size_t(3), std::size_t(4), std::size_t(5)})
    if (k <= kn.validation_nats.size() && k != kn.best_order)
      levels.push_back({text("Kneser-Ney ", k, "-gram", k == 2 ? " (bigram)" : ""), kn.nats(k) / kLn2, colors[k - 2]});
  levels.push_back({text("Kneser-Ney, best (", kn.best_order, "-gram)"), kn.best() / kLn2, "#d62728"});
  const std::vector<double>& bpc = t.history.validation_of("bpc");
  LineFigureOptions style{"A character-level GPT against counted n-grams (held-out bits per character)",
                          "characters read in training (millions)", "bits per character", false, false, true};
  // From below the best of all to above the first validation point (the first training steps,
  // near log2 of the vocabulary, run off the top).
  style.ymin = std::max(0.0, std::min(kn.best() / kLn2, *std::min_element(bpc.begin(), bpc.end())) - 0.3);
  style.ymax = std::max(kn.nats(2) / kLn2, bpc.front()) + 0.3;
  save_figure(line_figure(bits_curves("GPT", t.history, plan, levels), style), "gpt_vs_ngrams",
              "The GPT's validation bits per character at each evaluation and its training loss (mean over windows "
              "of steps), against interpolated Kneser-Ney models of orders 2 (the bigram) to 5 and the best order (dashed).");
  return t;
}

// ---------------------------------------------------------------------------------------------
// 5. Inside: the loss at each position, and what the heads look at.

void loss_by_position(nn::CausalLM<F>& gpt, const Corpus& c, const Baselines& kn, const GptSettings& r) {
  // Teacher forcing made visible: the openings of many held-out entries in a few forward passes,
  // the loss of every position at once.
  const std::size_t L = r.context, chunk = 100;
  const Sequences firsts = lm::openings(c.validation, L);  // of every validation entry that long
  gpt.eval();
  const std::vector<double> gpt_by_pos = lm::causal_lm_nats_by_position(gpt, firsts, Vocab::bos, chunk);
  // The counted model on the same characters, from the same contexts.
  const std::vector<double> kn_by_pos = lm::kneser_ney_nats_by_position(*kn.model, firsts, kn.best_order);
  std::vector<double> pos(L), gb(L), kb(L);
  for (std::size_t t = 0; t < L; ++t) pos[t] = double(t), gb[t] = gpt_by_pos[t] / kLn2, kb[t] = kn_by_pos[t] / kLn2;
  const double far = mean_over(gb, L / 2);
  say("Teacher forcing, made visible: the openings of the ", firsts.size(), " validation entries of at least ", L,
      " characters go through the GPT, and the loss is read at every position of the window. Position 0 predicts the "
      "first character from <bos> alone (", fixed(gb[0], 2), " bits); over the second half of the window the loss is ",
      fixed(far, 2), " bits. The ", kn.best_order, "-gram can use at most ", kn.best_order - 1, " characters of context.");
  const LineFigureOptions style{"Loss at each position of a window: one forward pass trains them all",
                                "position in the entry (characters of context before it)", "held-out bits per character"};
  save_figure(line_figure({curve("GPT", pos, gb), curve(text("Kneser-Ney ", kn.best_order, "-gram"), pos, kb)}, style),
              "loss_by_position",
              "Held-out loss at each position of the first window of every long validation entry: the GPT (one "
              "forward pass per batch of windows) and the best counted model on the same characters.");
  metric("gpt_bpc_position0", gb[0]);
  metric("gpt_bpc_second_half", far);
  claim({"context_lowers_loss", "gpt_bpc_second_half < gpt_bpc_position0 - 1",
         text("Context pays: the GPT's loss with ", L / 2, " or more characters before it is ", fixed(gb[0] - far, 2),
              " bits below its loss from <bos> alone."),
         text("Context pays little here: the GPT's loss over the second half of the window is only ",
              fixed(gb[0] - far, 2), " bits below its loss from <bos> alone.")});
}

void the_heads(nn::CausalLM<F>& gpt, const Corpus& c, const GptSettings& r) {
  // Every head on the first windows: its weight on the previous character, and how far back it reads.
  const std::size_t L = r.context, windows = 100;
  const Sequences firsts = lm::openings(c.validation, L);
  {
    NoGrad no_grad;
    gpt.forward(lm::after_bos(firsts, 0, std::min(windows, firsts.size()), Vocab::bos));
  }
  const std::vector<Tensor<F>> first_weights = gpt.attention_weights();
  const HeadPick pick = head_for_offset(first_weights, 1);
  std::vector<std::vector<std::string>> head_rows;
  for (std::size_t l = 0; l < first_weights.size(); ++l) {
    const Array<F>& w = first_weights[l].value();
    const std::vector<double> previous = offset_mass(w, 1), distance = mean_distance_back(w);
    for (std::size_t h = 0; h < previous.size(); ++h)
      head_rows.push_back(row(l + 1, h + 1, fixed(previous[h], 2), fixed(distance[h], 1)));
  }
  say("What the heads do, over the first ", std::min(windows, firsts.size()), " of those windows: each head's weight on the "
      "character just before the query, and the mean distance back to the characters it reads.");
  table({"layer", "head", "weight on the previous character", "mean distance back"}, head_rows);
  // The heads on a short held-out opening, readable character by character.
  const std::size_t n = std::min<std::size_t>(24, L);
  const std::vector<Index> x = data::opening(c.validation.front(), n);
  {
    NoGrad no_grad;
    gpt.forward(lm::as_row(x));
  }
  const std::vector<Tensor<F>> weights = gpt.attention_weights();
  const std::vector<std::string> labels = token_labels(x, c.vocab);
  const std::size_t last = weights.size() - 1;
  const xt::xarray<double> grid = xt::cast<double>(xt::view(weights[last].value(), 0));
  const double above = max_weight_above_diagonal(weights);  // over every head of every layer
  metric("trained_weight_above_diagonal_max", above);
  claim({"trained_mask_holds", "trained_weight_above_diagonal_max == 0",
         "In the trained GPT too, every weight above the diagonal, in every head of every layer, is exactly 0.",
         text("A trained head puts weight ", sci(above), " above the diagonal: the mask leaks.")});
  const int cols = r.heads == 4 ? 2 : int(std::min<std::size_t>(r.heads, 3));
  const int rows = int((r.heads + std::size_t(cols) - 1) / std::size_t(cols));
  save_figure(head_grid(grid, labels, labels, text("Layer ", last + 1, " of the trained GPT: every head on a held-out entry"),
                        cols, 1100 * cols + 200, 1000 * rows + 150),
              "trained_heads",
              text("The attention of every head of the last layer over the opening of the first validation entry (rows: "
              "queries, columns: keys). The largest weight above the diagonal, over every head of every layer: ",
                   sci(above), "."));
  const xt::xarray<double> previous = xt::cast<double>(xt::view(weights[pick.layer].value(), 0, pick.head));
  const AttentionFigureOptions af{"The trained head with the most weight on the previous character", 1, 1500, 1450};
  save_figure(attention_figure({{previous, labels, labels,
                                 text("Layer ", pick.layer + 1, ", head ", pick.head + 1, ": ", percent(pick.mass, 0),
                                      " on the previous character")}},
                               af),
              "previous_char_head",
              "The head with the most weight one position to the left over the held-out windows, on the same "
              "characters.");
  metric("previous_char_head_mass", pick.mass);
  claim({"previous_char_head", "previous_char_head_mass >= 0.3",
         text("Layer ", pick.layer + 1, ", head ", pick.head + 1, " puts ", percent(pick.mass, 0), " of its weight "
              "on the previous character: a reader of the last character, what a bigram counts."),
         text("No head specializes on the previous character: the most any head puts there is ",
              percent(pick.mass, 0), " (layer ", pick.layer + 1, ", head ", pick.head + 1, ").")});
  // The attention explorer (lessons/kit/explorer.hpp): every head of every layer over a whole window.
  const std::vector<Index> window = data::opening(c.validation.front(), L);
  ExplorerPage page{"The trained GPT reading a held-out entry", "characters (queries)", "characters (keys)",
                    text("The first ", window.size() - 1, " characters of the first validation entry after <bos>. A "
                         "character reads only itself and those before it: choose a layer and a head (or all of a "
                         "layer's heads, overlaid), hover a character to read its weights; the model view shows "
                         "every head at once, and the neuron view one character's scores split into the products of "
                         "its query and each key, dimension by dimension (click a character to choose it)."),
                    {causal_lm_attention_input(gpt, c.vocab, window, "\"" + data::char_text(c.vocab, window) + "\"")}};
  show_explorer(page, "explorer",
                "The attention explorer: every head of the trained GPT on a held-out entry; hover a character to see "
                "what it reads, click it to see its scores split into query-key products (build/bin/inspect gpt makes "
                "one for a prompt of your own)");
}

// ---------------------------------------------------------------------------------------------
// 6. The test split, once.

void the_test(nn::CausalLM<F>& gpt, const Corpus& c, const Baselines& kn, const GptSettings& r) {
  const double gpt_nats = lm::mean_of(lm::causal_lm_token_nats(gpt, c.test, Vocab::bos, Vocab::eos, r.context));
  const std::vector<double> kn_nats = kn.model->mean_nats(c.test);
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(4), std::size_t(5), kn.best_order})
    if (k <= kn_nats.size())
      rows.push_back(row(text("Kneser-Ney ", k, "-gram", k == kn.best_order ? " (best on validation)" : ""),
                         fixed(kn_nats[k - 1], 4), fixed(kn_nats[k - 1] / kLn2, 4)));
  rows.push_back(row("GPT", fixed(gpt_nats, 4), fixed(gpt_nats / kLn2, 4)));
  say("The ", c.split.test.size(), " test entries (", data::predicted_characters(c.test), " characters), untouched until now, scored "
      "once by every model, the n-gram order chosen on validation:");
  table({"model", "test nats / char", "test bits / char"}, rows);
  for (std::size_t k = 1; k <= kn_nats.size(); ++k) metric(text("kn_test_bpc_order", k), kn_nats[k - 1] / kLn2);
  metric("kn_best_test_bpc", kn_nats[kn.best_order - 1] / kLn2);
  metric("gpt_test_bpc", gpt_nats / kLn2);
  // gpt.npz's model card, so that inspect (and a test) can run the model: lessons/kit/transformer_card.
  write_gpt_card("gpt", gpt_config(r, c.vocab), c.vocab, {"gpt_test_bpc", gpt_nats / kLn2});
  metric("gpt_test_minus_kn_best_bpc", (gpt_nats - kn_nats[kn.best_order - 1]) / kLn2);
  const double uni = kn_nats[0] / kLn2, bi = kn_nats[1] / kLn2, bits = gpt_nats / kLn2;
  claim({"gpt_passes_low_order_ngrams_on_test", "gpt_test_bpc < kn_test_bpc_order2 - 0.2 and gpt_test_bpc < kn_test_bpc_order1 - 1",
         text("On the test split the GPT (", fixed(bits, 3), " bits per character) passes the counted unigram (",
              fixed(uni, 3), ") and bigram (", fixed(bi, 3), "), both counted on the training text: it predicts from "
              "more than the previous character."),
         text("On the test split the GPT (", fixed(bits, 3), " bits per character) does not clearly pass the counted "
              "unigram (", fixed(uni, 3), ") and bigram (", fixed(bi, 3), ").")});
  claim({"gpt_passes_4gram_on_test", "gpt_test_bpc < kn_test_bpc_order4",
         text("It passes the 4-gram on the test split as well (", fixed(kn_nats[3] / kLn2, 3), ")."),
         text("The 4-gram (", fixed(kn_nats[3] / kLn2, 3), ") still beats it on the test split: the quick run's GPT is "
              "small and reads little; the full run's passes the 4-gram."),
         Expect::full_run});
  const double best = kn_nats[kn.best_order - 1] / kLn2;
  claim({"gpt_passes_best_ngram_on_test", "gpt_test_minus_kn_best_bpc < 0",
         text("And it passes the best n-gram on the test split too, by ", fixed(best - bits, 3), " bits per character."),
         text("The best n-gram (", fixed(best, 3), ") still beats it on the test split, by ", fixed(bits - best, 3),
              " bits per character: the quick run's GPT is small and reads little; the full run's passes it."),
         Expect::full_run});
  say("A GPT also writes, one character at a time: lesson 12 samples from GPTs like this one and measures what each "
      "new character costs, with and without the KV cache, and with keys and values shared between heads.");
}

}  // namespace

int main(int argc, char** argv) {
  LessonInfo info{"11_gpt", "A character-level GPT on real English text",
                  "the causal mask, a GPT trained on the fortunes corpus against Kneser-Ney n-grams, the loss by "
                  "position and the heads",
                  "gpt_test_bpc", "gpt_vs_ngrams", {"gpt.npz"}};
  return run_lesson(info, argc, argv, [] {
    const GptSettings r = settings_of_run();
    section("1. The corpus: fortune cookies, character by character");
    const Corpus corpus = load_fortunes_corpus(r.train_entries, r.held_out_entries);
    the_corpus(corpus);

    section("2. Looking only left: the causal mask");
    Generator gen(seed());
    nn::CausalLM<F> untrained(gpt_config(r, corpus.vocab), gen);
    looking_left(untrained, corpus);

    section("3. Counted baselines: Kneser-Ney n-grams");
    const Baselines kn = ngram_baselines(corpus, r);

    section("4. Training the GPT");
    Trained gpt = train_gpt(corpus, kn, r);

    section("5. Inside the trained GPT: every position at once, and its heads");
    loss_by_position(*gpt.gpt, corpus, kn, r);
    the_heads(*gpt.gpt, corpus, r);

    section("6. The test split, once");
    the_test(*gpt.gpt, corpus, kn, r);
  });
}
