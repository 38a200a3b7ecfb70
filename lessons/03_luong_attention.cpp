// Lesson 03: Luong attention, and what a score function costs.
//
// Luong, Pham and Manning (2015) kept Bahdanau's idea and simplified the decoder: attend with the
// CURRENT decoder state h_t, after the recurrent step, and predict from tanh(W_c [c_t; h_t]). They
// compared three scores: dot (q^T k), general (q^T W k) and concat (v^T tanh(W [q; k]), which is
// additive attention). We train all of them, plus Bahdanau's additive score, in one decoder with one
// budget on the date task of lesson 02, and measure accuracy, parameters and the cost of each score,
// alone and inside a whole training step. Last, Luong's local attention: a window placed where the
// decoder predicts (local-p) or at its own step (local-m), and where each puts it. The four global
// models are kept (luong_<score>.npz beside its card): `inspect luong` runs them on your own dates.
#include <algorithm>
#include <memory>
#include <numeric>
#include <optional>

#include <xtensor/xbuilder.hpp>

#include "lessons/kit/decoded_attention.hpp"
#include "lessons/kit/explorer.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/seq2seq.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/date_task.hpp"
#include "nn/data/dates.hpp"
#include "nn/rnn/seq2seq.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

const std::vector<std::string> kScores = {"dot", "general", "concat", "additive"};

// Each score between a decoder state q = h_t and an annotation k = h_j, in TeX.
const std::vector<std::string> kFormulas = {"$q^\\top k$", "$q^\\top W k$", "$v^\\top \\tanh(W [q; k])$",
                                            "$v^\\top \\tanh(W_q\\, q + W_k\\, k)$"};

// ---------------------------------------------------------------------------------------------
// 1. The decoder and its four scores

void the_decoder(const Seq2SeqPlan& s, const data::DateTask& task) {
  say("The data are lesson 02's: ", s.examples, " generated dates in ", data::num_date_formats(), " formats, rewritten "
      "as YYYY-MM-DD, split by distinct input into ", task.train.size(), " train, ", task.validation.size(),
      " validation and ", task.test.size(), " test examples.");
  say("Bahdanau's decoder attends with its previous state $s_{t-1}$ and feeds the context into its GRU. Luong et al. "
      "attend after the recurrent step, with the current state $h_t$, and use the context only for the prediction. "
      "With $\\bar h_j$ the encoder's annotations (keys and values):");
  say("$$h_t = \\mathrm{GRU}(\\mathrm{embed}(y_{t-1}),\\, h_{t-1}), \\qquad a_t = \\mathrm{softmax}_j\\big("
      "\\mathrm{score}(h_t, \\bar h_j)\\big), \\qquad c_t = \\sum_j a_{tj}\\, \\bar h_j,$$");
  say("$$\\tilde h_t = \\tanh(W_c\\, [c_t; h_t]), \\qquad \\mathrm{logits}_t = W_o\\, \\tilde h_t.$$");
  say("Because $h_t$ does not depend on the attention, teacher-forced training runs the decoder GRU over all $T$ steps "
      "first and then attends with all $T$ queries in one call: scores $(B, T, S)$ from a batched matrix product "
      "instead of $T$ separate calls. (Luong's input-feeding variant puts $\\tilde h_{t-1}$ back into the GRU and loses "
      "this; we leave it out.) At test time greedy decoding still goes one step at a time.");
  say("The four scores, between the decoder state $q = h_t$ (size $H_d$) and a key $k = \\bar h_j$ (size $2H_e$; we "
      "set $H_e = H_d/2$ so that the dot product is defined). Each is an nn::Attention with its own Score; the masked "
      "softmax and the weighted sum are the same code for all four:");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < kScores.size(); ++i) {
    Generator g(0);
    const auto score = nn::make_score<float>(kScores[i], s.model.decoder_hidden, s.model.decoder_hidden, g,
                                             s.model.attention_hidden);
    rows.push_back(row(kScores[i], kFormulas[i], score->parameter_count()));
  }
  table({"score", "$\\mathrm{score}(q, k)$", "parameters"}, rows);
  say("Concat is Luong's name for a single matrix over the stacked $[h_t; \\bar h_j]$; splitting that matrix in two, "
      "$W [q; k] = W_q q + W_k k$, gives Bahdanau's additive score, so the two compute the same family of functions and "
      "differ only in how the weights are laid out. Dot has no parameters at all: it asks the encoder and the decoder "
      "to put their states in one space.");
}

