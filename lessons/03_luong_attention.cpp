// Lesson 03: Luong attention, and what a score function costs.
//
// Luong, Pham and Manning (2015) kept Bahdanau's idea and simplified the decoder: attend with the
// CURRENT decoder state h_t, after the recurrent step, and predict from tanh(W_c [c_t; h_t]). They
// compared three scores: dot (q^T k), general (q^T W k) and concat (v^T tanh(W [q; k]), which is
// additive attention). We train all of them, plus Bahdanau's additive score, in one decoder with one
// budget on the date task of lesson 02, and measure accuracy, parameters and time, including the
// claim that dot-product attention is two to three times faster than additive.
#include <algorithm>
#include <memory>

#include "lessons/kit/kit.hpp"
#include "nn/data/date_task.hpp"
#include "nn/rnn/seq2seq.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/dates.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

const std::vector<std::string> kScores = {"dot", "general", "concat", "additive"};

struct Trained {
  std::string score;
  std::unique_ptr<nn::rnn::Seq2Seq> model;
  History history;
  nn::rnn::Evaluation test;
  double step_ms = 0, attention_ms = 0, step_cpu_ms = 0, attention_cpu_ms = 0;  // interleaved medians
};

// The sizes and the training recipe of this lesson's date models.
struct Plan {
  std::size_t examples = 12000;
  nn::rnn::Seq2SeqConfig model;
  Recipe recipe;  // Adam at a constant rate (the kit's defaults otherwise)
};

void record(const Plan& p) {
  config({{"examples", p.examples}, {"embed", p.model.embed}, {"encoder_hidden", p.model.encoder_hidden},
          {"hidden", p.model.decoder_hidden}, {"attention_hidden", p.model.attention_hidden},
          {"epochs", p.recipe.epochs}, {"batch", p.recipe.batch}, {"lr", p.recipe.lr}, {"clip", p.recipe.clip}});
}

// Trains a date model as the plan says: teacher-forced cross-entropy on the training pairs, the
// held-out loss on the validation pairs after every epoch.
History train_dates(nn::rnn::Seq2Seq& model, const data::DateTask& task, Recipe r) {
  r.validate = [&] { return Scores{{"loss", nn::rnn::mean_loss(model, task.validation)}}; };
  return train(model, task.train.size(), [&](const std::vector<std::size_t>& rows) {
    return model.loss(data::make_seq2seq_batch(task.train, rows));
  }, r);
}

Plan choose_sizes() {
  Plan p;
  p.examples = full_or_quick<std::size_t>(12000, 4000);
  p.model.style = nn::rnn::DecoderStyle::Luong;
  p.model.embed = full_or_quick(32, 16);
  p.model.decoder_hidden = p.model.attention_hidden = full_or_quick(64, 32);
  p.model.encoder_hidden = p.model.decoder_hidden / 2;  // annotations 2He == Hd, so the dot score is defined
  p.recipe.epochs = epochs(4, 3);
  p.recipe.batch = 64;
  p.recipe.clip = 1.0;
  p.recipe.seed = seed() + 11;
  p.recipe.lr = 5e-3;
  p.recipe.decay = Decay::constant;
  record(p);
  return p;
}

