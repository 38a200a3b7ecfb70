// Lesson 02: additive (Bahdanau) attention.
//
// An encoder-decoder that squeezes a whole input into one vector has to remember everything in
// that vector. Bahdanau, Cho and Bengio (2015) let the decoder look back instead: at every output
// step it scores each encoder state against its own state, e_tj = v^T tanh(W_q s_{t-1} + W_k h_j),
// turns the scores into weights with a softmax, and reads the weighted sum of the encoder states.
// We train it to normalize dates ("the 3rd of march, 1997" -> "1997-03-03") one character at a
// time, and watch the weights line up output characters with the input characters they come from.
#include <algorithm>

#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

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

// ---------------------------------------------------------------------------------------------
// 1. The task

Seq2SeqPlan choose_sizes() {
  Seq2SeqPlan p;
  p.examples = full_or_quick<std::size_t>(12000, 4000);
  p.model.style = nn::rnn::DecoderStyle::Bahdanau;
  p.model.score = "additive";
  p.model.embed = full_or_quick(32, 16);
  p.model.encoder_hidden = p.model.decoder_hidden = p.model.attention_hidden = full_or_quick(64, 32);
  Recipe& r = p.recipe;  // Adam at a constant rate, clipped
  r.label = "additive", r.epochs = epochs(6, 4), r.batch = 64, r.lr = 5e-3, r.decay = Decay::constant;
  r.clip = 1.0, r.seed = seed() + 11;
  r.checkpoint = "dates.npz";  // with dates.json (write_model_card): what `inspect dates` runs
  record(p);
  return p;
}

data::DateTask the_task(const Seq2SeqPlan& s) {
  data::DateTask task = data::make_date_task(s.examples, seed());
  say("We generate ", s.examples, " dates between 1950 and 2049, each written in one of ", data::num_date_formats(),
      " human formats, and ask for the ISO form YYYY-MM-DD. Input and output are read and written one character at "
      "a time, so the model must learn the month names, ordinals, the US month-first order of slashed dates and the "
      "two-digit-year rule on its own.");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < 8; ++i) rows.push_back(row(task.pairs.train[i].source, task.pairs.train[i].target));
  table({"input (source)", "output (target)"}, rows);
  const std::size_t overlap = data::split_overlap(task.pairs);
  metric("split_overlap", double(overlap));
  say("Splits are cut by distinct input string: ", task.pairs.train.size(), " train, ", task.pairs.validation.size(),
      " validation, ", task.pairs.test.size(), " test. Vocabularies (from the training split, with <pad> <bos> <eos> "
      "<unk>): ", task.source_vocab.size(), " input characters, ", task.target_vocab.size(), " output characters.");
  claim({"splits_held_out", "split_overlap == 0", "No test or validation input was ever seen in training.",
         text(overlap, " inputs appear in two splits: the held-out scores below are not fully held out.")});
  return task;
}

// ---------------------------------------------------------------------------------------------
// 2. The mechanism

void why_attention(const Seq2SeqPlan& s) {
  say("A plain encoder-decoder (Sutskever et al. 2014; Cho et al. 2014) reads the input into one vector, its last "
      "state, and the decoder must rebuild the output from that vector alone. Every input, short or long, goes "
      "through the same ", s.model.decoder_hidden, " numbers, and the information about the early characters has to "
      "survive every later step of the encoder. Bahdanau et al. keep all encoder states $h_1, \\dots, h_S$ (the "
      "annotations) and let the decoder choose, at each output step, which of them to read: to write the year, it can "
      "look straight at the four year digits; to write the month, at the month name. The cost is $S$ scores per "
      "output step.");
  say("Our encoder is a bidirectional GRU, so each annotation $h_j = [h^{\\mathrm{fwd}}_j; h^{\\mathrm{bwd}}_j]$ "
      "describes character $j$ in the context of the whole input. At output step $t$ the decoder, whose previous "
      "state is $s_{t-1}$, scores every input position $j$ with a one-layer network, the additive score,");
  say("$$e_{tj} = v^\\top \\tanh(W_q\\, s_{t-1} + W_k\\, h_j),$$");
  say("turns the scores into weights that sum to 1 over the real input characters, reads the context, and steps:");
  say("$$a_{tj} = \\frac{\\exp e_{tj}}{\\sum_k \\exp e_{tk}}, \\qquad c_t = \\sum_j a_{tj}\\, h_j, \\qquad "
      "s_t = \\mathrm{GRU}([\\mathrm{embed}(y_{t-1}); c_t],\\, s_{t-1}), \\qquad "
      "\\mathrm{logits}_t = W_o\\, [s_t; c_t].$$");
  say("It is called additive because query and key are projected into one space of size $A$ and added before the "
      "$\\tanh$, instead of multiplied as in the dot-product scores of lesson 03. Padding positions of shorter inputs "
      "get weight exactly 0 (a masked softmax). $W_k h_j$ does not depend on $t$, so the decoder projects the "
      "annotations once per input and reuses them at every output step, as Bahdanau et al. point out in their "
      "appendix (nn::Attention::memory does it here); each step pays only for $W_q s_{t-1}$, the $\\tanh$ and $v^\\top$.");
}

