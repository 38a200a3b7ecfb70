// Lesson 07: multi-head attention, trained, and taken apart head by head.
//
// One attention head returns one weighted mean of the values. When an output needs two different
// positions at once, and which is which matters, a mean of the two loses the order: a v(a) + b v(b)
// with a = b cannot tell (3, 5) from (5, 3). Multi-head attention splits d_model into h heads
// that attend independently and puts their outputs side by side, so two heads can fetch two
// tokens and keep them apart. We split the computation open and count what it costs, then train
// one attention layer with 1, 2, 4 and 8 heads at the same d_model on tasks that need two and
// three earlier tokens, read what every head learned, switch heads off one at a time to measure
// what each is worth, prune them, and time the step.
#include <algorithm>
#include <cmath>
#include <memory>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "lessons/kit/kit.hpp"
#include "nn/attention/multi_head.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/tagged.hpp"
#include "nn/data/tasks.hpp"
#include "nn/schedule.hpp"
#include "nn/transformer/encoder_model.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

constexpr std::size_t kVocab = 6, kLength = 16, kModel = 64;  // six digits, 16 tokens, d_model
constexpr Index kNoTag = -100;  // positions before the earliest relation have no tag
const std::vector<std::size_t> kHeads = {1, 2, 4, 8};

// ---------------------------------------------------------------------------------------------
// 1. Splitting d_model into heads.

void splitting_into_heads() {
  const std::size_t B = 2, L = 5, d = 8, h = 2, dk = d / h;
  Generator gen(seed() + 1);
  nn::MultiHeadAttention<double> mha(d, h, gen);
  const Tensor<double> x = Tensor<double>::randn({B, L, d}, gen);
  say("Multi-head attention projects the input three times, $Q = xW_Q$, $K = xW_K$, $V = xW_V$, each (B, L, d), then "
      "reads the last axis as $h$ heads of $d_k = d/h$ columns: head $i$ uses columns $i d_k$ to $(i+1) d_k - 1$ of $Q$, "
      "$K$ and $V$. Each head runs scaled dot-product attention on its own slice, $\\mathrm{softmax}(Q_i K_i^\\top / "
      "\\sqrt{d_k})\\,V_i$; the $h$ outputs are put side by side again and mixed by $W_O$. Here is every tensor for a batch of B = ", B, " sequences of L = ", L, " tokens, d = ", d,
      ", h = ", h, ", computed step by step with the engine's ops (the module keeps W_q, W_k and W_v stacked as one "
      "(3d x d) matrix, in_proj_weight, and W_o as out_proj, PyTorch's layout and names; q_proj uses the first d rows):");
  const long Bl = long(B), Ll = long(L), hl = long(h), dkl = long(dk);
  auto split = [&](const Tensor<double>& t) { return transpose(reshape(t, {Bl, Ll, hl, dkl}), 1, 2); };
  const Tensor<double> q = mha.q_proj(x), k = mha.k_proj(x), v = mha.v_proj(x);
  const Tensor<double> qh = split(q), kh = split(k), vh = split(v);
  const Tensor<double> scores = matmul(qh, kh, false, true) / std::sqrt(double(dk));
  const Tensor<double> weights = softmax(scores, -1);
  const Tensor<double> heads = matmul(weights, vh);
  const Tensor<double> merged = reshape(transpose(heads, 1, 2), {Bl, Ll, long(d)});
  const Tensor<double> out = mha.out_proj(merged);
  auto sh = [](const Tensor<double>& t) { return shape_str(t.shape()); };
  table({"step", "tensor", "shape"},
        {row("input", "x", sh(x)), row("project", "Q = x W_q (and K, V)", sh(q)),
         row("split", "Q viewed as (B, L, h, d_k), heads to the front", sh(qh)),
         row("score, per head", "S = Q_i K_i^T / sqrt(d_k)", sh(scores)), row("softmax, per head", "A = softmax(S)", sh(weights)),
         row("weigh the values, per head", "A V_i", sh(heads)), row("merge", "heads side by side", sh(merged)),
         row("mix", "out = merged W_o", sh(out))});
  const double diff = max_abs_diff(out.value(), mha.forward(x).output.value());
  say("The module itself does the same without the split and merge copies: its fused op reads head $i$ of $Q$, $K$ "
      "and $V$ in place and writes the merged output directly.");
  metric("split_merge_vs_module_max_diff", diff);
  claim({"module_equals_steps", "split_merge_vs_module_max_diff <= 1e-12",
         text("Its output equals the step-by-step one to ", sci(diff, 1), " (double precision)."),
         text("Its output differs from the step-by-step one by ", sci(diff, 1), ", more than double-precision rounding.")});
  const std::string dot =
      "digraph heads { rankdir=LR; nodesep=0.2; node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef3fb\", "
      "color=\"#5b7bb3\", fontname=\"DejaVu Sans\", fontsize=11]; edge [color=\"#555555\", fontname=\"DejaVu Sans\", "
      "fontsize=9];\n"
      "x [label=\"x\\n(B, L, d)\"]; qkv [label=\"Q, K, V = x W_q, x W_k, x W_v\\n(B, L, d) each\"];\n"
      "subgraph cluster_heads { label=\"h heads, in parallel\"; fontname=\"DejaVu Sans\"; color=\"#bbbbbb\"; style=dashed;\n"
      "h1 [label=\"head 1\\nsoftmax(Q_1 K_1^T / sqrt(d_k)) V_1\\n(B, L, d_k)\", fillcolor=\"#fdf0e0\"];\n"
      "dots [label=\"...\", shape=plaintext, style=\"\"];\n"
      "h2 [label=\"head h\\nsoftmax(Q_h K_h^T / sqrt(d_k)) V_h\\n(B, L, d_k)\", fillcolor=\"#fdf0e0\"]; }\n"
      "merge [label=\"merge: heads side by side\\n(B, L, h d_k) = (B, L, d)\"]; out [label=\"out = merged W_o\\n(B, L, d)\"];\n"
      "x -> qkv; qkv -> h1 [label=\" columns 1..d_k\"]; qkv -> dots [style=invis]; "
      "qkv -> h2 [label=\" last d_k columns\"]; h1 -> merge; dots -> merge [style=invis]; h2 -> merge; merge -> out; }";
  save_diagram(dot, "multi_head_flow", "The tensors of multi-head attention: one projection each for Q, K and V, "
                                       "split by columns into h heads of d_k = d / h, merged back and mixed by W_o");
  say("How the cost depends on h, at d = ", kModel, " for one sequence of L = ", kLength, " tokens: the four projections "
      "are (d x d) whatever h is, so the parameters (4 d^2 + 4 d with biases) and the projections' multiply-adds stay "
      "the same. The scores cost L^2 d_k per head, L^2 d in all, also the same. What multiplies is the number of score "
      "matrices, h of L x L: the memory the softmax weights take and the number of small matrix products.");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t heads_n : kHeads) {
    Generator g(1);
    const nn::MultiHeadAttention<float> m(kModel, heads_n, g);
    rows.push_back(row(heads_n, kModel / heads_n, m.parameter_count(), 4 * kLength * kModel * kModel,
                       2 * kLength * kLength * kModel, heads_n * kLength * kLength));
  }
  table({"heads h", "d_k", "parameters", "projection multiply-adds", "score + weighting multiply-adds",
         "attention weights stored"}, rows);
}