void the_decoder(const Plan& s, const data::DateTask& task) {
  say("The data are lesson 02's: ", s.examples, " generated dates in ", data::num_date_formats(), " formats, rewritten "
      "as YYYY-MM-DD, split by distinct input into ", task.train.size(), " train, ", task.validation.size(),
      " validation and ", task.test.size(), " test examples.");
  say("Bahdanau's decoder attends with its previous state s_{t-1} and feeds the context into its GRU. Luong et al. "
      "attend AFTER the recurrent step, with the current state, and use the context only for the prediction:");
  verbatim("h_t      = GRU(embed(y_{t-1}), h_{t-1})       the recurrence never sees an attention context\n"
           "e_tj     = score(h_t, h_j)                    h_j: the encoder's annotations (keys = values)\n"
           "a_t      = masked softmax(e_t)                c_t = sum_j a_tj h_j\n"
           "h~_t     = tanh(W_c [c_t; h_t])               the 'attentional hidden state'\n"
           "logits_t = W_o h~_t");
  say("Because h_t does not depend on the attention, teacher-forced training runs the decoder GRU over all T steps "
      "first and then attends with all T queries in ONE call: scores (B, T, S) from a batched matrix product instead "
      "of T separate calls. (Luong's 'input feeding' variant puts h~_{t-1} back into the GRU and loses this; we leave "
      "it out.) At test time greedy decoding still goes one step at a time.");
  say("The four scores, between the decoder state q = h_t (size Hd) and a key k = h_j (size 2He; we set He = Hd/2 so "
      "that the dot product is defined). Each is an nn::Attention with its own Score; the masked softmax and the "
      "weighted sum are the same code for all four:");
  std::vector<std::vector<std::string>> formulas;
  for (const std::string& name : kScores) {
    Generator g(0);
    formulas.push_back(row(name, nn::make_score<float>(name, 4, 4, g, 4)->formula()));
  }
  table({"score", "score(q, k)"}, formulas);
  say("Concat is Luong's name for a single matrix over the stacked [h_t; h_j]; splitting that matrix in two gives "
      "Bahdanau's W_q h_t + W_k h_j, so the two compute the same family of functions and differ only in how the "
      "weights are laid out; here both have the same ",
      2 * s.model.decoder_hidden * s.model.attention_hidden + s.model.attention_hidden, " parameters. Dot has no "
      "parameters at all: it asks the encoder and decoder to put their states in one space.");
}

std::vector<Trained> train_all(const Plan& s, const data::DateTask& task) {
  say("Each model gets the same data order, the same initial seed, ", s.recipe.epochs, " epochs of batches of ",
      s.recipe.batch, ", hidden size ", s.model.decoder_hidden, ", attention width ", s.model.attention_hidden,
      " (additive and concat), Adam at lr ", fixed(s.recipe.lr, 4), " and gradient clipping at ", fixed(s.recipe.clip, 1), ".");
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
    r.history = train_dates(*r.model, task, rc);
    r.test = nn::rnn::evaluate(*r.model, task.test, task.pairs.test, task.target_vocab);
    runs.push_back(std::move(r));
  }
  return runs;
}

// Times, for fresh models of each score, (1) a whole training step (forward, backward, clipping,
// Adam) on one fixed batch and (2) the attention alone, forward and backward, on tensors of that
// batch's shapes, the eight in turn in every round (lessons/kit/timing.hpp).
void benchmark(std::vector<Trained>& runs, const Plan& s, const data::DateTask& task, const data::Seq2SeqBatch& batch,
               int rounds) {
  const std::size_t B = batch.source.ids.shape()[0], S = batch.source.ids.shape()[1];
  const std::size_t T = batch.decoder_input.ids.shape()[1];
  std::vector<std::unique_ptr<nn::rnn::Seq2Seq>> models;
  std::vector<std::unique_ptr<nn::Adam<float>>> opts;
  Generator gen(seed() + 5);
  const nn::rnn::Tns q0 = nn::rnn::Tns::randn({B, T, s.model.decoder_hidden}, gen);
  const nn::rnn::Tns k0 = nn::rnn::Tns::randn({B, S, 2 * s.model.encoder_hidden}, gen);
  std::vector<std::function<void()>> work;
  for (const Trained& r : runs) {
    nn::rnn::Seq2SeqConfig c = s.model;
    c.score = r.score;
    models.push_back(std::make_unique<nn::rnn::Seq2Seq>(c, task.source_vocab.size(), task.target_vocab.size(), gen));
    opts.push_back(std::make_unique<nn::Adam<float>>(models.back()->parameters(), 1e-3));
    nn::rnn::Seq2Seq& m = *models.back();
    nn::Adam<float>& opt = *opts.back();
    work.push_back([&] {
      opt.zero_grad();
      m.loss(batch).backward();
      nn::clip_grad_norm(opt.params(), 1.0);
      opt.step();
    });
    work.push_back([&] {
      const nn::rnn::Tns q = q0.detach().set_requires_grad(true), k = k0.detach().set_requires_grad(true);
      sum(m.decoder->attention()(q, k, k, batch.source.allowed()).output).backward();
      m.zero_grad();
    });
  }
  const std::vector<Timing> t = interleaved_medians(work, rounds);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    runs[i].step_ms = t[2 * i].wall_ms, runs[i].step_cpu_ms = t[2 * i].cpu_ms;
    runs[i].attention_ms = t[2 * i + 1].wall_ms, runs[i].attention_cpu_ms = t[2 * i + 1].cpu_ms;
  }
}