// Runs the first decoder step of a batch piece by piece and lists each tensor's shape.
std::vector<std::vector<std::string>> trace_shapes(nn::rnn::Seq2Seq& model, const data::Seq2SeqBatch& b) {
  NoGrad ng;
  nn::rnn::Decoder& dec = *model.decoder;
  const nn::rnn::Encoded e = model.encoder.forward(b.source);
  const nn::rnn::Tns s = e.init;
  const auto score = dec.attention().score().steps(unsqueeze(s, 1), e.annotations);  // W_q q, W_k k, tanh, v^T
  const AttentionResult<float> a = dec.attention()(s, e.annotations, e.annotations, e.real);
  const IndexArray prev = xt::view(b.decoder_input.ids, xt::all(), 0);
  const nn::rnn::Step st = dec.step(e, prev, s);
  nn::rnn::Tns w;
  const nn::rnn::Tns logits = dec.teacher_forced(e, b.decoder_input.ids, &w);
  auto sh = [](const nn::rnn::Tns& t) { return shape_str(t.shape()); };
  return {{"$x$: input ids", shape_str(b.source.ids.shape()), "$(B, S)$, padded with <pad>, ends with <eos>"},
          {"$\\mathrm{embed}(x)$", sh(model.encoder.embed(b.source.ids)), "$(B, S, E)$"},
          {"$h$: annotations = keys = values", sh(e.annotations), "$(B, S, 2H_e)$, forward and backward state per position"},
          {"allowed keys", shape_str(e.real.shape()), "$(B, S)$, false on padding"},
          {"$s_0 = \\tanh(W_{\\mathrm{init}} [h^{\\mathrm{fwd}}_S; h^{\\mathrm{bwd}}_1])$", sh(e.init),
           "$(B, H_d)$, the decoder's first state"},
          {"$W_q s_{t-1}$", sh(score[0].value), "$(B, 1, A)$, the query, projected"},
          {"$W_k h$", sh(score[1].value), "$(B, S, A)$, every key, projected"},
          {"$\\tanh(W_q s_{t-1} + W_k h_j)$", sh(score[2].value), "$(B, 1, S, A)$, broadcast: one vector per (query, key)"},
          {"$e_t = v^\\top \\tanh(\\dots)$", sh(score[3].value), "$(B, 1, S)$, one score per key"},
          {"$a_t = \\mathrm{softmax}(e_t)$, masked", sh(a.weights), "$(B, S)$, the attention weights"},
          {"$c_t = \\sum_j a_{tj} h_j$", sh(a.output), "$(B, 2H_e)$, the context"},
          {"$[\\mathrm{embed}(y_{t-1}); c_t]$", sh(concat<float>({dec.embed(prev), a.output}, -1)),
           "$(B, E + 2H_e)$, the GRU cell's input"},
          {"$s_t$", sh(st.state), "$(B, H_d)$"},
          {"$\\mathrm{logits}_t = W_o [s_t; c_t]$", sh(st.logits), "$(B, V)$"},
          {"all $T$ steps: logits", sh(logits), "$(B, T, V)$, scored against $y$ <eos>"},
          {"all $T$ steps: weights", sh(w), "$(B, T, S)$, one attention map per example"}};
}