// ---------------------------------------------------------------------------------------------
// 2. One budget for all four

// The sizes (section 1 shows them) and the one recipe all four models train with.
Seq2SeqPlan choose_sizes() {
  Seq2SeqPlan p;
  p.examples = full_or_quick<std::size_t>(12000, 4000);
  p.model.style = nn::rnn::DecoderStyle::Luong;
  p.model.embed = full_or_quick(32, 16);
  p.model.decoder_hidden = p.model.attention_hidden = full_or_quick(64, 32);
  p.model.encoder_hidden = p.model.decoder_hidden / 2;  // annotations 2He == Hd, so the dot score is defined
  Recipe& r = p.recipe;  // Adam at a constant rate, clipped; a quick run takes more, smaller epochs
  r.epochs = epochs(4, 6), r.batch = 64, r.lr = 5e-3, r.decay = Decay::constant, r.clip = 1.0, r.seed = seed() + 11;
  record(p);
  return p;
}

struct Trained {
  std::string score;
  std::unique_ptr<nn::rnn::Seq2Seq> model;
  History history;
  nn::rnn::Evaluation test;
  Timing step, attention;  // interleaved medians (section 3)
};

std::vector<Trained> train_all(const Seq2SeqPlan& s, const data::DateTask& task) {
  say("Each model gets the same data order, the same initial seed and the same recipe: ",
      describe(s.recipe, fit_steps(task.train.size(), s.recipe)), ". Hidden size ", s.model.decoder_hidden,
      ", attention width ", s.model.attention_hidden, " (additive and concat).");
  std::vector<Trained> runs;
  for (const std::string& score : kScores) {
    Trained r;
    r.score = score;
    nn::rnn::Seq2SeqConfig c = s.model;
    c.score = score;
    Generator gen(seed() + 3);
    r.model = std::make_unique<nn::rnn::Seq2Seq>(c, task.source_vocab.size(), task.target_vocab.size(), gen);
    Recipe rc = s.recipe;
    rc.label = score;
    rc.checkpoint = "luong_" + score + ".npz";  // with its card: what `inspect luong` runs
    r.history = train_seq2seq(*r.model, task, rc);
    r.test = nn::rnn::evaluate(*r.model, task.test, task.pairs.test, task.target_vocab);
    write_model_card("luong_" + score, c, task.source_vocab, task.target_vocab,
                     {"test_exact_match_" + score, r.test.exact_match, task.test.size(),
                      "the test split of the generated dates (make_date_task(examples, seed))"});
    runs.push_back(std::move(r));
  }
  return runs;
}

void compare_accuracy(const std::vector<Trained>& runs, const data::DateTask& task) {
  std::vector<std::vector<std::string>> rows;
  double lo = 1, hi = 0;
  for (const Trained& r : runs) {
    rows.push_back(row(r.score, r.model->attention_parameters(), r.model->parameter_count(), fixed(r.test.exact_match, 4),
                       fixed(r.test.char_accuracy, 4), fixed(r.history.validation_of("loss").back(), 4)));
    lo = std::min(lo, r.test.exact_match), hi = std::max(hi, r.test.exact_match);
    record_scores("_" + r.score, r.test, r.history);  // test_exact_match_<score>, test_char_accuracy_, validation_loss_
    metric("parameters_" + r.score, double(r.model->parameter_count()));
    metric("attention_parameters_" + r.score, double(r.model->attention_parameters()));
  }
  table({"score", "attention parameters", "all parameters", "test exact match", "test per-character accuracy",
         "validation loss"}, rows);
  say("Exact match counts a date as right only when all ten characters and the stop are; ", task.test.size(),
      " test inputs. A decoder that ignores its input gets none of them.");
  std::vector<std::string> each;
  for (const Trained& r : runs) each.push_back(r.score + " " + fixed(r.test.exact_match, 3));
  claim({"all_four_learn",
         "min(test_exact_match_dot, test_exact_match_general, test_exact_match_concat, test_exact_match_additive) >= 0.8",
         text("All four scores learn the task: test exact match ", listing(each), "."),
         text("Not every score learned the task in this run: test exact match ", listing(each), ".")});
  claim({"all_four_solve",
         "min(test_exact_match_dot, test_exact_match_general, test_exact_match_concat, test_exact_match_additive) >= 0.97",
         text("With the full budget each of the four solves the task: the lowest exact match is ", fixed(lo, 3), "."),
         text("The lowest exact match of the four is ", fixed(lo, 3), " after this run's ", runs[0].history.steps,
              " steps of a smaller model; the full run's budget takes each of them to 0.97 or more."),
         Expect::full_run});
  claim({"four_scores_close", "max(test_exact_match_dot, test_exact_match_general, test_exact_match_concat, "
                              "test_exact_match_additive) - min(test_exact_match_dot, test_exact_match_general, "
                              "test_exact_match_concat, test_exact_match_additive) <= 0.06",
         text("With one budget the four end within ", fixed(hi - lo, 3), " of each other in exact match: the dot "
              "score, with no parameters of its own, keeps up with the three that learn theirs."),
         text("With one budget the four end ", fixed(hi - lo, 3), " apart in exact match (", listing(each), "): at this "
              "budget the choice of score made a difference.")});
  std::vector<Run> curves;
  for (const Trained& r : runs) curves.push_back({r.score, &r.history});
  CurvesFigureOptions style{"Learning curves of the four scores"};
  style.ylabel = "nats per character (log scale)";
  save_figure(loss_curves(curves, style), "loss_curves",
              "Loss curves of the four scores: training loss by step, validation loss by epoch");
}