// ---------------------------------------------------------------------------------------------
// The tasks: at every position, the ordered tuple of the tokens a few fixed places to the left,
// y_i = (x[i - o_1], x[i - o_2], ...) as one class, read as a number in base 6.

struct Task {
  std::string name, formula;
  std::vector<std::size_t> offsets;  // the first is the most significant digit
  std::size_t classes() const { return std::size_t(std::pow(double(kVocab), double(offsets.size()))); }
  data::Tagged train, validation, test;
};

data::Tagged tag(const std::vector<data::Pair>& sequences, const std::vector<std::size_t>& offsets) {
  const std::size_t n = sequences.size(), first = *std::max_element(offsets.begin(), offsets.end());
  data::Tagged t{IndexArray::from_shape({n, kLength}), IndexArray::from_shape({n, kLength})};
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t i = 0; i < kLength; ++i) {
      t.inputs(s, i) = sequences[s].source[i] - '0';
      Index y = 0;
      for (std::size_t o : offsets) y = y * Index(kVocab) + (sequences[s].source[i - std::min(i, o)] - '0');
      t.targets(s, i) = i < first ? kNoTag : y;  // no tag where a relation would reach before the start
    }
  return t;
}

Task make_task(const std::string& name, const std::string& formula, std::vector<std::size_t> offsets, std::size_t n_train,
               std::size_t n_held_out, Generator& gen) {
  data::SeqTaskConfig cfg;
  cfg.alphabet = std::string("012345").substr(0, kVocab);
  cfg.min_len = cfg.max_len = kLength;
  const std::vector<data::Pair> all = data::make_seq_task(cfg, n_train + 2 * n_held_out, gen);  // distinct strings
  Task t{name, formula, std::move(offsets), {}, {}, {}};
  const data::Tagged tagged = tag(all, t.offsets);
  t.train = tagged.slice(0, n_train);
  t.validation = tagged.slice(n_train, n_train + n_held_out);
  t.test = tagged.slice(n_train + n_held_out, n_train + 2 * n_held_out);
  return t;
}

// ---------------------------------------------------------------------------------------------
// The model: embedding + sinusoidal positions, `layers` pre-norm blocks (attention + feed-forward),
// a final norm and a linear read-out per position.

std::unique_ptr<nn::EncoderModel<float>> make_model(const Task& task, std::size_t heads, std::size_t layers) {
  nn::EncoderModelConfig c;
  c.vocab = kVocab;
  c.num_classes = task.classes();
  c.num_layers = layers;
  c.layer = nn::LayerConfig{kModel, heads, 2 * kModel, 0.0, /*norm_first=*/true, nn::Activation::ReLU, 1e-5};
  c.positional = nn::Positional::Sinusoidal;
  c.pooling = nn::Pooling::None;
  Generator gen(seed() + 100 * layers);
  return std::make_unique<nn::EncoderModel<float>>(c, gen);
}

IndexArray predict(nn::EncoderModel<float>& model, const data::Tagged& set) {
  model.eval();
  return predict_tags([&](const IndexArray& x) { return model.forward(x); }, set.inputs);
}

