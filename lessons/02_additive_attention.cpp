// Lesson 02: additive (Bahdanau) attention.
//
// An encoder-decoder that squeezes a whole input into one vector has to remember everything in
// that vector. Bahdanau, Cho and Bengio (2015) let the decoder look back instead: at every output
// step it scores each encoder state against its own state, e_tj = v^T tanh(W_q s_{t-1} + W_k h_j),
// turns the scores into weights with a softmax, and reads the weighted sum of the encoder states.
// We train it to normalize dates ("the 3rd of march, 1997" -> "1997-03-03") one character at a
// time, and watch the weights line up output characters with the input characters they come from.
#include <algorithm>
#include <cctype>
#include <functional>

#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

#include "lessons/kit/kit.hpp"
#include "nn/data/date_task.hpp"
#include "nn/rnn/seq2seq.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/dates.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

// Test examples to show: the first one of each of several written forms, so the figures cover
// words, ordinals, slashes and bare digits rather than four look-alikes.
std::vector<std::size_t> showcase_examples(const std::vector<data::Pair>& test, std::size_t want) {
  const auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
  const std::vector<std::function<bool(const std::string&)>> kinds = {
      [](const std::string& s) { return s.find(" of ") != std::string::npos; },
      [](const std::string& s) { return s.find('/') != std::string::npos && std::isalpha(static_cast<unsigned char>(s[0])); },
      [](const std::string& s) { return s.find(", ") != std::string::npos && s.size() > 20; },
      [](const std::string& s) { return s.find('-') != std::string::npos; },
      [](const std::string& s) { return s.find('.') != std::string::npos; },
      [&](const std::string& s) { return std::all_of(s.begin(), s.end(), digit); },
  };
  std::vector<std::size_t> picked;
  auto fresh = [&](std::size_t i) { return std::find(picked.begin(), picked.end(), i) == picked.end(); };
  for (const auto& kind : kinds)
    for (std::size_t i = 0; i < test.size() && picked.size() < want; ++i)
      if (kind(test[i].source) && fresh(i)) {
        picked.push_back(i);
        break;
      }
  for (std::size_t i = 0; i < test.size() && picked.size() < want; ++i)
    if (fresh(i)) picked.push_back(i);
  return picked;
}

// The chosen test examples, decoded as one batch, with their pairs.
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

// YYYY-MM-DD with digits where digits belong.
bool well_formed(const std::string& s) {
  if (s.size() != 10) return false;
  for (std::size_t i = 0; i < 10; ++i)
    if ((i == 4 || i == 7) ? s[i] != '-' : !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

// Fractions of predictions whose year (characters 0-3), month (5-6) and day (8-9) match the target.
std::vector<double> field_accuracy(const nn::rnn::Evaluation& ev, const std::vector<data::Pair>& pairs) {
  const std::size_t from[3] = {0, 5, 8}, len[3] = {4, 2, 2};
  std::vector<double> acc(3, 0.0);
  for (std::size_t i = 0; i < pairs.size(); ++i)
    for (int f = 0; f < 3; ++f)
      acc[f] += ev.predictions[i].size() >= from[f] + len[f] &&
                ev.predictions[i].compare(from[f], len[f], pairs[i].target, from[f], len[f]) == 0;
  for (double& a : acc) a /= double(pairs.size());
  return acc;
}

// An attention map of a decoded example: output characters (queries) against input characters.
AttentionMap alignment(const Showcase& s, std::size_t i, const data::Vocab& v, const std::string& title) {
  return {s.decoded.decoded.attention[i], char_labels(s.pairs[i].source, true),
          token_labels(s.decoded.decoded.ids[i], v), title};
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
  return {{"x: input ids", shape_str(b.source.ids.shape()), "(B, S), padded with <pad>, ends with <eos>"},
          {"embed(x)", sh(model.encoder.embed(b.source.ids)), "(B, S, E)"},
          {"h: annotations = keys = values", sh(e.annotations), "(B, S, 2He), [forward; backward] per position"},
          {"allowed keys", shape_str(e.real.shape()), "(B, S), false on padding"},
          {"s_0 = tanh(W_init [fwd_last; bwd_first])", sh(e.init), "(B, Hd), the decoder's first state"},
          {"W_q s_{t-1}", sh(score[0].value), "(B, 1, A), the query, projected"},
          {"W_k h", sh(score[1].value), "(B, S, A), every key, projected"},
          {"tanh(W_q s + W_k h)", sh(score[2].value), "(B, 1, S, A), broadcast: one feature vector per (query, key)"},
          {"e_t = v^T tanh(...)", sh(score[3].value), "(B, 1, S), one score per key"},
          {"a_t = masked softmax(e_t)", sh(a.weights), "(B, S), the attention weights"},
          {"c_t = sum_j a_tj h_j", sh(a.output), "(B, 2He), the context"},
          {"[embed(y_{t-1}); c_t]", sh(concat<float>({dec.embed(prev), a.output}, -1)), "(B, E + 2He), the GRU cell's input"},
          {"s_t", sh(st.state), "(B, Hd)"},
          {"logits_t = W_o [s_t; c_t]", sh(st.logits), "(B, V)"},
          {"all T steps: logits", sh(logits), "(B, T, V), scored against y <eos>"},
          {"all T steps: weights", sh(w), "(B, T, S), one attention map per example"}};
}

// ---------------------------------------------------------------------------------------------
// The lesson's sections.

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
  p.model.style = nn::rnn::DecoderStyle::Bahdanau;
  p.model.score = "additive";
  p.model.embed = full_or_quick(32, 16);
  p.model.encoder_hidden = p.model.decoder_hidden = p.model.attention_hidden = full_or_quick(64, 32);
  p.recipe.epochs = epochs(6, 4);
  p.recipe.batch = 64;
  p.recipe.clip = 1.0;
  p.recipe.seed = seed() + 11;
  p.recipe.lr = 5e-3;
  p.recipe.decay = Decay::constant;
  record(p);
  return p;
}

data::DateTask the_task(const Plan& s) {
  data::DateTask task = data::make_date_task(s.examples, seed());
  say("We generate ", s.examples, " dates between 1950 and 2049, each written in one of ", data::num_date_formats(),
      " human formats, and ask for the ISO form YYYY-MM-DD. Input and output are read and written one character at "
      "a time, so the model must learn the month names, ordinals, the US month-first order of slashed dates and the "
      "two-digit-year rule on its own.");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < 8; ++i) rows.push_back(row(task.pairs.train[i].source, task.pairs.train[i].target));
  table({"input (source)", "output (target)"}, rows);
  const std::size_t overlap = data::split_overlap(task.pairs);
  say("Splits are cut by distinct input string, so no test input was ever seen in training: ", task.pairs.train.size(),
      " train, ", task.pairs.validation.size(), " validation, ", task.pairs.test.size(), " test; inputs shared between "
      "splits: ", overlap, ". Vocabularies (from the training split, with <pad> <bos> <eos> <unk>): ",
      task.source_vocab.size(), " input characters, ", task.target_vocab.size(), " output characters.");
  metric("split_overlap", double(overlap));
  return task;
}