// ---------------------------------------------------------------------------------------------
// 3. What each score costs

void speed(std::vector<Trained>& runs, const Seq2SeqPlan& s, const data::DateTask& task) {
  const double load_at_start = load_average();
  const int rounds = full_or_quick(60, 20);
  const data::Seq2SeqBatch batch = data::make_seq2seq_batch(task.train, data::first_rows(s.recipe.batch));
  const std::vector<ScoreCost> costs = time_scores(s.model, kScores, task.source_vocab.size(), task.target_vocab.size(),
                                                   batch, rounds, seed() + 5);
  for (std::size_t i = 0; i < runs.size(); ++i) runs[i].step = costs[i].step, runs[i].attention = costs[i].attention;
  say("Times depend on the machine and its load (load average ", fixed(load_at_start, 1), " when the timing "
      "started), so we compare the scores with each other, never with a clock: CPU time, which counts only this "
      "program's own work, as medians of ", rounds, " rounds in which the four models take turns (a burst of load "
      "hits all four alike). One training batch: $B$ = ", batch.source.ids.shape()[0], ", $T$ = ",
      batch.decoder_input.ids.shape()[1], " queries, $S$ = ", batch.source.ids.shape()[1], " keys, $H_d = 2H_e$ = ",
      s.model.decoder_hidden, ", $A$ = ", s.model.attention_hidden, ", on one thread, so that CPU time is the work "
      "itself. Attention is the attention module alone, forward and backward, on random inputs of those shapes; step is a "
      "whole training step (forward, backward, clipping, Adam) of a fresh model.");
  const Trained &dot = runs[0], &additive = runs[3];
  std::vector<std::vector<std::string>> rows;
  for (const Trained& r : runs) {
    rows.push_back(row(r.score, fixed(r.attention.cpu_ms / dot.attention.cpu_ms, 2), fixed(r.step.cpu_ms / dot.step.cpu_ms, 2),
                       percent(r.attention.cpu_ms / r.step.cpu_ms), fixed(r.attention.cpu_ms, 2), fixed(r.step.cpu_ms, 1)));
    timing("cpu_ms_attention_" + r.score, r.attention.cpu_ms);
    timing("cpu_ms_step_" + r.score, r.step.cpu_ms);
    timing("ms_attention_" + r.score, r.attention.wall_ms);
    timing("ms_step_" + r.score, r.step.wall_ms);
    timing("cpu_ms_step_in_training_" + r.score, r.history.median_step_cpu_ms());
  }
  table({"score", "attention CPU time, × dot's", "step CPU time, × dot's", "attention's share of the step",
         "attention CPU ms (this machine)", "step CPU ms (this machine)"}, rows);
  const double attention_ratio = additive.attention.cpu_ms / dot.attention.cpu_ms;
  const double step_ratio = additive.step.cpu_ms / dot.step.cpu_ms;
  const double share = additive.attention.cpu_ms / additive.step.cpu_ms;
  timing("load_average_at_start", load_at_start);
  timing("attention_ratio_additive_over_dot", attention_ratio);
  timing("step_ratio_additive_over_dot", step_ratio);
  claim({"dot_attention_cheaper", "attention_ratio >= 2",
         text("The dot score is the cheap one: the additive attention takes ", fixed(attention_ratio, 1), " times the "
              "CPU time of the dot attention, forward and backward."),
         text("The additive attention takes only ", fixed(attention_ratio, 1), " times the CPU time of the dot "
              "attention here, less than twice."),
         Expect::every_run, {{"attention_ratio", attention_ratio}}});
  claim({"step_gap_smaller", "step_ratio < 2 and step_ratio < attention_ratio and additive_share < 0.5",
         text("In a whole training step the gap shrinks to ", fixed(step_ratio, 2), " times, and the additive attention "
              "is ", percent(share, 0), " of its step: the bidirectional encoder GRU and the decoder GRU, stepped one "
              "position at a time, cost the same for all four scores and most of the step."),
         text("In a whole training step the additive model takes ", fixed(step_ratio, 2), " times the dot model's CPU "
              "time, against ", fixed(attention_ratio, 1), " times for the attention alone; its attention is ",
              percent(share, 0), " of its step."),
         Expect::every_run, {{"attention_ratio", attention_ratio}, {"step_ratio", step_ratio}, {"additive_share", share}}});
  say("Why the attention costs differ: dot is one batched matrix product, $(B, T, H_d) \\times (B, H_d, S)$, about "
      "$B T S H_d$ multiply-adds, run by the fused attention op. General adds one projection of the keys, $B S H_d^2$. "
      "Additive and concat project queries and keys, $B (T + S) A H_d$, and then need $\\tanh(W_q q_i + W_k k_j)$ for "
      "every pair: $B T S A$ values of $\\tanh$, reduced with $v$. The engine does that in one op "
      "(core/ops/additive_score), but the op must keep the $(B, T, S, A)$ values of $\\tanh$, a tensor $A$ times bigger "
      "than the scores, for the backward pass, which reads them all again. Where attention is the whole model, as in "
      "the Transformer of the coming lessons, the score's cost is the model's cost; the Transformer uses the dot "
      "score, scaled by $1/\\sqrt{d}$.");
  plots::Figure fig(2000, 900, 1, 2);
  fig.title("Four attention scores, one budget");
  std::vector<double> exact, per_char, step_rel, attention_rel;
  for (const Trained& r : runs) {
    exact.push_back(r.test.exact_match), per_char.push_back(r.test.char_accuracy);
    step_rel.push_back(r.step.cpu_ms / dot.step.cpu_ms), attention_rel.push_back(r.attention.cpu_ms / dot.attention.cpu_ms);
  }
  bar_panel(fig.panel(0).title("Held-out test accuracy").xlabel("score").ylabel("accuracy"), kScores,
            {{"exact match", exact}, {"per character", per_char}}, 2, 1.15);
  bar_panel(fig.panel(1).title("CPU time relative to dot (median)").xlabel("score").ylabel("× the dot model's time"),
            kScores, {{"training step", step_rel}, {"attention fwd+bwd", attention_rel}}, 1);
  save_figure(fig, "comparison", "Test accuracy of the four scores after one budget, and their CPU time relative to the "
                                 "dot score's, for the attention alone and for a whole training step (interleaved "
                                 "medians in one run)");
}