double accuracy(nn::EncoderModel<float>& model, const data::Tagged& set) {
  return score_tags(predict(model, set), set.targets, kNoTag).token;
}

// The share of positions where digit r of the tuple is right: which tokens a model fetched.
std::vector<double> digit_accuracy(const IndexArray& predictions, const IndexArray& targets, const Task& task) {
  std::vector<double> right(task.offsets.size(), 0.0);
  std::size_t n = 0;
  for (std::size_t k = 0; k < predictions.size(); ++k) {
    Index y = targets.data()[k], p = predictions.data()[k];
    if (y == kNoTag) continue;
    ++n;
    for (std::size_t r = task.offsets.size(); r-- > 0; y /= Index(kVocab), p /= Index(kVocab))
      right[r] += y % Index(kVocab) == p % Index(kVocab);
  }
  for (double& r : right) r /= double(n);
  return right;
}

struct Trained {
  std::size_t heads, layers;
  std::unique_ptr<nn::EncoderModel<float>> model;
  History history;
  double accuracy = 0;
  std::vector<double> digits;
};

// One recipe for every head count and depth: Adam with a short warm-up and a cosine decay, clipped.
Recipe recipe_for(const std::string& label, int epochs_quick) {
  Recipe r;
  r.label = label, r.epochs = epochs(16, epochs_quick), r.batch = 64, r.lr = 2e-3, r.warmup = 0.05;
  r.decay = Decay::cosine, r.floor = 0.05, r.clip = 1.0, r.seed = seed() + 17;
  return r;
}

Trained train(const Task& task, std::size_t heads, std::size_t layers, int epochs_quick) {
  Trained t{heads, layers, make_model(task, heads, layers), {}, 0, {}};
  nn::EncoderModel<float>& m = *t.model;
  Recipe r = recipe_for(text(task.name, ", ", layers, " layer", layers > 1 ? "s" : "", ", ", counted(heads, "head")),
                        epochs_quick);
  r.validate = [&] { return Scores{{"accuracy", accuracy(m, task.validation)}}; };
  CrossEntropyOptions ce;
  ce.ignore_index = kNoTag;
  t.history = lessons::train(m, task.train.size(), [&](const std::vector<std::size_t>& rows) {
    const data::Tagged b = task.train.rows(rows);
    return cross_entropy(m.forward(b.inputs), b.targets, ce);
  }, r);
  const IndexArray p = predict(m, task.test);
  t.accuracy = score_tags(p, task.test.targets, kNoTag).token;
  t.digits = digit_accuracy(p, task.test.targets, task);
  return t;
}

// The first step after which the validation accuracy reached `level` (0: never).
std::size_t steps_to(const History& h, double level) {
  const std::vector<double>& acc = h.validation_of("accuracy");
  for (std::size_t e = 0; e < acc.size(); ++e)
    if (acc[e] >= level) return (e + 1) * h.steps_per_epoch;
  return 0;
}

std::vector<Trained> train_head_counts(const Task& task, int epochs_quick) {
  say("Task \"", task.name, "\": at every position i >= ", *std::max_element(task.offsets.begin(), task.offsets.end()),
      ", output the ", task.name, " ", task.formula, ", one of ", task.classes(), " classes (positions before that have no tag and are not "
      "scored). ", task.train.size(), " training, ", task.validation.size(), " validation and ", task.test.size(),
      " test sequences of ", kLength, " random digits 0-5, all distinct. The same model (d = ", kModel, ", one layer, "
      "feed-forward ", 2 * kModel, ", sinusoidal positions) and the same budget (", epochs(16, epochs_quick),
      " epochs, batch 64, Adam with warm-up and cosine decay from 2e-3) for every head count.");
  std::vector<Trained> runs;
  for (std::size_t h : kHeads) runs.push_back(train(task, h, 1, epochs_quick));
  std::vector<std::vector<std::string>> rows;
  for (const Trained& r : runs) {
    std::vector<std::string> cells = row(r.heads, kModel / r.heads, fixed(r.accuracy, 3));
    for (double d : r.digits) cells.push_back(fixed(d, 3));
    const std::size_t at = steps_to(r.history, 0.99);
    cells.push_back(at ? text(at) : "never");
    rows.push_back(cells);
    metric(text("test_acc_", task.name, "_h", r.heads), r.accuracy);
  }
  std::vector<std::string> header = {"heads", "d_k", "held-out accuracy"};
  for (std::size_t o : task.offsets) header.push_back(text("digit x[i-", o, "] right"));
  header.push_back("steps to 0.99 (validation)");
  table(header, rows);
  // Read the digits: a token is fetched when its digit is right at least 90 % of the time; the
  // others sit near chance, 1/6.
  std::vector<std::string> reading;
  std::size_t fetched_by_one = 0;
  for (const Trained& r : runs) {
    std::vector<std::string> got;
    for (std::size_t k = 0; k < task.offsets.size(); ++k)
      if (r.digits[k] >= 0.9) got.push_back(text("x[i-", task.offsets[k], "]"));
    reading.push_back(text(r.heads, r.heads > 1 ? " heads fetch " : " head fetches ", got.size(), " of the ",
                           task.offsets.size(), got.empty() ? "" : text(" (", listing(got), ")")));
    metric(text("tokens_fetched_", task.name, "_h", r.heads), double(got.size()));
    if (r.heads == 1) fetched_by_one = got.size();
  }
  say("The digit columns say which tokens each model found: a digit right at least 90 % of the time is a token the "
      "attention fetched; one near 1/6 = 0.167 is a guess. ", listing(reading), ".");
  std::size_t fewest = 0;  // the fewest heads that solve the task
  for (const Trained& r : runs)
    if (!fewest && r.accuracy >= 0.99) fewest = r.heads;
  metric("fewest_heads_" + task.name, double(fewest));
  say(fewest ? text("The fewest heads that solve this task (held-out accuracy at least 0.99): ", fewest, ".")
             : std::string("No head count solves this task at this budget."));
  const std::string n = task.name, tokens = counted(task.offsets.size(), "token");
  const double one = runs[0].accuracy, many = std::max(runs[2].accuracy, runs[3].accuracy);
  claim({"many_heads_solve_" + n, text("max(test_acc_", n, "_h4, test_acc_", n, "_h8) >= 0.95"),
         text("With 4 or 8 heads the layer solves the ", n, " task (", fixed(many, 3), " held-out)."),
         text("Neither 4 nor 8 heads solve the ", n, " task in this run (best ", fixed(many, 3), ")."),
         n == "pair" ? Expect::every_run : Expect::full_run});
  claim({"one_head_falls_short_" + n, text("test_acc_", n, "_h1 <= max(test_acc_", n, "_h4, test_acc_", n, "_h8) - 0.2"),
         text("One head falls short (", fixed(one, 3), "): it fetched ", fetched_by_one, " of the ", tokens,
              " the answer needs; one weighted mean of the values, $a\\,v(x_{i-o_1}) + b\\,v(x_{i-o_2})$, loses which "
              "token was where."),
         text("Here one head did as well as several (", fixed(one, 3), "): with unequal weights a single weighted mean can "
              "keep two tokens apart, and on some seeds the layer finds such weights."),
         n == "pair" ? Expect::either_way : Expect::every_run});
  return runs;
}

