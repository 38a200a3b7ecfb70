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
#include <cstdio>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "lessons/common/lesson.hpp"
#include "lessons/common/seq2seq.hpp"
#include "lessons/common/figure.hpp"
#include "plots/plots.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace s2s = attnlab::lessons::s2s;
namespace data = attnlab::nn::data;

namespace {

// Every source string of one split that also appears in another (must be none).
std::size_t split_overlap(const data::Splits<data::Pair>& p) {
  std::set<std::string> train, val;
  for (const auto& e : p.train) train.insert(e.source);
  for (const auto& e : p.validation) val.insert(e.source);
  std::size_t n = 0;
  for (const auto& e : p.validation) n += train.count(e.source);
  for (const auto& e : p.test) n += train.count(e.source) + val.count(e.source);
  return n;
}

// Test examples to show: the first one of each of several written forms, so the figures cover
// words, ordinals, slashes and bare digits rather than four look-alikes.
std::vector<std::size_t> showcase_examples(const std::vector<data::Pair>& test, std::size_t want) {
  const std::vector<std::function<bool(const std::string&)>> kinds = {
      [](const std::string& s) { return s.find(" of ") != std::string::npos; },
      [](const std::string& s) { return s.find('/') != std::string::npos && std::isalpha(static_cast<unsigned char>(s[0])); },
      [](const std::string& s) { return s.find(", ") != std::string::npos && s.size() > 20; },
      [](const std::string& s) { return s.find('-') != std::string::npos; },
      [](const std::string& s) { return s.find('.') != std::string::npos; },
      [](const std::string& s) { return std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }); },
  };
  std::vector<std::size_t> picked;
  for (const auto& kind : kinds)
    for (std::size_t i = 0; i < test.size() && picked.size() < want; ++i)
      if (kind(test[i].source) && std::find(picked.begin(), picked.end(), i) == picked.end()) {
        picked.push_back(i);
        break;
      }
  for (std::size_t i = 0; i < test.size() && picked.size() < want; ++i)
    if (std::find(picked.begin(), picked.end(), i) == picked.end()) picked.push_back(i);
  return picked;
}

// Decodes the chosen test examples (one batch).
s2s::Evaluation decode_examples(s2s::Seq2Seq& model, const s2s::DateTask& task, const std::vector<std::size_t>& rows) {
  data::EncodedPairs enc;
  std::vector<data::Pair> pairs;
  for (std::size_t r : rows) {
    enc.source.push_back(task.test.source[r]);
    enc.target.push_back(task.test.target[r]);
    pairs.push_back(task.pairs.test[r]);
  }
  return s2s::evaluate(model, enc, pairs, task.target_vocab);
}

std::string decodings_text(const s2s::Evaluation& ev, const std::vector<data::Pair>& pairs) {
  std::string out;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    char line[160];
    std::snprintf(line, sizeof line, "%-32s -> %-12s %s\n", ("\"" + pairs[i].source + "\"").c_str(),
                  ev.predictions[i].c_str(), ev.predictions[i] == pairs[i].target ? "ok" : ("want " + pairs[i].target).c_str());
    out += line;
  }
  return out;
}

plots::HeatmapOptions alignment_options(const std::string& source, const std::vector<Index>& out_ids,
                                        const data::Vocab& v) {
  plots::HeatmapOptions o;
  o.x_labels = s2s::char_labels(source, true);
  o.y_labels = s2s::output_labels(out_ids, v);
  o.vmin = 0.0;
  o.vmax = 1.0;
  o.colorbar = false;
  return o;
}