void why_attention(const Plan& s) {
  say("A plain encoder-decoder (Sutskever et al. 2014; Cho et al. 2014) reads the input into one vector, its last "
      "state, and the decoder must rebuild the output from that vector alone. Every input, short or long, goes "
      "through the same ", s.model.decoder_hidden, " numbers, and the information about the early characters has to "
      "survive every later step of the encoder. Bahdanau et al. keep ALL encoder states h_1..h_S (the annotations) "
      "and let the decoder choose, at each output step, which of them to read. To write the year, it can look "
      "straight at the four year digits; to write the month, at the month name. The cost is S scores per output step.");
  say("Our encoder is a bidirectional GRU, so each annotation h_j = [forward_j; backward_j] describes character j in "
      "the context of the whole input. At output step t the decoder, whose previous state is s_{t-1}, computes");
  verbatim("e_tj     = v^T tanh(W_q s_{t-1} + W_k h_j)        score of input position j   (additive: a one-layer MLP)\n"
           "a_tj     = exp(e_tj) / sum_k exp(e_tk)             attention weights, sum to 1 over the real inputs\n"
           "c_t      = sum_j a_tj h_j                          context vector\n"
           "s_t      = GRU([embed(y_{t-1}); c_t], s_{t-1})     the context enters the recurrence\n"
           "logits_t = W_o [s_t; c_t]                          next-character scores");
  say("It is called additive because query and key are projected into one space of size A and ADDED before the "
      "tanh, instead of multiplied as in the dot-product scores of lesson 03. Padding positions of shorter inputs get "
      "weight exactly 0 (a masked softmax).");
  say("W_k h_j does not depend on t, so the decoder projects the annotations once per input and reuses them at every "
      "output step, as Bahdanau et al. point out in their appendix (nn::Attention::memory does it here); each step "
      "pays only for W_q s_{t-1}, the tanh and v^T.");
}

void show_the_model(nn::rnn::Seq2Seq& model, const data::DateTask& task, const Plan& s) {
  say("One real training batch through the untrained model (B = batch, S = longest input + <eos>, T = output length "
      "+ <eos>, E = embedding, He = encoder state per direction, Hd = decoder state, A = attention width, V = output "
      "vocabulary):");
  const data::Seq2SeqBatch batch = data::make_seq2seq_batch(task.train, data::first_rows(s.recipe.batch));
  table({"tensor", "shape", "what it is"}, trace_shapes(model, batch));
  const std::size_t attn = model.attention_parameters(), all = model.parameter_count(),
                    enc = model.encoder.parameter_count();
  table({"part", "parameters"}, {row("encoder (embedding, bidirectional GRU, bridge to s_0)", enc),
                                 row("attention (W_q, W_k, v)", attn),
                                 row("decoder (embedding, GRU cell, output layer)", all - enc - attn), row("total", all)});
  metric("parameters", double(all));
}