void accuracy_figure(const std::vector<Trained>& two, const std::vector<Trained>& three, const Task& a, const Task& b) {
  std::vector<std::string> categories;
  std::vector<double> acc_two, acc_three;
  for (std::size_t i = 0; i < kHeads.size(); ++i) {
    categories.push_back(counted(kHeads[i], "head"));
    acc_two.push_back(two[i].accuracy), acc_three.push_back(three[i].accuracy);
  }
  plots::Figure bars(1600, 950);
  bars.title("Held-out accuracy by head count (one layer, d_model = 64, one budget)");
  bar_panel(bars.panel(0).ylabel("test accuracy"), categories, {{a.name, acc_two}, {b.name, acc_three}}, 2, 1.15);
  save_figure(bars, "accuracy_by_heads", "Held-out test accuracy by head count on the two tasks, the same model and "
                                         "budget for every head count");
  plots::LineOptions lo;
  lo.markers = true;
  lo.ymin = 0.0, lo.ymax = 1.05;
  plots::Figure fig(2000, 1500, 2, 1);
  fig.title("Validation accuracy after every epoch");
  for (int p = 0; p < 2; ++p) {
    std::vector<plots::Series> series;
    for (const Trained& r : p == 0 ? two : three) {
      std::vector<double> steps;
      for (std::size_t e = 1; e <= r.history.validation_of("accuracy").size(); ++e) steps.push_back(double(e * r.history.steps_per_epoch));
      series.push_back(curve(counted(r.heads, "head"), steps, r.history.validation_of("accuracy")));
    }
    plots::line_plot(fig.panel(p).title(text("Task \"", p == 0 ? a.name : b.name, "\"")).xlabel("training step")
                         .ylabel("accuracy"), series, lo);
  }
  save_figure(fig, "validation_by_heads", "Validation accuracy after every epoch for 1, 2, 4 and 8 heads, on the pair "
                                          "task (top) and the triple task (bottom)");
}

// ---------------------------------------------------------------------------------------------
// 4. What each head learned.

// The mean weight each head puts at every offset i - j, -(L-1) .. L-1, over the test sequences.
xt::xarray<double> offset_profile(nn::EncoderModel<float>& model, const Task& task, std::size_t layer = 0) {
  NoGrad no_grad;
  model.eval();
  model.forward(task.test.slice(0, 256).inputs);
  const Array<float>& w = model.attention_weights()[layer].value();
  const std::size_t heads = w.shape()[1];
  xt::xarray<double> profile = xt::zeros<double>({heads, 2 * kLength - 1});
  for (long o = -long(kLength) + 1; o < long(kLength); ++o) {
    const std::vector<double> mass = offset_mass(w, o);
    for (std::size_t h = 0; h < heads; ++h) profile(h, std::size_t(o + long(kLength) - 1)) = mass[h];
  }
  return profile;
}

std::vector<std::string> offset_labels() {
  std::vector<std::string> out;
  for (long o = -long(kLength) + 1; o < long(kLength); ++o) out.push_back(o % 3 == 0 ? std::to_string(o) : "");
  return out;
}