void speed(std::vector<Trained>& runs, const Plan& s, const data::DateTask& task) {
  const double load_at_start = load_average();
  const int reps = full_or_quick(60, 10);
  const data::Seq2SeqBatch batch = data::make_seq2seq_batch(task.train, data::first_rows(s.recipe.batch));
  benchmark(runs, s, task, batch, reps);
  say("Timings depend on the machine and its load (load average ", fixed(load_at_start, 1), " on 2 cores when the "
      "timing started), so we report CPU time, which counts only this process's own work, as well as wall time, and "
      "take medians of ", reps, " rounds in which the four models take turns (a burst of load hits all four alike). "
      "One training batch: B = ", batch.source.ids.shape()[0], ", T = ", batch.decoder_input.ids.shape()[1],
      " queries, S = ", batch.source.ids.shape()[1], " keys, Hd = 2He = ", s.model.decoder_hidden, ", A = ",
      s.model.attention_hidden, ", threads = ", lesson().args().threads, ". 'Attention' is the attention module "
      "alone, forward and backward, on random inputs of those shapes; 'step' is a full training step (forward, "
      "backward, clipping, Adam) of a fresh model.");
  std::vector<std::vector<std::string>> rows;
  for (const Trained& r : runs)
    rows.push_back(row(r.score, r.model->attention_parameters(), r.model->parameter_count(), fixed(r.test.exact_match, 4),
                       fixed(r.test.char_accuracy, 4), fixed(r.history.validation_of("loss").back(), 4),
                       fixed(r.attention_cpu_ms, 2), fixed(r.step_cpu_ms, 1),
                       percent(r.attention_cpu_ms / r.step_cpu_ms), fixed(r.step_ms, 1)));
  table({"score", "attention params", "all params", "test exact match", "test per-char acc", "val loss",
         "attention CPU ms (fwd+bwd)", "step CPU ms", "attention share of step", "step wall ms"}, rows);
  const Trained &dot = runs[0], &additive = runs[3];
  const double attn_ratio = additive.attention_cpu_ms / dot.attention_cpu_ms, step_ratio = additive.step_cpu_ms / dot.step_cpu_ms;
  say("Measured here: the additive attention takes ", fixed(attn_ratio, 1), " times the CPU time of the dot attention (",
      fixed(additive.attention_cpu_ms, 2), " ms against ", fixed(dot.attention_cpu_ms, 2), " ms, forward and backward), "
      "and a whole training step with additive attention takes ", fixed(step_ratio, 2), " times as long as one with "
      "dot (", fixed(additive.step_cpu_ms, 1), " ms against ", fixed(dot.step_cpu_ms, 1), " ms). ",
      attn_ratio > 3.5 ? "So for the attention itself the claim is, if anything, modest"
      : attn_ratio >= 2 ? "So the claim holds for the attention itself"
                        : "So even the attention alone is not two to three times faster here",
      step_ratio < 1.5 ? "; for the whole step it does not hold: the bidirectional encoder GRU and the decoder GRU, "
                         "stepped one position at a time, cost more than any of the four scores."
                       : text("; in the whole step the gap shrinks to ", fixed(step_ratio, 2),
                              "x, because the encoder and decoder GRUs cost the same for all four."));
  say("Why the attention costs differ: dot is one batched matrix product, (B, T, Hd) x (B, Hd, S), about B T S Hd "
      "multiply-adds, run by the fused attention op. General adds one projection of the keys, B S Hd^2. Additive and "
      "concat project queries and keys (B (T + S) A Hd) and then need tanh(W_q q_i + W_k k_j) for every pair: B T S A "
      "tanh's, reduced with v. The engine does that in one op (core/ops/additive_score), but the op must keep the "
      "(B, T, S, A) tanh values, a tensor A times bigger than the scores, for the backward pass, which reads them all "
      "again. (Lesson 02's Bahdanau decoder pays for its attention in T separate calls of one query each; it projects "
      "the keys once per input.)");
  for (const Trained& r : runs) {
    metric("test_exact_match_" + r.score, r.test.exact_match);
    metric("test_char_accuracy_" + r.score, r.test.char_accuracy);
    metric("validation_loss_" + r.score, r.history.validation_of("loss").back());
    metric("parameters_" + r.score, double(r.model->parameter_count()));
    metric("attention_parameters_" + r.score, double(r.model->attention_parameters()));
    metric("test_year_attention_" + r.score, data::year_attention(r.test.decoded.attention, task.pairs.test).mass);
    timing("cpu_ms_attention_" + r.score, r.attention_cpu_ms);
    timing("cpu_ms_step_" + r.score, r.step_cpu_ms);
    timing("ms_attention_" + r.score, r.attention_ms);
    timing("ms_step_" + r.score, r.step_ms);
    timing("cpu_ms_step_in_training_" + r.score, r.history.median_step_cpu_ms());
    timing("ms_step_in_training_" + r.score, r.history.median_step_ms());
  }
  timing("load_average_at_start", load_at_start);
  timing("attention_ratio_additive_over_dot", attn_ratio);
  timing("step_ratio_additive_over_dot", step_ratio);

  plots::Figure fig(2400, 850, 1, 3);
  fig.title("Four attention scores, one budget");
  std::vector<double> exact, per_char, params, attn_params, step_ms, attn_ms;
  for (const Trained& r : runs) {
    exact.push_back(r.test.exact_match), per_char.push_back(r.test.char_accuracy);
    params.push_back(double(r.model->parameter_count()) / 1000.0);
    attn_params.push_back(double(r.model->attention_parameters()) / 1000.0);
    step_ms.push_back(r.step_cpu_ms), attn_ms.push_back(r.attention_cpu_ms);
  }
  bar_panel(fig.panel(0).title("Held-out test accuracy").xlabel("score").ylabel("accuracy"), kScores,
            {{"exact match", exact}, {"per character", per_char}}, 2, 1.1);
  bar_panel(fig.panel(1).title("Parameters").xlabel("score").ylabel("thousands of parameters"), kScores,
            {{"whole model", params}, {"attention only", attn_params}}, 1);
  bar_panel(fig.panel(2).title("CPU time (median)").xlabel("score").ylabel("milliseconds"), kScores,
            {{"training step", step_ms}, {"attention fwd+bwd", attn_ms}}, 2);
  save_figure(fig, "comparison", "Test accuracy, parameter count and time per training step of the four scores");
}