void show_the_model(nn::rnn::Seq2Seq& model, const data::DateTask& task, const Seq2SeqPlan& s) {
  say("One real training batch through the untrained model ($B$ = batch, $S$ = longest input + <eos>, $T$ = output "
      "length + <eos>, $E$ = embedding, $H_e$ = encoder state per direction, $H_d$ = decoder state, $A$ = attention "
      "width, $V$ = output vocabulary):");
  const data::Seq2SeqBatch batch = data::make_seq2seq_batch(task.train, data::first_rows(s.recipe.batch));
  table({"tensor", "shape", "what it is"}, trace_shapes(model, batch));
  const std::size_t attn = model.attention_parameters(), all = model.parameter_count(),
                    enc = model.encoder.parameter_count();
  table({"part", "parameters"}, {row("encoder (embedding, bidirectional GRU, bridge to $s_0$)", enc),
                                 row("attention ($W_q$, $W_k$, $v$)", attn),
                                 row("decoder (embedding, GRU cell, output layer)", all - enc - attn), row("total", all)});
  metric("parameters", double(all));
}

// ---------------------------------------------------------------------------------------------
// 3. Training, and what the decoder writes on the way

// Chosen test inputs, decoded as one batch, with their pairs.
struct Showcase {
  std::vector<data::Pair> pairs;
  nn::rnn::Evaluation decoded;
};

Showcase decode_examples(nn::rnn::Seq2Seq& model, const data::DateTask& task, const std::vector<std::size_t>& rows) {
  data::EncodedPairs enc;
  Showcase s;
  for (std::size_t r : rows) {
    enc.source.push_back(task.test.source[r]);
    enc.target.push_back(task.test.target[r]);
    s.pairs.push_back(task.pairs.test[r]);
  }
  s.decoded = nn::rnn::evaluate(model, enc, s.pairs, task.target_vocab);
  return s;
}

std::string decodings_text(const Showcase& s) {
  std::string out;
  for (std::size_t i = 0; i < s.pairs.size(); ++i) {
    const std::string& p = s.decoded.predictions[i];
    std::string source = "\"" + s.pairs[i].source + "\"";
    source.resize(std::max<std::size_t>(source.size(), 32), ' ');
    out += source + " -> " + p + std::string(p.size() < 12 ? 12 - p.size() : 0, ' ') + " " +
           (p == s.pairs[i].target ? "ok" : "want " + s.pairs[i].target) + "\n";
  }
  return out;
}

// The largest weight of each row of the attention maps, averaged over every row of every map: 1 when each output
// character reads one input character.
double mean_row_max(const std::vector<xt::xarray<double>>& maps) {
  double total = 0;
  std::size_t rows = 0;
  for (const auto& a : maps) total += double(xt::sum(xt::amax(a, {1}))()), rows += a.shape()[0];
  return rows ? total / double(rows) : 0.0;
}

// The fields of the whole test set at a step of training.
struct Snapshot {
  std::size_t step;
  data::DateFields fields;
  double exact, row_max;
};

struct Training {
  History history;
  std::vector<Snapshot> snapshots;  // often while the decoder learns the format, then after every epoch
  Showcase early, late;             // six test inputs at the first snapshot and at the end
};