// The offset where row h of a profile peaks, and the weight there.
std::pair<long, double> peak(const xt::xarray<double>& profile, std::size_t h) {
  const xt::xarray<double> r = xt::view(profile, h);
  const std::size_t at = std::size_t(std::max_element(r.begin(), r.end()) - r.begin());
  return {long(at) - long(kLength) + 1, r(at)};
}

double at_offset(const xt::xarray<double>& profile, std::size_t h, std::size_t offset) {
  return profile(h, offset + kLength - 1);
}

void what_each_head_learned(std::vector<Trained>& runs, const Task& task) {
  std::vector<std::string> offsets;
  for (std::size_t o : task.offsets) offsets.push_back(std::to_string(o));
  say("The 4-head model on task \"", task.name, "\", on one held-out sequence: every head's weights, rows are queries "
      "(positions i), columns are keys (positions j). The task reads the tokens ", listing(offsets), " places to the "
      "left of each query: a head that fetches one of them draws a line parallel to the diagonal, that many columns "
      "to its left.");
  Trained& four = runs[2];
  {
    NoGrad no_grad;
    four.model->forward(task.test.slice(0, 1).inputs);
  }
  const xt::xarray<double> heads = xt::view(xt::cast<double>(four.model->attention_weights()[0].value()), 0);
  const std::vector<std::string> positions = number_labels(kLength, 1);
  save_figure(head_grid(heads, positions, positions, text("The four heads on a held-out sequence (task \"", task.name, "\")"), 2,
                        1800, 1700),
              "head_grid", "Attention weights of each head of the 4-head model: rows are queries, columns keys, one color scale");
  say("A picture of one sequence is an anecdote; the mean weight each head puts at each offset i - j over 256 held-out "
      "sequences is a measurement. For the 1-, 4- and 8-head models:");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> coverage, row_labels;
  std::vector<xt::xarray<double>> profiles;
  for (int k = 0; k < 3; ++k) {
    Trained& r = runs[k == 0 ? 0 : k + 1];
    profiles.push_back(offset_profile(*r.model, task));
    const xt::xarray<double>& profile = profiles.back();
    std::size_t covered = 0;
    for (std::size_t off : task.offsets) {
      bool found = false;
      for (std::size_t h = 0; h < r.heads; ++h) found = found || at_offset(profile, h, off) > 0.5;
      covered += found;
    }
    coverage.push_back(text(covered, " of the ", task.offsets.size(), " offsets with ", counted(r.heads, "head")));
    metric(text("offsets_covered_", task.name, "_h", r.heads), double(covered));
    for (std::size_t h = 0; h < r.heads; ++h) {
      const auto [offset, weight] = peak(profile, h);
      rows.push_back(row(r.heads, h + 1, offset, fixed(weight, 3)));
      row_labels.push_back(text(counted(r.heads, "head"), ": head ", h + 1));
      metric(text("offset_mass_h", r.heads, "_head", h + 1), weight);
    }
  }
  const xt::xarray<double> all = xt::concatenate(xt::xtuple(profiles[0], profiles[1], profiles[2]), 0);
  plots::Figure fig(2400, 1300);
  fig.title("Where each head looks: mean attention weight by offset i - j (keys to the left have i - j > 0)");
  plots::HeatmapOptions o = attention_style(offset_labels(), row_labels);
  o.colorbar = true;
  o.colorbar_label = "mean attention weight";
  o.square_cells = false;
  plots::heatmap(fig.panel(0).xlabel("offset i - j").ylabel("model and head"), all, o);
  save_figure(fig, "offset_profiles", "Each head's mean weight at every offset over held-out sequences, for the 1-, 4- "
                                      "and 8-head models: a bright cell at offset o means the head fetches the token o "
                                      "places to the left");
  const xt::xarray<double>& single = profiles[0];
  table({"model heads", "head", "offset it looks at most", "mean weight there"}, rows);
  std::vector<std::string> single_weights;
  for (std::size_t off : task.offsets) single_weights.push_back(text(fixed(at_offset(single, 0, off), 2), " at offset ", off));
  say("Counting the task's offsets that some head gives more than half of its weight to: ", listing(coverage), ".");
  const std::string n = task.name;
  const std::size_t offsets_n = task.offsets.size();
  claim({"heads_specialize", text("offsets_covered_", n, "_h4 == ", offsets_n),
         text("In the 4-head model each of the ", offsets_n, " offsets has a head that gives it more than half of its "
              "weight: each bright cell is one head fetching one token; with more heads than tokens (8), several heads "
              "share an offset."),
         text("In this run the 4-head model's heads do not each sit on one offset (", coverage[1], "): they reach the "
              "tokens through blends of several offsets."),
         Expect::full_run});
  double single_max = 0;
  for (std::size_t off : task.offsets) single_max = std::max(single_max, at_offset(single, 0, off));
  metric(text("single_head_max_offset_weight_", n), single_max);
  claim({"single_head_spreads", text("single_head_max_offset_weight_", n, " < 0.5"),
         text("The single head spreads its weight over the offsets (", listing(single_weights), "): one mean cannot be at ",
              offsets_n, " places at once."),
         text("The single head puts most of its weight on one offset (", listing(single_weights), ") and guesses the rest."),
         Expect::either_way});
}

