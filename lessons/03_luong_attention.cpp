// Lesson 03: Luong attention, and what a score function costs.
//
// Luong, Pham and Manning (2015) kept Bahdanau's idea and simplified the decoder: attend with the
// CURRENT decoder state h_t, after the recurrent step, and predict from tanh(W_c [c_t; h_t]). They
// compared three scores: dot (q^T k), general (q^T W k) and concat (v^T tanh(W [q; k]), which is
// additive attention). We train all of them, plus Bahdanau's additive score, in one decoder with one
// budget on the date task of lesson 02, and measure accuracy, parameters and time, including the
// claim that dot-product attention is two to three times faster than additive.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "lessons/common/lesson.hpp"
#include "lessons/common/seq2seq.hpp"
#include "lessons/common/figure.hpp"
#include "plots/plots.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace s2s = attnlab::lessons::s2s;
namespace data = attnlab::nn::data;

namespace {

const std::vector<std::string> kScores = {"dot", "general", "concat", "additive"};

struct Run {
  std::string score;
  std::unique_ptr<s2s::Seq2Seq> model;
  s2s::History history;
  s2s::Evaluation test;
  // Interleaved benchmarks, medians: wall and CPU milliseconds.
  double step_ms = 0, attention_ms = 0, step_cpu_ms = 0, attention_cpu_ms = 0;
};

// Times, for fresh models of each score, (1) a whole training step (forward, backward, clipping,
// Adam) on one fixed batch and (2) the attention alone, forward and backward, on tensors of that
// batch's shapes. The four are measured in turn within every repetition, so a change in the
// machine's load hits all of them alike; the medians are kept.
void benchmark(std::vector<Run>& runs, const s2s::ModelConfig& base, const s2s::DateTask& task,
               const data::Seq2SeqBatch& batch, std::uint64_t seed, int reps) {
  const std::size_t B = batch.source.ids.shape()[0], S = batch.source.ids.shape()[1];
  const std::size_t T = batch.decoder_input.ids.shape()[1];
  std::vector<std::unique_ptr<s2s::Seq2Seq>> models;
  std::vector<std::unique_ptr<nn::Adam<float>>> opts;
  std::vector<std::vector<double>> step(runs.size()), attn(runs.size()), step_cpu(runs.size()), attn_cpu(runs.size());
  Generator gen(seed);
  const s2s::Tns q0 = s2s::Tns::randn({B, T, base.decoder_hidden}, gen);
  const s2s::Tns k0 = s2s::Tns::randn({B, S, 2 * base.encoder_hidden}, gen);
  for (const Run& r : runs) {
    s2s::ModelConfig c = base;
    c.score = r.score;
    models.push_back(std::make_unique<s2s::Seq2Seq>(c, task.source_vocab.size(), task.target_vocab.size(), gen));
    opts.push_back(std::make_unique<nn::Adam<float>>(models.back()->parameters(), 1e-3));
  }
  for (int rep = 0; rep < reps + 1; ++rep) {  // repetition 0 warms up and is not counted
    for (std::size_t i = 0; i < runs.size(); ++i) {
      double w0 = s2s::wall_ms(), c0 = s2s::cpu_ms();
      opts[i]->zero_grad();
      models[i]->loss(batch).backward();
      nn::clip_grad_norm(opts[i]->params(), 1.0);
      opts[i]->step();
      if (rep > 0) step[i].push_back(s2s::wall_ms() - w0), step_cpu[i].push_back(s2s::cpu_ms() - c0);

      // The attention is cheap next to a step: several calls per repetition.
      for (int a = 0; a < 4; ++a) {
        const s2s::Tns q = q0.detach().set_requires_grad(true), k = k0.detach().set_requires_grad(true);
        w0 = s2s::wall_ms(), c0 = s2s::cpu_ms();
        sum(models[i]->decoder->attention()(q, k, k, batch.source.allowed()).output).backward();
        if (rep > 0) attn[i].push_back(s2s::wall_ms() - w0), attn_cpu[i].push_back(s2s::cpu_ms() - c0);
      }
      models[i]->zero_grad();
    }
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    runs[i].step_ms = s2s::median(step[i]);
    runs[i].attention_ms = s2s::median(attn[i]);
    runs[i].step_cpu_ms = s2s::median(step_cpu[i]);
    runs[i].attention_cpu_ms = s2s::median(attn_cpu[i]);
  }
}

xt::xarray<double> to_array(const std::vector<double>& v) {
  xt::xarray<double> a = xt::zeros<double>({v.size()});
  std::copy(v.begin(), v.end(), a.begin());
  return a;
}

// Mean of the per-step losses over consecutive windows, and the step at each window's end.
std::pair<std::vector<double>, std::vector<double>> windowed(const std::vector<double>& loss, std::size_t window) {
  std::vector<double> x, y;
  for (std::size_t lo = 0; lo + window <= loss.size(); lo += window) {
    double s = 0;
    for (std::size_t i = lo; i < lo + window; ++i) s += loss[i];
    x.push_back(double(lo + window));
    y.push_back(s / double(window));
  }
  return {x, y};
}

}  // namespace