void learning_curves(const std::vector<Trained>& runs) {
  std::vector<Run> curves;
  for (const Trained& r : runs) curves.push_back({r.score, &r.history});
  CurvesFigureOptions style{"Learning curves of the four scores"};
  style.ylabel = "cross-entropy (nats per character)";
  save_figure(loss_curves(curves, style), "loss_curves",
              "Loss curves of the four scores: training loss by step, validation loss by epoch");
  std::vector<std::string> finals;
  for (const Trained& r : runs) finals.push_back(r.score + " " + fixed(r.history.validation_of("loss").back(), 4));
  say("Final validation loss: ", listing(finals), ".");
}

void four_ways_of_looking(const std::vector<Trained>& runs, const data::DateTask& task) {
  std::size_t r = 0;  // a test input with words in it, so the maps have something to skip
  while (r + 1 < task.pairs.test.size() &&
         (task.pairs.test[r].source.find(", ") == std::string::npos || task.pairs.test[r].source.size() <= 20))
    ++r;
  const data::Pair& pr = task.pairs.test[r];
  std::vector<AttentionMap> maps;
  for (const Trained& run : runs)
    maps.push_back({run.test.decoded.attention[r], char_labels(pr.source, true),
                    token_labels(run.test.decoded.ids[r], task.target_vocab), run.score + ": " + run.test.predictions[r]});
  AttentionFigureOptions style{"Each score's attention on the test input \"" + pr.source + "\" (target " + pr.target + ")", 2, 2800, 1400};
  style.keys_label = "input characters (keys)";
  style.queries_label = "output characters (queries)";
  save_figure(attention_figure(maps, style), "alignments",
              "The same test input under the four scores: rows are output characters, columns input characters");
  std::vector<std::vector<std::string>> year_rows;
  data::YearAttention ya;
  for (const Trained& run : runs) {
    ya = data::year_attention(run.test.decoded.attention, task.pairs.test);
    year_rows.push_back(row(run.score, percent(ya.mass)));
  }
  say("Luong's query is the state after reading y_{t-1}, the one that predicts y_t, so each row says where the "
      "character being written comes from. To compare the maps with a number rather than by eye: over the ",
      ya.examples, " test inputs that spell the year with four digits, the share of attention that the four "
      "year-writing steps put on those four input characters (spread evenly it would be ", percent(ya.uniform), "):");
  table({"score", "attention on the year's digits"}, year_rows);
  say("A model can be right while its map is blurred or shifted by a character: the bidirectional encoder has already "
      "mixed each character with its neighbours, so the annotation next to a digit also knows the digit.");
}