// ---------------------------------------------------------------------------------------------
// 5. What each head is worth: ablation and pruning.

using Gates = std::vector<std::vector<float>>;  // per layer, per head: 1 on, 0 off

IndexArray predict_with(nn::EncoderModel<float>& model, const data::Tagged& set, const Gates& gates) {
  for (std::size_t l = 0; l < gates.size(); ++l) {
    Array<float> g = xt::zeros<float>({gates[l].size()});
    std::copy(gates[l].begin(), gates[l].end(), g.begin());
    model.encoder.layer(l).self_attn.set_head_gate(Tensor<float>(g));
  }
  const IndexArray p = predict(model, set);
  for (std::size_t l = 0; l < gates.size(); ++l) model.encoder.layer(l).self_attn.set_head_gate(Tensor<float>());
  return p;
}

double accuracy_with(nn::EncoderModel<float>& model, const data::Tagged& set, const Gates& gates) {
  return score_tags(predict_with(model, set, gates), set.targets, kNoTag).token;
}

struct Worth {
  xt::xarray<double> importance;     // (layers, heads): validation accuracy lost with that head off
  std::vector<std::vector<double>> digits;  // per head (layer-major): validation digit accuracy with it off
  std::vector<double> pruned;        // test accuracy with k = 0, 1, ... of the least important heads off
};

Worth measure_worth(Trained& t, const Task& task) {
  const Gates all_on(t.layers, std::vector<float>(t.heads, 1.0f));
  const double base = accuracy_with(*t.model, task.validation, all_on);
  Worth w{xt::zeros<double>({t.layers, t.heads}), {}, {}};
  std::vector<std::pair<double, std::pair<std::size_t, std::size_t>>> order;
  for (std::size_t l = 0; l < t.layers; ++l)
    for (std::size_t h = 0; h < t.heads; ++h) {
      Gates g = all_on;
      g[l][h] = 0.0f;
      const IndexArray p = predict_with(*t.model, task.validation, g);
      w.importance(l, h) = base - score_tags(p, task.validation.targets, kNoTag).token;
      w.digits.push_back(digit_accuracy(p, task.validation.targets, task));
      order.push_back({w.importance(l, h), {l, h}});
    }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Gates g = all_on;
  w.pruned.push_back(accuracy_with(*t.model, task.test, g));
  for (std::size_t k = 0; k + 1 < order.size(); ++k) {
    g[order[k].second.first][order[k].second.second] = 0.0f;
    w.pruned.push_back(accuracy_with(*t.model, task.test, g));
  }
  return w;
}