Training train_and_watch(nn::rnn::Seq2Seq& model, const data::DateTask& task, Seq2SeqPlan s) {
  const double load_at_start = load_average();
  const std::vector<std::size_t> shown = data::varied_examples(task.pairs.test, 6);
  const long total = fit_steps(task.train.size(), s.recipe), per_epoch = total / s.recipe.epochs;
  // Most of the change comes early: a snapshot every `every` steps of the first `close` ones, then after each epoch.
  const long every = full_or_quick(15L, 20L), close = full_or_quick(150L, total);
  say("Teacher forcing: the decoder reads <bos> $y_1 \\dots y_9$ and is scored (cross-entropy) on $y_1 \\dots y_{10}$ "
      "<eos>. Training: ", describe(s.recipe, total), ". Every ", every, " steps of the first ", close, ", then after "
      "every epoch, we decode the whole test set greedily and score each field of the date; six test inputs of "
      "different forms are kept for display after ", every, " steps and at the end.");
  Training t;
  s.recipe.after_step = [&](std::size_t step) {
    const bool due = long(step) <= close ? long(step) % every == 0 : long(step) % per_epoch == 0;
    if (!due && long(step) != total) return;
    const nn::rnn::Evaluation ev = nn::rnn::evaluate(model, task.test, task.pairs.test, task.target_vocab);
    t.snapshots.push_back({step, data::date_fields(ev.predictions, task.pairs.test), ev.exact_match,
                           mean_row_max(ev.decoded.attention)});
    if (t.snapshots.size() == 1) t.early = decode_examples(model, task, shown);
  };
  t.history = train_seq2seq(model, task, s.recipe);
  t.late = decode_examples(model, task, shown);
  const History& h = t.history;
  say(h.steps, " steps of ", s.recipe.batch, " examples. A step (forward, backward, clipping, Adam) took ",
      fixed(h.median_step_cpu_ms(), 1), " ms of CPU time and ", fixed(h.median_step_ms(), 1), " ms of wall time "
      "(medians), on ", h.threads_text(), "; the load average was ", fixed(load_at_start, 1),
      " when the lesson started (CPU time counts only this program's own work).");
  timing("ms_per_step", h.median_step_ms());
  timing("cpu_ms_per_step", h.median_step_cpu_ms());
  timing("load_average_at_start", load_at_start);
  CurvesFigureOptions curves{"Cross-entropy per output character"};
  curves.ylabel = "nats per character (log scale)";
  save_figure(loss_curves({{"train", &h}}, curves), "loss", "Training loss by step; training and validation loss by epoch");
  std::vector<plots::Series> fields;
  const char* names[] = {"ISO-shaped", "year right", "month right", "day right", "exact match"};
  for (int f = 0; f < 5; ++f) {
    std::vector<double> x, y;
    for (const Snapshot& sn : t.snapshots) {
      x.push_back(double(sn.step));
      const data::DateFields& d = sn.fields;
      y.push_back(f == 0 ? d.iso_shaped : f == 1 ? d.year : f == 2 ? d.month : f == 3 ? d.day : sn.exact);
    }
    fields.push_back(curve(names[f], x, y));
  }
  fields[0].dashed = true;
  LineFigureOptions style{"What the decoder gets right during training (all test inputs)",
                          "training step (log scale)", "share of test inputs", true, false, true, 0.0, 1.05};
  save_figure(line_figure(fields, style), "fields", "The share of test inputs shaped like an ISO date, with the right "
                                                    "year, month and day, and exactly right, during training");
  return t;
}

void early_and_late(const Training& t) {
  const Snapshot &first = t.snapshots.front(), &last = t.snapshots.back();
  say("After ", first.step, " steps (greedy decoding, test inputs):");
  verbatim(decodings_text(t.early));
  say("After ", last.step, " steps:");
  verbatim(decodings_text(t.late));
  std::vector<std::vector<std::string>> rows;
  for (const Snapshot& s : t.snapshots)
    rows.push_back(row(s.step, fixed(s.fields.iso_shaped, 3), fixed(s.fields.year, 3), fixed(s.fields.month, 3),
                       fixed(s.fields.day, 3), fixed(s.exact, 3)));
  say("The shares of all test inputs the decoder gets right, field by field, during training:");
  table({"step", "ISO-shaped", "year", "month", "day", "exact match"}, rows);
  // The first snapshot at which each field is right for half the test inputs.
  auto half_way = [&](double data::DateFields::*field) {
    for (const Snapshot& s : t.snapshots)
      if (s.fields.*field >= 0.5) return double(s.step);
    return double(last.step) + 1;
  };
  metric("step_half_iso_shaped", half_way(&data::DateFields::iso_shaped));
  metric("step_half_year", half_way(&data::DateFields::year));
  metric("step_half_month", half_way(&data::DateFields::month));
  metric("step_half_day", half_way(&data::DateFields::day));
  claim({"shape_before_content", "step_half_iso_shaped <= min(step_half_year, step_half_month, step_half_day)",
         text("The form comes before the content: half the test outputs are shaped like an ISO date by step ",
              rounded(half_way(&data::DateFields::iso_shaped)), ", no later than any field is right for half of them "
              "(year by step ", rounded(half_way(&data::DateFields::year)), ", month ",
              rounded(half_way(&data::DateFields::month)), ", day ", rounded(half_way(&data::DateFields::day)), ")."),
         text("Here some field was right for half the test inputs (year by step ", rounded(half_way(&data::DateFields::year)),
              ", month ", rounded(half_way(&data::DateFields::month)), ", day ", rounded(half_way(&data::DateFields::day)),
              ") before half the outputs were shaped like an ISO date (step ",
              rounded(half_way(&data::DateFields::iso_shaped)), ").")});
  claim({"year_before_month", "step_half_year < step_half_month",
         text("The year, copied digit by digit from the input (or completed from two digits), is right for half the test "
              "inputs before the month is, which has to be translated from a name or found in a month-first order: step ",
              rounded(half_way(&data::DateFields::year)), " against ", rounded(half_way(&data::DateFields::month)), "."),
         text("Here the month was right for half the test inputs no later than the year (step ",
              rounded(half_way(&data::DateFields::month)), " against ", rounded(half_way(&data::DateFields::year)), ").")});
}