// ---------------------------------------------------------------------------------------------
// 4. Where each score looks

void four_ways_of_looking(const std::vector<Trained>& runs, const data::DateTask& task) {
  const std::size_t r = data::first_long_form(task.pairs.test);  // with words in it, so the maps have something to skip
  const data::Pair& pr = task.pairs.test[r];
  std::vector<AttentionMap> maps;  // lessons/kit/decoded_attention
  for (const Trained& run : runs)
    maps.push_back(decoded_map(run.test, r, pr.source, task.target_vocab, run.score + ": " + run.test.predictions[r]));
  save_figure(decoded_figure(maps, "Each score's attention on the test input \"" + pr.source + "\"", 2, 2200, 1100), "alignments",
              "The same test input under the four scores: rows are output characters, columns input characters");
  say("Luong's query is the state after reading $y_{t-1}$, the one that predicts $y_t$, so each row says where the "
      "character being written comes from. To compare the maps with a number rather than by eye: over the test "
      "inputs that spell the year with four digits, the share of attention the four year-writing steps put on those "
      "four input characters (lesson 02's measure).");
  std::vector<std::vector<std::string>> rows;
  data::YearAttention ya;
  std::vector<std::string> names;
  for (const Trained& run : runs) {
    ya = data::year_attention(run.test.decoded.attention, task.pairs.test);
    rows.push_back(row(run.score, percent(ya.mass)));
    metric("test_year_attention_" + run.score, ya.mass);
    names.push_back("test_year_attention_" + run.score);
  }
  metric("test_year_attention_uniform", ya.uniform);
  table({"score", "attention on the year's digits"}, rows);
  const std::string lowest = "min(" + names[0] + ", " + names[1] + ", " + names[2] + ", " + names[3] + ")";
  claim({"all_four_read_the_year", lowest + " >= 0.75 and " + lowest + " >= 2 * test_year_attention_uniform",
         text("All four look where the answer is: each puts at least ", percent(0.75, 0), " of the year steps' "
              "attention on the year's four digits, where attention spread evenly would put ", percent(ya.uniform), "."),
         text("Not all four look at the year's digits when writing the year: some score puts less than ",
              percent(0.75, 0), " of that attention there (spread evenly: ", percent(ya.uniform), ").")});
  say("A model can be right while its map is blurred or shifted by a character: the bidirectional encoder has already "
      "mixed each character with its neighbours, so the annotation next to a digit also knows the digit.");
}