void what_each_head_is_worth(Trained& eight, const Task& task) {
  say("Each head's output is multiplied by a gate before W_o mixes the heads (MultiHeadAttention::set_head_gate, "
      "gradient-checked like every module): 1 leaves the head on, 0 switches it off. The importance of a head is the "
      "validation accuracy lost when it alone is off. Then we prune: switch off the least important head, then the "
      "next, and measure the test accuracy with the heads that are left. First the one-layer 8-head model of task \"",
      task.name, "\"; then a two-layer model with 4 heads per layer, trained on the same task with the same budget, to "
      "see whether the layers divide the work.");
  Trained deep = train(task, 4, 2, 12);
  say("The two-layer model reaches ", fixed(deep.accuracy, 3), " held-out accuracy.");
  metric("test_acc_triple_two_layers_h4", deep.accuracy);
  const Worth one = measure_worth(eight, task), two = measure_worth(deep, task);
  const xt::xarray<double> eight_profile = offset_profile(*eight.model, task);
  std::vector<std::vector<std::string>> rows;
  for (std::size_t h = 0; h < 8; ++h) {
    rows.push_back(row(h + 1, peak(eight_profile, h).first, fixed(one.importance(0, h), 3)));
    metric(text("importance_h", h + 1), one.importance(0, h));
  }
  table({"head (1 layer x 8)", "offset it looks at most", "accuracy lost with it off"}, rows);
  plots::Figure fig(2400, 900, 1, 2);
  fig.title("Head importance: validation accuracy lost when one head is switched off");
  for (int p = 0; p < 2; ++p) {
    const Worth& w = p == 0 ? one : two;
    plots::HeatmapOptions o;
    o.cmap = plots::Colormap::reds();
    o.vmin = 0.0, o.vmax = 1.0;
    o.annotate = true;
    o.colorbar = false;
    o.x_labels = numbered("head ", w.importance.shape()[1], 1);
    o.y_labels = numbered("layer ", w.importance.shape()[0], 1);
    plots::heatmap(fig.panel(p).title(p == 0 ? "1 layer, 8 heads" : "2 layers, 4 heads each"), w.importance, o);
  }
  fig.shared_colorbar({plots::Colormap::reds(), 0.0, 1.0, "accuracy lost"});
  save_figure(fig, "head_importance", "The accuracy each head is worth, measured by switching it off alone");
  std::vector<double> kept_one, kept_two;
  for (std::size_t k = 0; k < one.pruned.size(); ++k) kept_one.push_back(double(8 - k));
  LineFigureOptions style{"Pruning heads, least important first", "heads left", "held-out accuracy", false, false, true, 0.0, 1.05};
  save_figure(line_figure({curve("1 layer x 8 heads", kept_one, one.pruned), curve("2 layers x 4 heads", kept_one, two.pruned)}, style),
              "pruning", "Test accuracy as heads are switched off in order of least importance (measured on validation data)");
  for (std::size_t k = 0; k < one.pruned.size(); ++k) metric(text("pruned_acc_keep", 8 - k), one.pruned[k]);
  std::size_t needed = 8;
  while (needed > 1 && one.pruned[8 - (needed - 1)] >= one.pruned[0] - 0.01) --needed;
  say("In the one-layer model ", needed, " of the 8 heads carry the task: pruned to its ", needed, " most important heads "
      "it keeps ", fixed(one.pruned[8 - needed], 3), " held-out accuracy (", fixed(one.pruned[0], 3), " with all 8); with "
      "one more off it falls to ", fixed(one.pruned[std::min<std::size_t>(9 - needed, 7)], 3), ".");
  metric("heads_needed_one_layer", double(needed));
  const double most = xt::amax(one.importance)();
  std::size_t idle = 0;
  for (double v : one.importance) idle += v < 0.01;
  metric("max_single_head_importance", most);
  metric("idle_heads_one_layer", double(idle));
  claim({"heads_unequal", "idle_heads_one_layer >= 1 and max_single_head_importance >= 0.2",
         text("Trained heads are unequal: ", idle, " of the 8 can be switched off alone at no cost (less than 0.01), while "
              "the most important one alone costs ", fixed(most, 3), "."),
         text("Every head costs something when switched off alone; the most important one costs ", fixed(most, 3), "."),
         Expect::either_way});
  say("For each head of the two-layer model: the offset it looks at most, and what is left of each digit of the "
      "triple when that head alone is switched off (validation data):");
  const xt::xarray<double> profiles[2] = {offset_profile(*deep.model, task, 0), offset_profile(*deep.model, task, 1)};
  std::vector<std::vector<std::string>> layer_rows;
  std::vector<std::string> header = {"layer", "head", "offset it looks at most", "mean weight there", "accuracy lost"};
  for (std::size_t o : task.offsets) header.push_back(text("x[i-", o, "] right, head off"));
  std::vector<std::string> findings;
  std::vector<std::size_t> unread(task.offsets);  // task offsets that no head of either layer peaks at
  for (std::size_t l = 0; l < 2; ++l)
    for (std::size_t h = 0; h < 4; ++h) {
      const auto [offset, weight] = peak(profiles[l], h);
      unread.erase(std::remove(unread.begin(), unread.end(), std::size_t(std::max(offset, 0L))), unread.end());
      metric(text("importance_l", l + 1, "_h", h + 1), two.importance(l, h));
      const std::vector<double>& digits = two.digits[l * 4 + h];
      std::vector<std::string> cells = row(l + 1, h + 1, offset, fixed(weight, 3), fixed(two.importance(l, h), 3));
      std::vector<std::string> lost;
      for (std::size_t r = 0; r < digits.size(); ++r) {
        cells.push_back(fixed(digits[r], 3));
        if (digits[r] < 0.5) lost.push_back(text("x[i-", task.offsets[r], "]"));
      }
      layer_rows.push_back(cells);
      if (!lost.empty())
        findings.push_back(text("layer ", l + 1, " head ", h + 1, " (offset ", offset, ") takes ", listing(lost), " with it"));
    }
  table(header, layer_rows);
  say(findings.empty() ? std::string("No single head of the two-layer model is indispensable on its own.")
                       : text("Switched off alone, ", listing(findings), "."));
  // A token no head looks at, read all the same: find the first-layer head whose ablation loses it
  // and a second-layer head whose offset completes the distance.
  for (std::size_t o : unread) {
    const std::size_t r = std::size_t(std::find(task.offsets.begin(), task.offsets.end(), o) - task.offsets.begin());
    for (std::size_t h1 = 0; h1 < 4; ++h1) {
      const long o1 = peak(profiles[0], h1).first;
      if (two.digits[h1][r] >= 0.5 || o1 <= 0 || o1 >= long(o)) continue;
      for (std::size_t h2 = 0; h2 < 4; ++h2)
        if (peak(profiles[1], h2).first == long(o) - o1) {
          bool others_intact = true;
          for (std::size_t k = 0; k < task.offsets.size(); ++k) others_intact = others_intact && (k == r || two.digits[h1][k] >= 0.9);
          say("No head of the two-layer model looks mostly at offset ", o, ", yet the model reads x[i-", o, "]: in two "
              "hops. Layer 1 head ", h1 + 1, " looks ", o1, " places back and copies that token into each position; "
              "layer 2 head ", h2 + 1, " looks ", long(o) - o1, " places back and finds it there: ", o1, " + ",
              long(o) - o1, " = ", o, ". Switching off the first hop loses x[i-", o, "] (", fixed(two.digits[h1][r], 3),
              " right with it off)", others_intact ? " and nothing else" : "", ": the two layers compose.");
          metric(text("two_hop_offset_", o), 1.0);
          h1 = 4;
          break;
        }
    }
  }
}

// ---------------------------------------------------------------------------------------------
// 6. What it costs.