// The training, with six test inputs decoded early and at the end.
struct Training {
  History history;
  std::size_t early_step;
  Showcase early, late;
  std::vector<double> early_fields;  // year, month, day accuracy on the whole test set, early
};

Training train(nn::rnn::Seq2Seq& model, const data::DateTask& task, Plan s) {
  const double load_at_start = load_average();
  const std::vector<std::size_t> shown = showcase_examples(task.pairs.test, 6);
  Training t{{}, full_or_quick<std::size_t>(75, 30), {}, {}, {}};
  say("Teacher forcing: the decoder reads <bos> y_1 .. y_9 and is scored (cross-entropy) on y_1 .. y_10 <eos>. Adam "
      "(lr ", fixed(s.recipe.lr, 4), "), gradient norm clipped at ", fixed(s.recipe.clip, 1), ", batches of ", s.recipe.batch, ", ",
      s.recipe.epochs, " epochs. We decode six test inputs after ", t.early_step, " steps and again at the end, and keep "
      "their attention weights.");
  auto snapshot = [&] {
    t.early = decode_examples(model, task, shown);
    t.early_fields = field_accuracy(nn::rnn::evaluate(model, task.test, task.pairs.test, task.target_vocab), task.pairs.test);
  };
  s.recipe.after_step = [&](std::size_t step) {
    if (step == t.early_step) snapshot();
  };
  t.history = train_dates(model, task, s.recipe);
  if (t.early.pairs.empty()) snapshot();  // fewer steps than early_step
  t.late = decode_examples(model, task, shown);
  const History& h = t.history;
  say(h.steps, " steps of ", s.recipe.batch, " examples (", task.train.size(), " per epoch). A step (forward, backward, "
      "clipping, Adam) took ", fixed(h.median_step_cpu_ms(), 1), " ms of CPU time and ", fixed(h.median_step_ms(), 1),
      " ms of wall time (medians); the load average was ", fixed(load_at_start, 1), " when the lesson started",
      load_at_start > 2.5 ? ", on a 2-core machine shared with other jobs, so the wall time is inflated." : ".");
  timing("ms_per_step", h.median_step_ms());
  timing("cpu_ms_per_step", h.median_step_cpu_ms());
  timing("load_average_at_start", load_at_start);
  CurvesFigureOptions curves{"Cross-entropy per output character"};
  curves.ylabel = "nats per character (log scale)";
  save_figure(loss_curves({{"train", &h}}, curves), "loss", "Training loss by step; training and validation loss by epoch");
  std::vector<std::string> val;
  for (double v : h.validation_of("loss")) val.push_back(fixed(v, 4));
  say("Validation loss after each epoch: ", listing(val), ".");
  return t;
}

void early_and_late(const Training& t, const nn::rnn::Evaluation& test, const data::DateTask& task) {
  say("After ", t.early_step, " steps (greedy decoding, test inputs):");
  verbatim(decodings_text(t.early));
  say("After ", t.history.steps, " steps:");
  verbatim(decodings_text(t.late));
  auto count = [&](const Showcase& s, bool exact) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < s.pairs.size(); ++i)
      n += exact ? s.decoded.predictions[i] == s.pairs[i].target : well_formed(s.decoded.predictions[i]);
    return text(n, " of ", s.pairs.size());
  };
  say("Early: ", count(t.early, true), " right, ", count(t.early, false), " shaped like an ISO date (four digits, "
      "dash, two digits, dash, two digits). Late: ", count(t.late, true), " right, ", count(t.late, false), " well-formed.");
  const std::vector<double> late_fields = field_accuracy(test, task.pairs.test);
  say("Which parts come first? The share of all ", task.test.size(), " test inputs whose year, month and day are right:");
  const std::vector<double>& e = t.early_fields;
  table({"after", "year", "month", "day"},
        {row(text(t.early_step, " steps"), fixed(e[0], 3), fixed(e[1], 3), fixed(e[2], 3)),
         row(text(t.history.steps, " steps"), fixed(late_fields[0], 3), fixed(late_fields[1], 3), fixed(late_fields[2], 3))});
}