int main(int argc, char** argv) {
  Lesson L({"03_luong_attention", "Luong attention: dot, general, concat (and additive) compared",
            "Four attention scores in one Luong decoder, one budget, on date normalization: accuracy, size, speed."},
           argc, argv);
  const bool quick = L.quick();
  const double load_at_start = s2s::load_average();
  const std::size_t n_examples = quick ? 4000 : 12000;
  s2s::ModelConfig base;
  base.style = s2s::DecoderStyle::Luong;
  base.embed = quick ? 16 : 32;
  base.decoder_hidden = base.attention_hidden = quick ? 32 : 64;
  base.encoder_hidden = base.decoder_hidden / 2;  // annotations 2He == Hd, so the dot score is defined
  s2s::TrainConfig tc;
  tc.epochs = L.epochs(4, 3);
  tc.batch = 64;
  tc.lr = 5e-3;
  tc.clip = 1.0;
  tc.seed = L.seed() + 11;
  L.config("examples", n_examples);
  L.config("embed", base.embed);
  L.config("hidden", base.decoder_hidden);
  L.config("epochs", tc.epochs);
  L.config("batch", tc.batch);
  L.config("lr", tc.lr);

  // ------------------------------------------------------------------------------------------
  L.section("1. Same task, a different decoder");
  const s2s::DateTask task = s2s::make_date_task(n_examples, L.seed());
  L.say("The data are lesson 02's: " + std::to_string(n_examples) + " generated dates in " +
        std::to_string(data::num_date_formats()) + " formats, rewritten as YYYY-MM-DD, split by distinct input into " +
        std::to_string(task.train.size()) + " train, " + std::to_string(task.validation.size()) + " validation and " +
        std::to_string(task.test.size()) + " test examples.");
  L.say("Bahdanau's decoder attends with its previous state s_{t-1} and feeds the context into its GRU. Luong et "
        "al. attend AFTER the recurrent step, with the current state, and use the context only for the prediction:");
  L.verbatim(
      "h_t      = GRU(embed(y_{t-1}), h_{t-1})       the recurrence never sees an attention context\n"
      "e_tj     = score(h_t, h_j)                    h_j: the encoder's annotations (keys = values)\n"
      "a_t      = masked softmax(e_t)                c_t = sum_j a_tj h_j\n"
      "h~_t     = tanh(W_c [c_t; h_t])               the 'attentional hidden state'\n"
      "logits_t = W_o h~_t");
  L.say("Because h_t does not depend on the attention, teacher-forced training runs the decoder GRU over all T "
        "steps first and then attends with all T queries in ONE call: scores (B, T, S) from a batched matrix "
        "product instead of T separate calls. (Luong's 'input feeding' variant puts h~_{t-1} back into the GRU "
        "and loses this; we leave it out.) At test time greedy decoding still goes one step at a time.");
  L.say("The four scores, between the decoder state h_t (size Hd) and an annotation h_j (size 2He; we set He = Hd/2 "
        "so that the dot product is defined):");
  std::vector<std::vector<std::string>> formulas;
  for (const std::string& s : kScores) {
    Generator g(0);
    formulas.push_back({s, nn::make_score<float>(s, 4, 4, g, 4)->formula()});
  }
  L.table({"score", "score(h_t, h_j)"}, formulas);
  L.say("Concat is Luong's name for a single matrix over the stacked [h_t; h_j]; splitting that matrix in two gives "
        "Bahdanau's W_q h_t + W_k h_j, so the two compute the same family of functions and differ only in how the "
        "weights are laid out; here both have the same " + std::to_string(2 * base.decoder_hidden * base.attention_hidden + base.attention_hidden) + " parameters. Dot has no parameters at all: it asks the "
        "encoder and decoder to put their states in one space.");

  // ------------------------------------------------------------------------------------------
  L.section("2. Training the four with one budget");
  L.say("Each model gets the same data order, the same initial seed, " + std::to_string(tc.epochs) +
        " epochs of batches of " + std::to_string(tc.batch) + ", hidden size " + std::to_string(base.decoder_hidden) +
        ", attention width " + std::to_string(base.attention_hidden) + " (additive and concat), Adam at lr " +
        fmt(tc.lr, 4) + " and gradient clipping at " + fmt(tc.clip, 1) + ".");
  std::vector<Run> runs;
  for (const std::string& s : kScores) {
    Run r;
    r.score = s;
    s2s::ModelConfig c = base;
    c.score = s;
    Generator gen(L.seed() + 3);
    r.model = std::make_unique<s2s::Seq2Seq>(c, task.source_vocab.size(), task.target_vocab.size(), gen);
    r.history = s2s::train(*r.model, task, tc, s);
    r.test = s2s::evaluate(*r.model, task.test, task.pairs.test, task.target_vocab);
    runs.push_back(std::move(r));
  }

  // ------------------------------------------------------------------------------------------
  L.section("3. Speed: the attention alone and the whole training step");
  const int reps = quick ? 5 : 25;
  std::vector<std::size_t> first;
  for (std::size_t i = 0; i < tc.batch; ++i) first.push_back(i);
  const data::Seq2SeqBatch bench_batch = data::make_seq2seq_batch(task.train, first);
  benchmark(runs, base, task, bench_batch, L.seed() + 5, reps);
  const std::size_t bB = bench_batch.source.ids.shape()[0], bS = bench_batch.source.ids.shape()[1],
                    bT = bench_batch.decoder_input.ids.shape()[1];
  L.say("Timings depend on the machine and its load (load average " + fmt(load_at_start, 1) +
        " on 2 cores when the lesson started), so we report CPU time, which counts only this process's own work, "
        "as well as wall time, and take medians of " + std::to_string(reps) +
        " repetitions in which the four models take turns (a burst of load hits all four alike). One training "
        "batch: B = " + std::to_string(bB) + ", T = " + std::to_string(bT) + " queries, S = " + std::to_string(bS) +
        " keys, Hd = 2He = " + std::to_string(base.decoder_hidden) + ", A = " + std::to_string(base.attention_hidden) +
        ", BLAS threads = " + std::to_string(L.args().threads) +
        ". 'Attention' is the attention module alone, forward and backward, on random inputs of those shapes; "
        "'step' is a full training step (forward, backward, clipping, Adam) of a fresh model.");
  const Run& dot = runs[0];
  const Run& additive = runs[3];
  std::vector<std::vector<std::string>> rows;
  for (const Run& r : runs)
    rows.push_back({r.score, std::to_string(r.model->attention_parameters()),
                    std::to_string(r.model->parameter_count()), fmt(r.test.exact_match, 4), fmt(r.test.char_accuracy, 4),
                    fmt(r.history.validation_loss.back(), 4), fmt(r.attention_cpu_ms, 2), fmt(r.step_cpu_ms, 1),
                    fmt(100.0 * r.attention_cpu_ms / r.step_cpu_ms, 1) + "%", fmt(r.step_ms, 1)});
  L.table({"score", "attention params", "all params", "test exact match", "test per-char acc", "val loss",
           "attention CPU ms (fwd+bwd)", "step CPU ms", "attention share of step", "step wall ms"},
          rows);
  const double attn_ratio = additive.attention_cpu_ms / dot.attention_cpu_ms;
  const double step_ratio = additive.step_cpu_ms / dot.step_cpu_ms;
  L.say("Measured here: the additive attention takes " + fmt(attn_ratio, 1) + " times the CPU time of the dot attention (" +
        fmt(additive.attention_cpu_ms, 2) + " ms against " + fmt(dot.attention_cpu_ms, 2) + " ms, forward and backward), "
        "and a whole training step with additive attention takes " + fmt(step_ratio, 2) + " times as long as one with dot (" +
        fmt(additive.step_cpu_ms, 1) + " ms against " + fmt(dot.step_cpu_ms, 1) + " ms). " +
        (attn_ratio > 3.5   ? "So for the attention itself the claim is, if anything, modest"
         : attn_ratio >= 2 ? "So the claim holds for the attention itself"
                           : "So even the attention alone is not two to three times faster here") +
        (step_ratio < 1.5 ? "; for the whole step it does not hold: the bidirectional encoder GRU and the decoder GRU, "
                            "stepped one position at a time, cost more than any of the four scores."
                          : "; in the whole step the gap shrinks to " + fmt(step_ratio, 2) +
                                "x, because the encoder and decoder GRUs cost the same for all four."));
  L.say("Why the attention costs differ: dot is one batched matrix product, (B, T, Hd) x (B, Hd, S), about "
        "B T S Hd multiply-adds. General adds one projection of the keys, B S Hd^2. Additive and concat project "
        "queries and keys (B (T + S) A Hd) and then build a (B, T, S, A) tensor, take its tanh and reduce it with v: "
        "B T S A element-wise work plus the memory traffic of a tensor A times bigger than the scores, and the "
        "backward pass repeats all of it. (Lesson 02's Bahdanau decoder pays for its attention in T separate calls "
        "of one query each, projecting the keys again at every step.)");
  for (const Run& r : runs) {
    const std::string n = r.score;
    L.metric("test_exact_match_" + n, r.test.exact_match);
    L.metric("test_char_accuracy_" + n, r.test.char_accuracy);
    L.metric("validation_loss_" + n, r.history.validation_loss.back());
    L.metric("parameters_" + n, double(r.model->parameter_count()));
    L.metric("attention_parameters_" + n, double(r.model->attention_parameters()));
    L.metric("test_year_attention_" + n, s2s::year_attention(r.test, task.pairs.test).mass);
    L.timing("cpu_ms_attention_" + n, r.attention_cpu_ms);
    L.timing("cpu_ms_step_" + n, r.step_cpu_ms);
    L.timing("ms_attention_" + n, r.attention_ms);
    L.timing("ms_step_" + n, r.step_ms);
    L.timing("cpu_ms_step_in_training_" + n, r.history.median_step_cpu_ms());
    L.timing("ms_step_in_training_" + n, r.history.median_step_ms());
  }
  L.timing("load_average_at_start", load_at_start);
  L.timing("attention_ratio_additive_over_dot", attn_ratio);
  L.timing("step_ratio_additive_over_dot", step_ratio);

  {
    plots::Figure fig(2400, 850, 1, 3);
    fig.title("Four attention scores, one budget");
    std::vector<std::string> names;
    for (const Run& r : runs) names.push_back(r.score);
    xt::xarray<double> acc = xt::zeros<double>({std::size_t(2), runs.size()});
    xt::xarray<double> params = xt::zeros<double>({std::size_t(2), runs.size()});
    xt::xarray<double> ms = xt::zeros<double>({std::size_t(2), runs.size()});
    for (std::size_t i = 0; i < runs.size(); ++i) {
      acc(0, i) = runs[i].test.exact_match;
      acc(1, i) = runs[i].test.char_accuracy;
      params(0, i) = double(runs[i].model->parameter_count()) / 1000.0;
      params(1, i) = double(runs[i].model->attention_parameters()) / 1000.0;
      ms(0, i) = runs[i].step_cpu_ms;
      ms(1, i) = runs[i].attention_cpu_ms;
    }
    plots::BarOptions o;
    o.categories = names;
    o.value_labels = true;
    o.series = {"exact match", "per character"};
    o.ymin = 0.0;
    o.ymax = 1.1;
    plots::bar_chart(fig.panel(0).title("Held-out test accuracy").xlabel("score").ylabel("accuracy"), acc, o);
    o.series = {"whole model", "attention only"};
    o.ymax.reset();
    o.decimals = 1;
    plots::bar_chart(fig.panel(1).title("Parameters").xlabel("score").ylabel("thousands of parameters"), params, o);
    o.series = {"training step", "attention fwd+bwd"};
    o.decimals = 2;
    plots::bar_chart(fig.panel(2).title("CPU time (median)").xlabel("score").ylabel("milliseconds"), ms, o);
    save_figure(L, fig, "comparison", "Test accuracy, parameter count and time per training step of the four scores");
  }

  // ------------------------------------------------------------------------------------------
  L.section("4. Learning curves");
  {
    plots::Figure fig(2200, 900, 1, 2);
    fig.title("Learning curves of the four scores");
    const std::size_t window = std::max<std::size_t>(1, runs[0].history.steps / 40);
    std::vector<plots::Series> train, val;
    std::vector<double> epochs;
    for (int e = 1; e <= tc.epochs; ++e) epochs.push_back(double(e));
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const auto [x, y] = windowed(runs[i].history.step_loss, window);
      train.emplace_back(runs[i].score, to_array(x), to_array(y));
      val.emplace_back(runs[i].score, to_array(epochs), to_array(runs[i].history.validation_loss));
    }
    plots::LineOptions lo;
    lo.log_y = true;
    plots::line_plot(fig.panel(0)
                         .title("Training loss (mean of every " + std::to_string(window) + " steps)")
                         .xlabel("training step")
                         .ylabel("cross-entropy (nats per character)"),
                     train, lo);
    lo.markers = true;
    plots::line_plot(fig.panel(1).title("Validation loss (end of each epoch)").xlabel("epoch").ylabel("cross-entropy (nats per character)"),
                     val, lo);
    save_figure(L, fig, "loss_curves", "Loss curves of the four scores: training loss by step, validation loss by epoch");
  }
  std::string curve_note;
  for (const Run& r : runs)
    curve_note += std::string(curve_note.empty() ? "" : ", ") + r.score + " " +
                  fmt(r.history.validation_loss.back(), 4);
  L.say("Final validation loss: " + curve_note + ".");

  // ------------------------------------------------------------------------------------------
  L.section("5. Four ways of looking at the same input");
  {
    std::size_t r = 0;  // a test input with words in it, so the maps have something to skip
    for (std::size_t i = 0; i < task.pairs.test.size(); ++i)
      if (task.pairs.test[i].source.find(", ") != std::string::npos && task.pairs.test[i].source.size() > 20) {
        r = i;
        break;
      }
    const data::Pair& pr = task.pairs.test[r];
    plots::Figure fig(2800, 1400, 2, 2);  // wide enough to label every character of a 30-character input
    fig.title("Each score's attention on the test input \"" + pr.source + "\" (target " + pr.target + ")");
    for (std::size_t i = 0; i < runs.size(); ++i) {
      plots::HeatmapOptions o;
      o.x_labels = s2s::char_labels(pr.source, true);
      o.y_labels = s2s::output_labels(runs[i].test.decoded.ids[r], task.target_vocab);
      o.vmin = 0.0;
      o.vmax = 1.0;
      o.colorbar = false;
      plots::Panel& p = fig.panel(int(i)).title(runs[i].score + ": " + runs[i].test.predictions[r]);
      p.xlabel("input characters (keys)").ylabel("output characters (queries)");
      plots::heatmap(p, runs[i].test.decoded.attention[r], o);
    }
    fig.shared_colorbar({plots::Colormap::viridis(), 0.0, 1.0, "attention weight"});
    save_figure(L, fig, "alignments", "The same test input under the four scores: rows are output characters, columns input characters");
  }
  std::vector<std::vector<std::string>> year_rows;
  s2s::YearAttention ya;
  for (const Run& r : runs) {
    ya = s2s::year_attention(r.test, task.pairs.test);
    year_rows.push_back({r.score, fmt(100.0 * ya.mass, 1) + "%"});
  }
  L.say("Luong's query is the state after reading y_{t-1}, the one that predicts y_t, so each row says where the "
        "character being written comes from. To compare the maps with a number rather than by eye: over the " +
        std::to_string(ya.examples) + " test inputs that spell the year with four digits, the share of attention "
        "that the four year-writing steps put on those four input characters (spread evenly it would be " +
        fmt(100.0 * ya.uniform, 1) + "%):");
  L.table({"score", "attention on the year's digits"}, year_rows);
  L.say("A model can be right while its map is blurred or shifted by a character: the bidirectional encoder has "
        "already mixed each character with its neighbours, so the annotation next to a digit also knows the digit.");

  // ------------------------------------------------------------------------------------------
  L.section("6. What we found");
  const Run* best = &runs[0];
  for (const Run& r : runs)
    if (r.test.exact_match > best->test.exact_match) best = &r;
  double lo = 1, hi = 0, vlo = 1e9, vhi = 0;
  for (const Run& r : runs) {
    lo = std::min(lo, r.test.exact_match), hi = std::max(hi, r.test.exact_match);
    vlo = std::min(vlo, r.history.validation_loss.back()), vhi = std::max(vhi, r.history.validation_loss.back());
  }
  L.say((hi - lo < 1e-9 ? "With one budget all four reach the same test exact match, " + fmt(hi, 4) +
                              ", so accuracy alone does not separate them here; the final validation losses (" +
                              fmt(vlo, 4) + " to " + fmt(vhi, 4) + ") and the learning curves show which got there faster. "
                        : "With one budget the best test exact match came from " + best->score +
                              " (" + fmt(best->test.exact_match, 4) + "); the four are within " + fmt(hi - lo, 4) +
                              " of each other. ") +
        (best->test.exact_match - dot.test.exact_match < 1e-9
             ? std::string("Dot attention, with no parameters and the cheapest score to compute, loses nothing in "
                           "accuracy here. ")
             : "Dot attention, with no parameters and the cheapest score to compute, is " +
                   fmt(best->test.exact_match - dot.test.exact_match, 3) + " behind the best in exact match. ") +
        "Its speed advantage is large inside the attention and much smaller for the whole training step, because in "
        "a recurrent seq2seq model the recurrences do most of the work; it matters more where attention IS the "
        "model, as in the Transformer of the coming lessons, which uses the dot score scaled by 1/sqrt(d).");
  return L.finish();
}