// The attention explorer (lessons/kit/explorer.hpp) with the four scores as its four "layers": on a
// test input all four decode alike, the same output characters read the same input characters
// under each score, one click apart. Inputs of different written forms, where the four agree.
void explore_the_four(const std::vector<Trained>& runs, const data::DateTask& task) {
  ExplorerPage page;
  page.title = "Lesson 03: four scores on held-out dates";
  page.query_side = "output characters", page.key_side = "input characters";
  page.note = "Each layer of this page is one trained model of the run, named by its score; choose one and hover an "
              "output character to see which input characters it reads.";
  std::vector<NamedEvaluation> four;  // each score one layer of the page
  for (const Trained& r : runs) four.push_back({r.score, &r.test});
  for (std::size_t i : data::varied_examples(task.pairs.test, 24)) {
    const auto alike = [&](const Trained& r) { return r.test.decoded.ids[i] == runs[0].test.decoded.ids[i]; };
    if (!std::all_of(runs.begin(), runs.end(), alike)) continue;
    page.inputs.push_back(decoded_input(four, i, task.pairs.test[i].source, task.target_vocab));
    if (page.inputs.size() == 6) break;
  }
  if (page.inputs.empty()) {
    say("(No varied test input is decoded alike by all four models in this run, so there is no explorer to set "
        "them side by side.)");
    return;
  }
  show_explorer(page, "explorer",
                text("The attention explorer: ", counted(long(page.inputs.size()), "test input"), " that all four "
                     "models decode alike; each score is one layer, so switching layers compares the scores"));
}

// ---------------------------------------------------------------------------------------------
// 5. Local attention: predict where to look, or follow the step

constexpr std::size_t kWindow = 5;  // D: the window [p_t - D, p_t + D], sigma = D / 2

// A local model (general score) trained from the global models' first draw with their recipe, its
// held-out scores, and where its window went on the test inputs.
struct LocalRun {
  std::string name, key;  // "local-p" and the metrics' suffix "local_p"
  std::size_t parameters = 0;
  History history;
  nn::rnn::Evaluation test;
  double year_share = 0;                     // of the year steps' attention, on the year's digits
  data::YearWindow window;                   // the year's digit inside the window?
  data::DateFields fields;                   // which fields of the date it gets right
  std::vector<std::vector<double>> centres;  // p_t per test example and output step (teacher-forced)
};