// ---------------------------------------------------------------------------------------------
// 4. Held-out results

void held_out(const Training& t, const nn::rnn::Evaluation& test, const data::DateTask& task) {
  const double val_loss = t.history.validation_of("loss").back();
  table({"split", "examples", "exact match", "per-character accuracy", "validation loss (nats per character)"},
        {row("test", task.test.size(), fixed(test.exact_match, 4), fixed(test.char_accuracy, 4), fixed(val_loss, 4))});
  say("Exact match counts an output as right only if all ten characters and the stop are right; per-character "
      "accuracy compares position by position. A model that ignores its input gets roughly half the characters (the "
      "dashes, the century and the month's leading digit) and almost no exact matches.");
  record_scores("", test, t.history);  // test_exact_match, test_char_accuracy, validation_loss (lessons/kit/seq2seq)
  claim({"reads_its_input", "test_exact_match >= 0.8 and test_char_accuracy >= 0.95",
         text("The decoder reads its input: ", percent(test.exact_match), " of the test dates come out exactly right, ",
              percent(test.char_accuracy), " of the characters."),
         text("Only ", percent(test.exact_match), " of the test dates come out exactly right (", percent(test.char_accuracy),
              " of the characters): this run did not learn the task.")});
  claim({"solves_dates", "test_exact_match >= 0.99",
         text("With the full budget it solves the task: exact match ", fixed(test.exact_match, 4), " on ",
              task.test.size(), " test dates it never saw."),
         text("This run stops at exact match ", fixed(test.exact_match, 4), ": ", t.history.steps, " steps of a smaller "
              "model are not enough for every format; the full run's budget reaches 0.99 and more."),
         Expect::full_run});
  std::string wrong;
  for (std::size_t i = 0, n = 0; i < test.predictions.size() && n < 6; ++i)
    if (test.predictions[i] != task.pairs.test[i].target) {
      wrong += text("\"", task.pairs.test[i].source, "\" -> ", test.predictions[i], " (want ", task.pairs.test[i].target, ")\n");
      ++n;
    }
  if (!wrong.empty()) {
    say("Test inputs it still gets wrong (up to six):");
    verbatim(wrong);
  }
}

// ---------------------------------------------------------------------------------------------
// 5. Where the decoder looks

// An attention map of a decoded example: output characters (queries) against input characters
// (lessons/kit/decoded_attention, which lesson 03 shares).
AttentionMap alignment(const Showcase& s, std::size_t i, const data::Vocab& v, const std::string& title) {
  return decoded_map(s.decoded, i, s.pairs[i].source, v, title);
}

// The attention explorer (lessons/kit/explorer.hpp) over test inputs of different written forms:
// the course book embeds it, and `inspect dates "..."` writes one for the learner's own date.
void explore(const nn::rnn::Evaluation& test, const data::DateTask& task) {
  ExplorerPage page;
  page.title = "Lesson 02: additive attention on held-out dates";
  page.query_side = "output characters", page.key_side = "input characters";
  page.note = "The trained model of this run on test dates it never saw. Each output character (right) draws lines to "
              "the input characters (left) it reads, as dark as their weight; hover one to read its weights.";
  for (std::size_t i : data::varied_examples(task.pairs.test, 6))
    page.inputs.push_back(decoded_input({{"cross-attention", &test}}, i, task.pairs.test[i].source, task.target_vocab));
  show_explorer(page, "explorer",
                "The attention explorer: six test inputs of different written forms; hover an output character to see "
                "which input characters it reads (build/bin/inspect makes one for a date of your own)");
}