// YYYY-MM-DD with digits where digits belong.
bool well_formed(const std::string& s) {
  if (s.size() != 10) return false;
  for (std::size_t i = 0; i < 10; ++i)
    if ((i == 4 || i == 7) ? s[i] != '-' : !std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  return true;
}

// Fractions of predictions whose year (characters 0-3), month (5-6) and day (8-9) match the target.
std::vector<double> field_accuracy(const s2s::Evaluation& ev, const std::vector<data::Pair>& pairs) {
  const std::size_t from[3] = {0, 5, 8}, len[3] = {4, 2, 2};
  std::vector<double> acc(3, 0.0);
  for (std::size_t i = 0; i < pairs.size(); ++i)
    for (int f = 0; f < 3; ++f)
      acc[f] += ev.predictions[i].size() >= from[f] + len[f] &&
                ev.predictions[i].compare(from[f], len[f], pairs[i].target, from[f], len[f]) == 0;
  for (double& a : acc) a /= double(pairs.size());
  return acc;
}

// How peaked an attention map is: the mean over rows of the row's largest weight.
double mean_row_max(const xt::xarray<double>& a) {
  double s = 0;
  for (std::size_t i = 0; i < a.shape()[0]; ++i) {
    double m = 0;
    for (std::size_t j = 0; j < a.shape()[1]; ++j) m = std::max(m, a(i, j));
    s += m;
  }
  return a.shape()[0] ? s / double(a.shape()[0]) : 0.0;
}

xt::xarray<double> to_array(const std::vector<double>& v) {
  xt::xarray<double> a = xt::zeros<double>({v.size()});
  std::copy(v.begin(), v.end(), a.begin());
  return a;
}

// Runs the first decoder step of a batch piece by piece and lists each tensor's shape.
std::vector<std::vector<std::string>> trace_shapes(s2s::Seq2Seq& model, const data::Seq2SeqBatch& b) {
  NoGrad ng;
  s2s::Decoder& dec = *model.decoder;
  const s2s::Encoded e = model.encoder.forward(b.source);
  const s2s::Tns s = e.init, q = unsqueeze(s, 1);
  const auto steps = dec.attention().score().steps(q, e.annotations);  // W_q q, W_k k, tanh(..), v^T tanh(..)
  const s2s::Tns pq = steps[0].value, pk = steps[1].value, feat = steps[2].value, scores = steps[3].value;
  const AttentionResult<float> a = dec.attention()(s, e.annotations, e.annotations, e.real);
  const IndexArray prev = xt::view(b.decoder_input.ids, xt::all(), 0);
  const s2s::Tns in = concat<float>({dec.embed(prev), a.output}, -1);
  const s2s::Step st = dec.step(e, prev, s);
  s2s::Tns w;
  const s2s::Tns logits = dec.teacher_forced(e, b.decoder_input.ids, &w);
  auto sh = [](const s2s::Tns& t) { return shape_str(t.shape()); };
  return {{"x: input ids", shape_str(b.source.ids.shape()), "(B, S), padded with <pad>, ends with <eos>"},
          {"embed(x)", sh(model.encoder.embed(b.source.ids)), "(B, S, E)"},
          {"h: annotations = keys = values", sh(e.annotations), "(B, S, 2He), [forward; backward] per position"},
          {"allowed keys", shape_str(e.real.shape()), "(B, S), false on padding"},
          {"s_0 = tanh(W_init [fwd_last; bwd_first])", sh(e.init), "(B, Hd), the decoder's first state"},
          {"W_q s_{t-1}", sh(pq), "(B, 1, A), the query, projected"},
          {"W_k h", sh(pk), "(B, S, A), every key, projected"},
          {"tanh(W_q s + W_k h)", sh(feat), "(B, 1, S, A), broadcast: one feature vector per (query, key)"},
          {"e_t = v^T tanh(...)", sh(scores), "(B, 1, S), one score per key"},
          {"a_t = masked softmax(e_t)", sh(a.weights), "(B, S), the attention weights"},
          {"c_t = sum_j a_tj h_j", sh(a.output), "(B, 2He), the context"},
          {"[embed(y_{t-1}); c_t]", sh(in), "(B, E + 2He), the GRU cell's input"},
          {"s_t", sh(st.state), "(B, Hd)"},
          {"logits_t = W_o [s_t; c_t]", sh(st.logits), "(B, V)"},
          {"all T steps: logits", sh(logits), "(B, T, V), scored against y <eos>"},
          {"all T steps: weights", sh(w), "(B, T, S), one attention map per example"}};
}

}  // namespace