LocalRun train_local(const Seq2SeqPlan& s, const data::DateTask& task, nn::rnn::LocalAlignment alignment,
                     const std::string& name, const std::string& key) {
  LocalRun r;
  r.name = name, r.key = key;
  nn::rnn::Seq2SeqConfig c = s.model;
  c.score = "general", c.local_window = kWindow, c.local_alignment = alignment;
  Generator gen(seed() + 3);  // the global models' draw: the same encoder, decoder and score weights to start
  nn::rnn::Seq2Seq model(c, task.source_vocab.size(), task.target_vocab.size(), gen);
  r.parameters = model.parameter_count();
  Recipe rc = s.recipe;
  rc.label = r.name;
  r.history = train_seq2seq(model, task, rc);
  r.test = nn::rnn::evaluate(model, task.test, task.pairs.test, task.target_vocab);
  // Local weights sum to less than 1 (the Gaussian), so the year's share is taken of each row's total.
  r.year_share = data::year_attention(data::row_shares(r.test.decoded.attention), task.pairs.test).mass;
  r.centres = nn::rnn::window_centres(model, task.test);
  r.window = data::year_window(r.centres, task.pairs.test, double(kWindow));
  record_scores("_" + r.key, r.test, r.history);
  metric("test_year_attention_" + r.key, r.year_share);
  metric(r.key + "_year_digit_in_window", r.window.within);
  metric(r.key + "_year_centre_distance", r.window.mean_distance);
  r.fields = data::date_fields(r.test.predictions, task.pairs.test);
  metric("test_year_right_" + r.key, r.fields.year), metric("test_month_right_" + r.key, r.fields.month);
  metric("test_day_right_" + r.key, r.fields.day);
  timing("cpu_ms_step_in_training_" + r.key, r.history.median_step_cpu_ms());
  return r;
}