void where_it_looks(const Training& t, const nn::rnn::Evaluation& test, const data::DateTask& task) {
  const data::Vocab& v = task.target_vocab;
  std::vector<AttentionMap> maps;
  for (std::size_t k = 0; k < 4; ++k)
    maps.push_back(alignment(t.late, k, v, "\"" + t.late.pairs[k].source + "\" -> " + t.late.decoded.predictions[k]));
  save_figure(decoded_figure(maps, "Additive attention on held-out test inputs (trained model)", 2, 2200, 1300), "alignments",
              "Attention weights of four test inputs: rows are output characters, columns input characters");
  say("Each row is one output step and sums to 1 over the real input characters. Read a map row by row: which input "
      "characters does the step that writes each output character read? The year's steps should read the year's "
      "digits, the month's steps the month name or number, the day's steps the day. We count it for the year, whose "
      "four digits can be found in the input: over the test inputs that spell the year with four digits, the share "
      "of attention the four year-writing steps put on those four input characters.");
  const data::YearAttention ya = data::year_attention(test.decoded.attention, task.pairs.test);
  metric("test_year_attention", ya.mass);
  metric("test_year_attention_uniform", ya.uniform);
  claim({"year_steps_read_the_year", "test_year_attention >= 0.8 and test_year_attention >= 2 * test_year_attention_uniform",
         text("The year's steps read the year's digits: over the ", ya.examples, " test inputs that spell the year with "
              "four digits, the four steps that write it put ", percent(ya.mass), " of their attention on those four "
              "input characters, where attention spread evenly would put ", percent(ya.uniform), "."),
         text("The year's steps put only ", percent(ya.mass), " of their attention on the year's four digits (",
              ya.examples, " test inputs; spread evenly: ", percent(ya.uniform), ").")});
  explore(test, task);
  const std::size_t first = t.snapshots.front().step, last = t.snapshots.back().step;
  save_figure(decoded_figure({alignment(t.early, 0, v, text("after ", first, " steps: ", t.early.decoded.predictions[0])),
                              alignment(t.late, 0, v, text("after ", last, " steps: ", t.late.decoded.predictions[0]))},
                             "One test input, \"" + t.early.pairs[0].source + "\", early and late in training", 2, 2200, 800),
              "alignment_early_late", "The same test input's attention early and late in training");
  const double early = t.snapshots.front().row_max, late = t.snapshots.back().row_max;
  metric("row_max_early", early);
  metric("row_max_late", late);
  say("How sharp are the rows? The largest weight of a row, averaged over every row of every test input, is 1 when "
      "each output character reads a single input character and $1/S$ when the weights are spread evenly.");
  claim({"training_sharpens_rows", "row_max_late >= row_max_early + 0.2",
         text("Training sharpens the rows: the mean largest weight is ", fixed(early, 2), " after ", first, " steps and ",
              fixed(late, 2), " at the end. While the weights are spread out the context is a blend of many characters, "
              "not much better than the single summary vector of a plain encoder-decoder; training concentrates each "
              "row on the few characters the output needs."),
         text("The rows are about as sharp at the end (mean largest weight ", fixed(late, 2), ") as after ", first,
              " steps (", fixed(early, 2), ").")});
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"02_additive_attention", "Additive (Bahdanau) attention: normalizing dates",
                     "A bidirectional GRU encoder and a GRU decoder with additive attention learn to rewrite dates as ISO 8601.",
                     "test_exact_match", "alignments", {"dates.npz"}},
                    argc, argv, [] {
                      const Seq2SeqPlan plan = choose_sizes();
                      section("1. The task: dates in many formats, rewritten as ISO 8601");
                      const data::DateTask task = the_task(plan);
                      section("2. Why attention: the fixed-length bottleneck");
                      why_attention(plan);
                      section("3. The model, and the shape of every tensor");
                      Generator gen(seed() + 3);
                      nn::rnn::Seq2Seq model(plan.model, task.source_vocab.size(), task.target_vocab.size(), gen);
                      show_the_model(model, task, plan);
                      section("4. Training");
                      const Training training = train_and_watch(model, task, plan);
                      write_model_card("dates", plan.model, task.source_vocab, task.target_vocab);
                      const nn::rnn::Evaluation test = nn::rnn::evaluate(model, task.test, task.pairs.test, task.target_vocab);
                      section("5. Early and late: what the decoder writes");
                      early_and_late(training);
                      section("6. Held-out results");
                      held_out(training, test, task);
                      section("7. Where the decoder looks");
                      where_it_looks(training, test, task);
                    });
}