int main(int argc, char** argv) {
  Lesson L({"02_additive_attention", "Additive (Bahdanau) attention: normalizing dates",
            "A bidirectional GRU encoder and a GRU decoder with additive attention learn to rewrite dates as ISO 8601."},
           argc, argv);
  const bool quick = L.quick();
  const double load_at_start = s2s::load_average();
  const std::size_t n_examples = quick ? 4000 : 12000;
  s2s::ModelConfig mc;
  mc.style = s2s::DecoderStyle::Bahdanau;
  mc.score = "additive";
  mc.embed = quick ? 16 : 32;
  mc.encoder_hidden = mc.decoder_hidden = mc.attention_hidden = quick ? 32 : 64;
  s2s::TrainConfig tc;
  tc.epochs = L.epochs(6, 4);
  tc.batch = 64;
  tc.lr = 5e-3;
  tc.clip = 1.0;
  tc.seed = L.seed() + 11;
  L.config("examples", n_examples);
  L.config("embed", mc.embed);
  L.config("hidden", mc.decoder_hidden);
  L.config("epochs", tc.epochs);
  L.config("batch", tc.batch);
  L.config("lr", tc.lr);
  L.config("clip", tc.clip);

  // ------------------------------------------------------------------------------------------
  L.section("1. The task: dates in many formats, rewritten as ISO 8601");
  const s2s::DateTask task = s2s::make_date_task(n_examples, L.seed());
  L.say("We generate " + std::to_string(n_examples) + " dates between 1950 and 2049, each written in one of " +
        std::to_string(data::num_date_formats()) +
        " human formats, and ask for the ISO form YYYY-MM-DD. Input and output are read and written one "
        "character at a time, so the model must learn the month names, ordinals, the US month-first order of "
        "slashed dates and the two-digit-year rule on its own.");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < 8; ++i) rows.push_back({task.pairs.train[i].source, task.pairs.train[i].target});
  L.table({"input (source)", "output (target)"}, rows);
  const std::size_t overlap = split_overlap(task.pairs);
  L.say("Splits are cut by distinct input string, so no test input was ever seen in training: " +
        std::to_string(task.pairs.train.size()) + " train, " + std::to_string(task.pairs.validation.size()) +
        " validation, " + std::to_string(task.pairs.test.size()) + " test; inputs shared between splits: " +
        std::to_string(overlap) + ". Vocabularies (from the training split, with <pad> <bos> <eos> <unk>): " +
        std::to_string(task.source_vocab.size()) + " input characters, " + std::to_string(task.target_vocab.size()) +
        " output characters.");

  // ------------------------------------------------------------------------------------------
  L.section("2. Why attention: the fixed-length bottleneck");
  L.say("A plain encoder-decoder (Sutskever et al. 2014; Cho et al. 2014) reads the input into one vector, its "
        "last state, and the decoder must rebuild the output from that vector alone. Every input, short or long, "
        "goes through the same " + std::to_string(mc.decoder_hidden) +
        " numbers, and the information about the early characters has to survive every later step of the "
        "encoder. Bahdanau et al. keep ALL encoder states h_1..h_S (the annotations) and let the decoder choose, "
        "at each output step, which of them to read. To write the year, it can look straight at the four year "
        "digits; to write the month, at the month name. The cost is S scores per output step.");
  L.say("Our encoder is a bidirectional GRU, so each annotation h_j = [forward_j; backward_j] describes "
        "character j in the context of the whole input. At output step t the decoder, whose previous state "
        "is s_{t-1}, computes");
  L.verbatim(
      "e_tj     = v^T tanh(W_q s_{t-1} + W_k h_j)        score of input position j   (additive: a one-layer MLP)\n"
      "a_tj     = exp(e_tj) / sum_k exp(e_tk)             attention weights, sum to 1 over the real inputs\n"
      "c_t      = sum_j a_tj h_j                          context vector\n"
      "s_t      = GRU([embed(y_{t-1}); c_t], s_{t-1})     the context enters the recurrence\n"
      "logits_t = W_o [s_t; c_t]                          next-character scores");
  L.say("It is called additive because query and key are projected into one space of size A and ADDED before "
        "the tanh, instead of multiplied as in the dot-product scores of lesson 03. Padding positions of shorter "
        "inputs get weight exactly 0 (a masked softmax).");

  // ------------------------------------------------------------------------------------------
  L.section("3. The model, and the shape of every tensor");
  Generator gen(L.seed() + 3);
  s2s::Seq2Seq model(mc, task.source_vocab.size(), task.target_vocab.size(), gen);
  {
    std::vector<std::size_t> first;
    for (std::size_t i = 0; i < tc.batch; ++i) first.push_back(i);
    L.say("One real training batch through the untrained model (B = batch, S = longest input + <eos>, T = output "
          "length + <eos>, E = embedding, He = encoder state per direction, Hd = decoder state, A = attention "
          "width, V = output vocabulary):");
    L.table({"tensor", "shape", "what it is"}, trace_shapes(model, data::make_seq2seq_batch(task.train, first)));
  }
  const std::size_t attn_params = model.attention_parameters(), all_params = model.parameter_count();
  const std::size_t enc_params = model.encoder.parameter_count();
  L.table({"part", "parameters"}, {{"encoder (embedding, bidirectional GRU, bridge to s_0)", std::to_string(enc_params)},
                                   {"attention (W_q, W_k, v)", std::to_string(attn_params)},
                                   {"decoder (embedding, GRU cell, output layer)", std::to_string(all_params - enc_params - attn_params)},
                                   {"total", std::to_string(all_params)}});

  // ------------------------------------------------------------------------------------------
  L.section("4. Training");
  const std::vector<std::size_t> shown = showcase_examples(task.pairs.test, 6);
  std::vector<data::Pair> shown_pairs;
  for (std::size_t r : shown) shown_pairs.push_back(task.pairs.test[r]);
  const std::size_t early_step = quick ? 30 : 75;
  L.say("Teacher forcing: the decoder reads <bos> y_1 .. y_9 and is scored (cross-entropy) on y_1 .. y_10 <eos>. "
        "Adam (lr " + fmt(tc.lr, 4) + "), gradient norm clipped at " + fmt(tc.clip, 1) + ", batches of " +
        std::to_string(tc.batch) + ", " + std::to_string(tc.epochs) + " epochs. We decode six test inputs after " +
        std::to_string(early_step) + " steps and again at the end, and keep their attention weights.");
  s2s::Evaluation early;
  std::vector<double> early_fields;  // year, month, day accuracy on the whole test set
  auto snapshot = [&] {
    early = decode_examples(model, task, shown);
    early_fields = field_accuracy(s2s::evaluate(model, task.test, task.pairs.test, task.target_vocab), task.pairs.test);
  };
  const s2s::History hist = s2s::train(model, task, tc, "train", [&](std::size_t step) {
    if (step == early_step) snapshot();
  });
  if (early.predictions.empty()) snapshot();  // fewer steps than early_step
  const double ms_step = hist.median_step_ms(), cpu_step = hist.median_step_cpu_ms();
  L.say(std::to_string(hist.steps) + " steps of " + std::to_string(tc.batch) + " examples (" +
        std::to_string(task.train.size()) + " per epoch). A step (forward, backward, clipping, Adam) took " +
        fmt(cpu_step, 1) + " ms of CPU time and " + fmt(ms_step, 1) + " ms of wall time (medians); the load average "
        "was " + fmt(load_at_start, 1) + " when the lesson started" +
        (load_at_start > 2.5 ? ", on a 2-core machine shared with other jobs, so the wall time is inflated." : "."));
  L.timing("ms_per_step", ms_step);
  L.timing("cpu_ms_per_step", cpu_step);
  L.timing("load_average_at_start", load_at_start);

  {
    plots::Figure fig(1400, 900);
    fig.title("Cross-entropy per output character");
    xt::xarray<double> x = xt::arange<double>(1.0, double(tc.epochs) + 1.0);
    plots::LineOptions lo;
    lo.markers = true;
    lo.log_y = true;
    plots::line_plot(fig.panel(0).xlabel("epoch").ylabel("loss (nats per character, log scale)"),
                     {plots::Series("train (mean over the epoch)", x, to_array(hist.train_loss)),
                      plots::Series("validation (end of epoch)", x, to_array(hist.validation_loss))},
                     lo);
    save_figure(L, fig, "loss", "Training and validation loss per epoch");
  }
  L.say("Validation loss after each epoch: " + [&] {
    std::string s;
    for (double v : hist.validation_loss) s += (s.empty() ? "" : ", ") + fmt(v, 4);
    return s;
  }() + ".");

  // ------------------------------------------------------------------------------------------
  L.section("5. Early and late: what the decoder writes");
  const s2s::Evaluation late = decode_examples(model, task, shown);
  L.say("After " + std::to_string(early_step) + " steps (greedy decoding, test inputs):");
  L.verbatim(decodings_text(early, shown_pairs));
  L.say("After " + std::to_string(hist.steps) + " steps:");
  L.verbatim(decodings_text(late, shown_pairs));
  auto count = [&](const s2s::Evaluation& ev, bool exact) {
    std::size_t n = 0;
    for (std::size_t i = 0; i < shown_pairs.size(); ++i)
      n += exact ? ev.predictions[i] == shown_pairs[i].target : well_formed(ev.predictions[i]);
    return std::to_string(n) + " of " + std::to_string(shown_pairs.size());
  };
  L.say("Early: " + count(early, true) + " right, " + count(early, false) + " shaped like an ISO date (four digits, "
        "dash, two digits, dash, two digits). Late: " + count(late, true) + " right, " + count(late, false) +
        " well-formed.");
  const std::vector<double> late_fields = field_accuracy(
      s2s::evaluate(model, task.test, task.pairs.test, task.target_vocab), task.pairs.test);
  L.say("Which parts come first? The share of all " + std::to_string(task.test.size()) +
        " test inputs whose year, month and day are right:");
  L.table({"after", "year", "month", "day"},
          {{std::to_string(early_step) + " steps", fmt(early_fields[0], 3), fmt(early_fields[1], 3), fmt(early_fields[2], 3)},
           {std::to_string(hist.steps) + " steps", fmt(late_fields[0], 3), fmt(late_fields[1], 3), fmt(late_fields[2], 3)}});

  // ------------------------------------------------------------------------------------------
  L.section("6. Held-out results");
  const s2s::Evaluation test = s2s::evaluate(model, task.test, task.pairs.test, task.target_vocab);
  const double val_loss = hist.validation_loss.back();
  L.table({"split", "examples", "exact match", "per-character accuracy"},
          {{"test", std::to_string(task.test.size()), fmt(test.exact_match, 4), fmt(test.char_accuracy, 4)}});
  L.say("Exact match counts an output as right only if all ten characters and the stop are right; per-character "
        "accuracy compares position by position (a model that ignores its input gets roughly half the characters, "
        "the dashes, the century and the month's leading digit, and almost no exact matches). Final validation loss: " +
        fmt(val_loss, 4) + " nats per character.");
  std::size_t shown_wrong = 0;
  std::string wrong;
  for (std::size_t i = 0; i < test.predictions.size() && shown_wrong < 6; ++i)
    if (test.predictions[i] != task.pairs.test[i].target) {
      wrong += "\"" + task.pairs.test[i].source + "\" -> " + test.predictions[i] + " (want " + task.pairs.test[i].target + ")\n";
      ++shown_wrong;
    }
  if (shown_wrong) {
    L.say("Some of the test inputs it still gets wrong:");
    L.verbatim(wrong);
  }
  L.metric("test_exact_match", test.exact_match);
  L.metric("test_char_accuracy", test.char_accuracy);
  L.metric("validation_loss", val_loss);
  L.metric("split_overlap", double(overlap));
  L.metric("parameters", double(all_params));

  // ------------------------------------------------------------------------------------------
  L.section("7. Where the decoder looks");
  {
    plots::Figure fig(2800, 1500, 2, 2);  // wide enough to label all 30 characters of the longest inputs
    fig.title("Additive attention on held-out test inputs (trained model)");
    for (int k = 0; k < 4; ++k) {
      const std::size_t r = shown[std::size_t(k)];
      plots::Panel& p = fig.panel(k).title("\"" + task.pairs.test[r].source + "\" -> " + test.predictions[r]);
      p.xlabel("input characters (keys)").ylabel("output characters (queries)");
      plots::heatmap(p, test.decoded.attention[r],
                     alignment_options(task.pairs.test[r].source, test.decoded.ids[r], task.target_vocab));
    }
    fig.shared_colorbar({plots::Colormap::viridis(), 0.0, 1.0, "attention weight"});
    save_figure(L, fig, "alignments", "Attention weights of four test inputs: rows are output characters, columns input characters");
  }
  const s2s::YearAttention ya = s2s::year_attention(test, task.pairs.test);
  L.say("Each row is one output step and sums to 1 over the real input characters. Read a map row by row: the "
        "steps that write the year look at the year's digits, the month steps at the month name or number, the "
        "day steps at the day; words that carry no information (a weekday, 'the', 'of', an ordinal suffix) get "
        "little weight. A number backs this up: over the " + std::to_string(ya.examples) +
        " test inputs that spell the year with four digits, the four steps that write the year put " +
        fmt(100.0 * ya.mass, 1) + "% of their attention on those four input characters, where attention "
        "spread evenly would put " + fmt(100.0 * ya.uniform, 1) + "%.");
  L.metric("test_year_attention", ya.mass);
  {
    plots::Figure fig(2800, 900, 1, 2);
    const std::size_t r = shown[0];
    fig.title("One test input, \"" + task.pairs.test[r].source + "\", early and late in training");
    const data::Pair& pr = task.pairs.test[r];
    plots::Panel& a = fig.panel(0).title("after " + std::to_string(early_step) + " steps: " + early.predictions[0]);
    a.xlabel("input characters (keys)").ylabel("output characters (queries)");
    plots::heatmap(a, early.decoded.attention[0], alignment_options(pr.source, early.decoded.ids[0], task.target_vocab));
    plots::Panel& b = fig.panel(1).title("after " + std::to_string(hist.steps) + " steps: " + late.predictions[0]);
    b.xlabel("input characters (keys)").ylabel("output characters (queries)");
    plots::heatmap(b, late.decoded.attention[0], alignment_options(pr.source, late.decoded.ids[0], task.target_vocab));
    fig.shared_colorbar({plots::Colormap::viridis(), 0.0, 1.0, "attention weight"});
    save_figure(L, fig, "alignment_early_late", "The same test input's attention early and late in training");
  }
  L.say("The largest weight in a row, averaged over the rows of this example, is " +
        fmt(mean_row_max(early.decoded.attention[0]), 2) + " after " + std::to_string(early_step) + " steps and " +
        fmt(mean_row_max(late.decoded.attention[0]), 2) + " at the end (1 would be one input character per output "
        "character). While the weights are spread out, the context is a blend of many characters, not much better "
        "than the single summary vector of a plain encoder-decoder; training sharpens each row onto the few "
        "characters the output needs.");
  return L.finish();
}