void what_it_costs(const Task& task) {
  std::vector<std::unique_ptr<nn::EncoderModel<float>>> models;
  std::vector<std::unique_ptr<nn::Adam<float>>> opts;
  const data::Tagged batch = task.train.rows(data::first_rows(64));
  CrossEntropyOptions ce;
  ce.ignore_index = kNoTag;
  std::vector<std::function<void()>> work;
  for (std::size_t h : kHeads) {
    models.push_back(make_model(task, h, 1));
    opts.push_back(std::make_unique<nn::Adam<float>>(models.back()->parameters(), 1e-3));
    nn::EncoderModel<float>& m = *models.back();
    nn::Adam<float>& opt = *opts.back();
    work.push_back([&] {
      opt.zero_grad();
      cross_entropy(m.forward(batch.inputs), batch.targets, ce).backward();
      opt.step();
    });
  }
  const int rounds = full_or_quick(60, 10);
  const std::vector<Timing> t = interleaved_medians(work, rounds);
  std::vector<std::vector<std::string>> rows;
  std::vector<double> wall, cpu;
  for (std::size_t i = 0; i < kHeads.size(); ++i) {
    rows.push_back(row(kHeads[i], kModel / kHeads[i], fixed(t[i].cpu_ms, 2), fixed(t[i].wall_ms, 2)));
    wall.push_back(t[i].wall_ms), cpu.push_back(t[i].cpu_ms);
    timing(text("step_ms_h", kHeads[i]), t[i].wall_ms);
    timing(text("step_cpu_ms_h", kHeads[i]), t[i].cpu_ms);
  }
  say("One training step (forward, backward, Adam) of the one-layer model on a batch of 64 sequences, the four head "
      "counts timed in turn over ", rounds, " rounds, medians:");
  table({"heads", "d_k", "CPU ms per step", "wall ms per step"}, rows);
  say("The parameters and the multiply-adds are the same for every h (section 1), so the differences are the cost of "
      "doing the same arithmetic in more, thinner pieces: h x B score matrices of ", kLength, " x ", kLength,
      " instead of B, each a small matrix product of inner size $d_k = 64/h$, and $h$ softmaxes per query.");
  const double extra = t.back().cpu_ms / t.front().cpu_ms - 1.0;
  claim({"more_heads_cost_time", "extra_cpu_share_h8 > 0",
         text("Going from 1 to 8 heads costs ", percent(extra, 0), " more CPU time per step here; the projections and the "
              "feed-forward layer, which do not depend on $h$, take the rest of the step."),
         text("Here 8 heads took no more CPU time per step than 1 (", percent(extra, 0), "): the thinner pieces cost "
              "less than the timing's noise on this machine."),
         Expect::either_way, {{"extra_cpu_share_h8", extra}}});
  plots::Figure fig(1600, 1000);
  fig.title("Training step time by head count (d_model = 64, one layer, batch 64)");
  std::vector<std::string> names;
  for (std::size_t h : kHeads) names.push_back(counted(h, "head"));
  bar_panel(fig.panel(0).ylabel("milliseconds per step (median)"), names, {{"CPU time", cpu}, {"wall time", wall}}, 2);
  save_figure(fig, "step_time", "Median time of one training step for 1, 2, 4 and 8 heads at the same d_model, timed in turn");
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"07_multi_head", "Multi-head attention: trained, and taken apart head by head",
                     "Why several heads beat one, what each head learns, what each is worth, and what heads cost",
                     "test_acc_triple_h4", "accuracy_by_heads"},
                    argc, argv, [] {
                      section("1. Splitting d_model into heads");
                      splitting_into_heads();
                      Generator gen(seed());
                      const std::size_t n_train = full_or_quick<std::size_t>(8000, 2000), n_held_out = 1000;
                      const Task pair = make_task("pair", "(x[i-2], x[i-5])", {2, 5}, n_train, n_held_out, gen);
                      const Task triple = make_task("triple", "(x[i-1], x[i-3], x[i-6])", {1, 3, 6}, n_train, n_held_out, gen);
                      config({{"vocabulary", kVocab}, {"length", kLength}, {"d_model", kModel},
                              {"train_sequences", n_train}, {"held_out_sequences", n_held_out}});
                      section("2. Two tokens, in order");
                      say("Each output needs two earlier tokens, and which is which matters: the pair (3, 5) is another "
                          "class than (5, 3). One head returns one weighted mean of the value vectors; a mean of two "
                          "positions adds their values, $a\\,v(x_{i-2}) + b\\,v(x_{i-5})$, and with $a = b$ the order is "
                          "gone. Two heads can each fetch one token and hand both to the feed-forward layer side by side.");
                      std::vector<Trained> pair_runs = train_head_counts(pair, 20);
                      section("3. Three tokens, in order");
                      say("Three tokens, each in its own place in the answer. If a head fetches one token, two heads "
                          "cannot be enough; if a head can carry two, they might be.");
                      std::vector<Trained> triple_runs = train_head_counts(triple, 30);
                      accuracy_figure(pair_runs, triple_runs, pair, triple);
                      section("4. What each head learned");
                      what_each_head_learned(triple_runs, triple);
                      section("5. What each head is worth: ablation and pruning");
                      what_each_head_is_worth(triple_runs[3], triple);
                      section("6. What it costs");
                      what_it_costs(pair);
                    });
}