void held_out(const Training& t, const nn::rnn::Evaluation& test, const data::DateTask& task) {
  const double val_loss = t.history.validation_of("loss").back();
  table({"split", "examples", "exact match", "per-character accuracy"},
        {row("test", task.test.size(), fixed(test.exact_match, 4), fixed(test.char_accuracy, 4))});
  say("Exact match counts an output as right only if all ten characters and the stop are right; per-character "
      "accuracy compares position by position (a model that ignores its input gets roughly half the characters, the "
      "dashes, the century and the month's leading digit, and almost no exact matches). Final validation loss: ",
      fixed(val_loss, 4), " nats per character.");
  std::string wrong;
  for (std::size_t i = 0, n = 0; i < test.predictions.size() && n < 6; ++i)
    if (test.predictions[i] != task.pairs.test[i].target) {
      wrong += text("\"", task.pairs.test[i].source, "\" -> ", test.predictions[i], " (want ", task.pairs.test[i].target, ")\n");
      ++n;
    }
  if (!wrong.empty()) {
    say("Some of the test inputs it still gets wrong:");
    verbatim(wrong);
  }
  metric("test_exact_match", test.exact_match);
  metric("test_char_accuracy", test.char_accuracy);
  metric("validation_loss", val_loss);
}

void where_it_looks(const Training& t, const nn::rnn::Evaluation& test, const data::DateTask& task) {
  const data::Vocab& v = task.target_vocab;
  std::vector<AttentionMap> maps;
  for (std::size_t k = 0; k < 4; ++k)
    maps.push_back(alignment(t.late, k, v, "\"" + t.late.pairs[k].source + "\" -> " + t.late.decoded.predictions[k]));
  AttentionFigureOptions style{"Additive attention on held-out test inputs (trained model)", 2, 2800, 1500};
  style.keys_label = "input characters (keys)";
  style.queries_label = "output characters (queries)";
  save_figure(attention_figure(maps, style), "alignments",
              "Attention weights of four test inputs: rows are output characters, columns input characters");
  const data::YearAttention ya = data::year_attention(test.decoded.attention, task.pairs.test);
  say("Each row is one output step and sums to 1 over the real input characters. Read a map row by row: the steps "
      "that write the year look at the year's digits, the month steps at the month name or number, the day steps at "
      "the day; words that carry no information (a weekday, 'the', 'of', an ordinal suffix) get little weight. A "
      "number backs this up: over the ", ya.examples, " test inputs that spell the year with four digits, the four "
      "steps that write the year put ", percent(ya.mass), " of their attention on those four input characters, where "
      "attention spread evenly would put ", percent(ya.uniform), ".");
  metric("test_year_attention", ya.mass);
  style.title = "One test input, \"" + t.early.pairs[0].source + "\", early and late in training";
  style.height = 900;
  save_figure(attention_figure({alignment(t.early, 0, v, text("after ", t.early_step, " steps: ", t.early.decoded.predictions[0])),
                                alignment(t.late, 0, v, text("after ", t.history.steps, " steps: ", t.late.decoded.predictions[0]))},
                               style),
              "alignment_early_late", "The same test input's attention early and late in training");
  auto mean_row_max = [](const xt::xarray<double>& a) { return double(xt::mean(xt::amax(a, {1}))()); };
  say("The largest weight in a row, averaged over the rows of this example, is ",
      fixed(mean_row_max(t.early.decoded.decoded.attention[0]), 2), " after ", t.early_step, " steps and ",
      fixed(mean_row_max(t.late.decoded.decoded.attention[0]), 2), " at the end (1 would be one input character per "
      "output character). While the weights are spread out, the context is a blend of many characters, not much "
      "better than the single summary vector of a plain encoder-decoder; training sharpens each row onto the few "
      "characters the output needs.");
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"02_additive_attention", "Additive (Bahdanau) attention: normalizing dates",
                     "A bidirectional GRU encoder and a GRU decoder with additive attention learn to rewrite dates as ISO 8601.",
                     "test_exact_match"},
                    argc, argv, [] {
                      const Plan setup = choose_sizes();
                      section("1. The task: dates in many formats, rewritten as ISO 8601");
                      const data::DateTask task = the_task(setup);
                      section("2. Why attention: the fixed-length bottleneck");
                      why_attention(setup);
                      section("3. The model, and the shape of every tensor");
                      Generator gen(seed() + 3);
                      nn::rnn::Seq2Seq model(setup.model, task.source_vocab.size(), task.target_vocab.size(), gen);
                      show_the_model(model, task, setup);
                      section("4. Training");
                      const Training training = train(model, task, setup);
                      const nn::rnn::Evaluation test = nn::rnn::evaluate(model, task.test, task.pairs.test, task.target_vocab);
                      section("5. Early and late: what the decoder writes");
                      early_and_late(training, test, task);
                      section("6. Held-out results");
                      held_out(training, test, task);
                      section("7. Where the decoder looks");
                      where_it_looks(training, test, task);
                    });
}