void local_attention(const std::vector<Trained>& runs, const Seq2SeqPlan& s, const data::DateTask& task) {
  const Trained& global = runs[1];  // general, global
  const LocalRun p = train_local(s, task, nn::rnn::LocalAlignment::predictive, "local-p", "local_p");
  const LocalRun m = train_local(s, task, nn::rnn::LocalAlignment::monotonic, "local-m", "local_m");
  say("Global attention compares every query with every source position. Luong et al. also proposed local attention: "
      "a window of $2D + 1$ positions around a centre $p_t$, and two ways to place it. In the predictive form "
      "(local-p) the decoder predicts the centre from its state; in the monotonic form (local-m) the centre is the "
      "output step itself, on the bet that input and output run in step:");
  say("$$p_t^{\\text{local-p}} = (S - 1)\\,\\sigma\\big(v_p^\\top \\tanh(W_p h_t)\\big), \\qquad "
      "p_t^{\\text{local-m}} = \\min(t, S - 1), \\qquad a_t(s) = "
      "\\mathrm{softmax}_{\\lvert s - p_t \\rvert \\le D}\\big(\\mathrm{score}(h_t, \\bar h_s)\\big)\\, "
      "\\exp\\Big(-\\frac{(s - p_t)^2}{2\\sigma^2}\\Big), \\qquad \\sigma = D / 2,$$");
  say("with $S$ the input's length. The window's edges jump as $p_t$ moves, so they pass no gradient; local-p's "
      "$p_t$ learns through the Gaussian alone, whose derivative is $g\\,(s - p_t)/\\sigma^2$ (the op core of "
      "nn/attention/local_p.cpp, gradient-checked). Local-m learns nothing about where to look: its $p_t$ is a "
      "constant, so the decoder needs only its step number (nn/attention/local_m.cpp; the paper's local-m has no "
      "Gaussian, we keep it so that the two forms differ only in the centre). Both use the general score (Luong's "
      "choice), $D = ", kWindow, "$, and the recipe and first draw of global general above; local-p's predictor adds "
      "$W_p$ and $v_p$, ", p.parameters - global.model->parameter_count(), " parameters, local-m none. The output "
      "writes the year first; most written forms put it last.");
  metric("middle_window_year_digit_in_window", p.window.middle_within);
  std::vector<std::vector<std::string>> rows = {
      row("global", fixed(global.test.exact_match, 4), fixed(global.test.char_accuracy, 4),
          fixed(global.history.validation_of("loss").back(), 4),
          percent(data::year_attention(global.test.decoded.attention, task.pairs.test).mass), "(all)",
          global.model->parameter_count(), fixed(global.history.median_step_cpu_ms(), 1))};
  for (const LocalRun* r : {&p, &m})
    rows.push_back(row(text(r->name, ", D = ", kWindow), fixed(r->test.exact_match, 4), fixed(r->test.char_accuracy, 4),
                       fixed(r->history.validation_of("loss").back(), 4), percent(r->year_share),
                       percent(r->window.within), r->parameters, fixed(r->history.median_step_cpu_ms(), 1)));
  table({"general score", "test exact match", "test per-character accuracy", "validation loss",
         "share of the year steps' attention on the year", "year digit inside the window", "parameters",
         "median training step, CPU ms"}, rows);
  claim({"local_p_learns", "test_exact_match_local_p >= 0.8",
         text("Local-p learns the task: test exact match ", fixed(p.test.exact_match, 3), " (global general: ",
              fixed(global.test.exact_match, 3), ")."),
         text("Local-p reaches only ", fixed(p.test.exact_match, 3), " test exact match at this budget (global general: ",
              fixed(global.test.exact_match, 3), "): it learns more slowly, since its centre must move first; the full "
              "run's budget takes it to 0.8 or more."),
         Expect::full_run});
  claim({"local_p_keeps_up", "test_exact_match_local_p >= test_exact_match_general - 0.02",
         text("Seeing at most ", 2 * kWindow + 1, " input characters per step costs it nothing here: ",
              fixed(p.test.exact_match, 3), " against ", fixed(global.test.exact_match, 3), " for global attention."),
         text("The window costs accuracy here: ", fixed(p.test.exact_match, 3), " against ",
              fixed(global.test.exact_match, 3), " for global attention, more than 0.02 below."),
         Expect::either_way});
  claim({"window_finds_the_year",
         "local_p_year_digit_in_window >= 0.8 and local_p_year_digit_in_window >= middle_window_year_digit_in_window + 0.2",
         text("The predicted centre goes where the answer is: for ", percent(p.window.within), " of the year-writing "
              "steps the digit being written lies inside the window (mean distance from $p_t$ ",
              fixed(p.window.mean_distance, 2), " characters), where a window fixed at the middle of the input would "
              "hold it for ", percent(p.window.middle_within), "."),
         text("The window holds the digit being written on only ", percent(p.window.within), " of the year-writing "
              "steps (mean distance from $p_t$ ", fixed(p.window.mean_distance, 2), " characters; a window fixed at the "
              "middle of the input: ", percent(p.window.middle_within), ").")});
  claim({"local_m_window_off_the_year",
         "local_m_year_digit_in_window <= 0.5 and local_m_year_digit_in_window <= local_p_year_digit_in_window - 0.4",
         text("Local-m's window, walking in step with the output, holds the year digit being written on only ",
              percent(m.window.within), " of the year-writing steps (local-p's: ", percent(p.window.within), "): the "
              "year is written first and read, in most forms, last."),
         text("Local-m's window holds the year digit being written on ", percent(m.window.within), " of the "
              "year-writing steps, against local-p's ", percent(p.window.within), ": more of these inputs put the "
              "year near their start than the formats suggest.")});
  claim({"local_m_behind", "test_exact_match_local_m <= test_exact_match_local_p - 0.03",
         text("Following the step costs accuracy: local-m reaches ", fixed(m.test.exact_match, 3), " test exact match, "
              "against ", fixed(p.test.exact_match, 3), " for local-p and ", fixed(global.test.exact_match, 3),
              " for global attention."),
         text("Following the step costs little here: local-m reaches ", fixed(m.test.exact_match, 3), " test exact "
              "match, against ", fixed(p.test.exact_match, 3), " for local-p and ", fixed(global.test.exact_match, 3),
              " for global attention."),
         Expect::either_way});
  claim({"local_m_year_without_the_digits", "test_year_right_local_m >= 0.9 and local_m_year_digit_in_window <= 0.5",
         text("Yet local-m writes the year right on ", percent(m.fields.year), " of the test inputs (month ",
              percent(m.fields.month), ", day ", percent(m.fields.day), "), with the digits mostly outside its window: "
              "the year reaches it another way, through annotations the bidirectional encoder computed from the whole "
              "input, or through the decoder's first state, the encoder's summary (this lesson does not separate the "
              "two)."),
         text("Local-m writes the year right on only ", percent(m.fields.year), " of the test inputs (month ",
              percent(m.fields.month), ", day ", percent(m.fields.day), ") with the digit being written inside its "
              "window on ", percent(m.window.within), " of the year steps; the full run's budget teaches it to write "
              "the year right on 90% or more with the digits mostly out of view."),
         Expect::full_run});
  say("This implementation computes the score for every position and masks outside the window, so neither form saves "
      "work at these lengths: the step times above, taken one model after another rather than interleaved as in "
      "section 3, differ by the machine's load, not by design. Local attention pays off only when the score is "
      "computed inside the window alone, over inputs much longer than $2D + 1$.");
  // The figure: p_t step by step for four test inputs of different lengths, and one input's maps.
  std::vector<plots::Series> lines;
  const std::vector<std::size_t> picked = data::lengths_apart(task.pairs.test, 4, 4);
  std::vector<double> steps(p.centres[picked.front()].size());  // every target is YYYY-MM-DD: 11 steps
  std::iota(steps.begin(), steps.end(), 0.0);
  for (std::size_t i = 0; i < picked.size(); ++i) {
    const data::Pair& pr = task.pairs.test[picked[i]];
    lines.push_back(curve("\"" + pr.source + "\"", steps, p.centres[picked[i]]));
    lines.back().color = plots::series_color(i);
    const std::optional<std::size_t> at = data::year_digits_at(pr);  // the year's digits, written at steps 0..3
    if (!at) continue;                                                // a two-digit year: nothing to mark
    lines.push_back(plus_marks(xt::arange<double>(4.0), xt::arange<double>(4.0) + double(*at), 0.18, 0.45));
    lines.back().color = plots::series_color(i);
  }
  lines.push_back(reference("local-m: p_t = t", steps, steps));
  const LineFigureOptions style{text("Where the window goes (D = ", kWindow, "): p_t on test inputs, + their year's digits"),
                                "Output step t (t = 0..3 write the year)", "Window centre p_t (input position)",
                                false, false, false, 0.0, std::nullopt, 1800, 950};
  save_figure(line_figure(lines, style), "window_centres",
              "Local-p's predicted centre $p_t$ (teacher-forced) at each output step of four test inputs of different "
              "lengths and formats, local-m's $p_t = t$ (dashed; on an input shorter than the output it stops at the "
              "last character), and + where each input's year digits are, at the steps that write them; the window "
              "covers $p_t \\pm " + std::to_string(kWindow) + "$. Steps 5 and 6 write the month, 8 and 9 the day.");
  const std::size_t r = picked.front();
  const data::Pair& pr = task.pairs.test[r];
  std::vector<AttentionMap> panels = {
      decoded_map(global.test, r, pr.source, task.target_vocab, "global: " + global.test.predictions[r])};
  for (const LocalRun* run : {&p, &m})
    panels.push_back(decoded_map(run->test, r, pr.source, task.target_vocab, run->name + ": " + run->test.predictions[r]));
  save_figure(decoded_figure(panels, "Global, local-p and local-m attention (general score) on \"" + pr.source + "\"", 3,
                             2100, 780),
              "local_alignments",
              text("Global attention (left), local-p (middle) and local-m (right) on one test input: the local weights "
                   "are zero outside $[p_t - ", kWindow, ", p_t + ", kWindow, "]$ and shrink away from $p_t$."));
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"03_luong_attention", "Luong attention: dot, general, concat (and additive) compared",
                     "Four attention scores in one Luong decoder, one budget, on date normalization: accuracy, size, cost.",
                     "test_exact_match_dot", "comparison",
                     {"luong_dot.npz", "luong_general.npz", "luong_concat.npz", "luong_additive.npz"}},
                    argc, argv, [] {
                      const Seq2SeqPlan plan = choose_sizes();
                      const data::DateTask task = data::make_date_task(plan.examples, seed());
                      section("1. Same task, a different decoder");
                      the_decoder(plan, task);
                      section("2. Training the four with one budget");
                      std::vector<Trained> runs = train_all(plan, task);
                      compare_accuracy(runs, task);
                      section("3. Cost: the attention alone and the whole training step");
                      speed(runs, plan, task);
                      section("4. Four ways of looking at the same input");
                      four_ways_of_looking(runs, task);
                      explore_the_four(runs, task);
                      section("5. Local attention: predict where to look, or follow the step");
                      local_attention(runs, plan, task);
                    });
}