void what_we_found(const std::vector<Trained>& runs) {
  const Trained* best = &runs[0];
  double lo = 1, hi = 0, vlo = 1e9, vhi = 0;
  for (const Trained& r : runs) {
    if (r.test.exact_match > best->test.exact_match) best = &r;
    lo = std::min(lo, r.test.exact_match), hi = std::max(hi, r.test.exact_match);
    vlo = std::min(vlo, r.history.validation_of("loss").back()), vhi = std::max(vhi, r.history.validation_of("loss").back());
  }
  const Trained& dot = runs[0];
  say(hi - lo < 1e-9 ? text("With one budget all four reach the same test exact match, ", fixed(hi, 4), ", so accuracy "
                            "alone does not separate them here; the final validation losses (", fixed(vlo, 4), " to ",
                            fixed(vhi, 4), ") and the learning curves show which got there faster. ")
                     : text("With one budget the best test exact match came from ", best->score, " (",
                            fixed(best->test.exact_match, 4), "); the four are within ", fixed(hi - lo, 4),
                            " of each other. "),
      best->test.exact_match - dot.test.exact_match < 1e-9
          ? "Dot attention, with no parameters and the cheapest score to compute, loses nothing in accuracy here. "
          : text("Dot attention, with no parameters and the cheapest score to compute, is ",
                 fixed(best->test.exact_match - dot.test.exact_match, 3), " behind the best in exact match. "),
      "Its speed advantage is large inside the attention and much smaller for the whole training step, because in a "
      "recurrent seq2seq model the recurrences do most of the work; it matters more where attention IS the model, as "
      "in the Transformer of the coming lessons, which uses the dot score scaled by 1/sqrt(d).");
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"03_luong_attention", "Luong attention: dot, general, concat (and additive) compared",
                     "Four attention scores in one Luong decoder, one budget, on date normalization: accuracy, size, speed.",
                     "test_exact_match_dot"},
                    argc, argv, [] {
                      const Plan setup = choose_sizes();
                      const data::DateTask task = data::make_date_task(setup.examples, seed());
                      section("1. Same task, a different decoder");
                      the_decoder(setup, task);
                      section("2. Training the four with one budget");
                      std::vector<Trained> runs = train_all(setup, task);
                      section("3. Speed: the attention alone and the whole training step");
                      speed(runs, setup, task);
                      section("4. Learning curves");
                      learning_curves(runs);
                      section("5. Four ways of looking at the same input");
                      four_ways_of_looking(runs, task);
                      section("6. What we found");
                      what_we_found(runs);
                    });
}
