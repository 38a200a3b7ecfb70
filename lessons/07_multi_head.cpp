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

#include <xtensor/xview.hpp>

#include "lessons/kit/explorer.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/encoder_tagger.hpp"
#include "nn/attention/multi_head.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/offset_tuples.hpp"
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
  say("Multi-head attention projects the input three times, $Q = xW_Q$, $K = xW_K$, $V = xW_V$, each $(B, L, d)$, "
      "then reads the last axis as $h$ heads of $d_k = d/h$ columns: head $i$ uses columns $i\\,d_k$ to "
      "$(i+1)\\,d_k - 1$ of $Q$, $K$ and $V$. Each head runs scaled dot-product attention on its own slice; the $h$ "
      "outputs are put side by side again and mixed by $W_O$:");
  say("$$\\mathrm{head}_i = \\mathrm{softmax}\\!\\left(\\frac{Q_i K_i^\\top}{\\sqrt{d_k}}\\right) V_i,\\qquad "
      "\\mathrm{MHA}(x) = [\\mathrm{head}_1, \\dots, \\mathrm{head}_h]\\, W_O.$$");
  say("Here is every tensor for a batch of $B = ", B, "$ sequences of $L = ", L, "$ tokens, $d = ", d, "$, $h = ", h,
      "$, computed step by step with the engine's ops (the module keeps $W_Q$, $W_K$ and $W_V$ stacked as one "
      "$3d \\times d$ matrix, in_proj_weight, and $W_O$ as out_proj, PyTorch's layout and names):");
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
        {row("input", "$x$", sh(x)), row("project", "$Q = xW_Q$ (and $K$, $V$)", sh(q)),
         row("split", "$Q$ viewed as $(B, L, h, d_k)$, heads to the front", sh(qh)),
         row("score, per head", "$S_i = Q_i K_i^\\top / \\sqrt{d_k}$", sh(scores)),
         row("softmax, per head", "$A_i = \\mathrm{softmax}(S_i)$", sh(weights)),
         row("weigh the values, per head", "$A_i V_i$", sh(heads)), row("merge", "heads side by side", sh(merged)),
         row("mix", "merged $\\cdot\\, W_O$", sh(out))});
  const double diff = max_abs_diff(out.value(), mha.forward(x).output.value());
  metric("split_merge_vs_module_max_diff", diff);
  claim({"module_equals_steps", "split_merge_vs_module_max_diff <= 1e-12",
         text("The module does the same without the split and merge copies (its fused op reads head $i$ of $Q$, $K$ "
              "and $V$ in place and writes the merged output directly), and its output equals the step-by-step one to ",
              sci(diff, 1), "."),
         text("The module's fused op differs from the step-by-step computation by ", sci(diff, 1),
              ", more than double-precision rounding.")});
  save_diagram(multi_head_diagram(), "multi_head_flow", "The tensors of multi-head attention: one projection each for $Q$, $K$ and $V$, "
                                       "split by columns into $h$ heads of $d_k = d/h$, merged back and mixed by $W_O$");
  say("How the cost depends on $h$, at $d = ", kModel, "$ for one sequence of $L = ", kLength, "$ tokens: the four "
      "projections are $d \\times d$ whatever $h$ is, so the parameters ($4d^2 + 4d$ with biases) and the projections' "
      "multiply-adds stay the same. The scores cost $L^2 d_k$ per head, $L^2 d$ in all, also the same. What multiplies "
      "is the number of score matrices, $h$ of $L \\times L$: the memory the softmax weights take and the number of "
      "small matrix products.");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t heads_n : kHeads) {
    Generator g(1);
    const nn::MultiHeadAttention<float> m(kModel, heads_n, g);
    rows.push_back(row(heads_n, kModel / heads_n, m.parameter_count(), 4 * kLength * kModel * kModel,
                       2 * kLength * kLength * kModel, heads_n * kLength * kLength));
  }
  table({"heads $h$", "$d_k$", "parameters", "projection multiply-adds", "score + weighting multiply-adds",
         "attention weights stored"}, rows);
}

// ---------------------------------------------------------------------------------------------
// The tasks (nn/data/offset_tuples): at every position, the ordered tuple of the tokens a few fixed
// places to the left, y_i = (x[i - o_1], x[i - o_2], ...) as one class, a number in base 6.

struct Task {
  std::string name, formula;
  std::vector<std::size_t> offsets;  // the first is the most significant digit
  std::size_t classes() const { return data::offset_tuple_classes(kVocab, offsets.size()); }
  data::Tagged train, validation, test;
};

Task make_task(const std::string& name, const std::string& formula, std::vector<std::size_t> offsets, std::size_t n_train,
               std::size_t n_held_out, Generator& gen) {
  const data::Tagged all = data::offset_tuples(n_train + 2 * n_held_out, kLength, kVocab, offsets, kNoTag, gen);
  return {name, formula, std::move(offsets), all.slice(0, n_train), all.slice(n_train, n_train + n_held_out),
          all.slice(n_train + n_held_out, n_train + 2 * n_held_out)};
}

// ---------------------------------------------------------------------------------------------
// The model: embedding + sinusoidal positions, `layers` pre-norm blocks (attention + feed-forward),
// a final norm and a linear read-out per position.

std::unique_ptr<nn::EncoderModel<float>> make_model(const Task& task, std::size_t heads, std::size_t layers) {
  nn::EncoderModelConfig c;
  c.vocab = kVocab, c.num_classes = task.classes(), c.num_layers = layers;
  c.layer = nn::LayerConfig{kModel, heads, 2 * kModel, 0.0, /*norm_first=*/true, nn::Activation::ReLU, 1e-5};
  c.positional = nn::Positional::Sinusoidal, c.pooling = nn::Pooling::None;
  Generator gen(seed() + 100 * layers);
  return std::make_unique<nn::EncoderModel<float>>(c, gen);
}

// A model trained on a task: its held-out accuracy, per digit too, and its training in words.
struct Trained { std::size_t heads = 0, layers = 0; std::unique_ptr<nn::EncoderModel<float>> model; History history;
                 std::string recipe; double accuracy = 0; std::vector<double> digits; };

Trained train_heads(const Task& task, std::size_t heads, std::size_t layers, int epochs_quick) {
  Trained t;
  t.heads = heads, t.layers = layers, t.model = make_model(task, heads, layers);
  nn::EncoderModel<float>& m = *t.model;
  Recipe r;  // Adam, a warm-up over 1/20 of the steps, a cosine decay to 1/20 of the peak, clipping at 1
  r.label = text(task.name, ", ", counted(long(layers), "layer"), ", ", counted(long(heads), "head"));
  r.epochs = epochs(16, epochs_quick), r.batch = 64, r.lr = 2e-3, r.warmup = 0.05, r.floor = 0.05, r.clip = 1.0;
  r.seed = seed() + 17;
  r.validate = [&] { return Scores{{"accuracy", tag_accuracy(m, task.validation, kNoTag)}}; };
  t.history = train_tagger(m, task.train, r);  // kNoTag is cross_entropy's ignore_index: untagged positions score nothing
  t.recipe = describe(r, fit_steps(task.train.size(), r));
  const IndexArray p = encoder_tags(m, task.test.inputs);
  t.accuracy = score_tags(p, task.test.targets, kNoTag).token;
  t.digits = data::tuple_digit_accuracy(p, task.test.targets, kVocab, task.offsets.size(), kNoTag);  // which tokens it fetched
  return t;
}

std::vector<Trained> train_head_counts(const Task& task, int epochs_quick) {
  std::vector<Trained> runs;
  for (std::size_t h : kHeads) runs.push_back(train_heads(task, h, 1, epochs_quick));
  say("Task \"", task.name, "\": at every position $i \\ge ", *std::max_element(task.offsets.begin(), task.offsets.end()),
      "$, output the ", task.name, " $", task.formula, "$, one of ", task.classes(), " classes (positions before that "
      "have no tag and are not scored). ", task.train.size(), " training, ", task.validation.size(), " validation and ",
      task.test.size(), " test sequences of ", kLength, " random digits 0-5, all distinct. The same model ($d = ", kModel,
      "$, one layer, feed-forward ", 2 * kModel, ", sinusoidal positions) and the same training for every head count: ",
      runs[0].recipe, ".");
  std::vector<std::vector<std::string>> rows;
  for (const Trained& r : runs) {
    std::vector<std::string> cells = row(r.heads, kModel / r.heads, fixed(r.accuracy, 3));
    for (double d : r.digits) cells.push_back(fixed(d, 3));
    const std::size_t at = r.history.steps_to_reach("accuracy", 0.99);
    cells.push_back(at ? text(at) : "never");
    rows.push_back(cells);
    metric(text("test_acc_", task.name, "_h", r.heads), r.accuracy);
  }
  std::vector<std::string> header = {"heads", "$d_k$", "held-out accuracy"};
  for (std::size_t o : task.offsets) header.push_back(text("digit $x_{i-", o, "}$ right"));
  header.push_back("steps to 0.99 (validation)");
  table(header, rows);
  // Read the digits: a token is fetched when its digit is right at least 90 % of the time; the
  // others sit near chance, 1/6.
  std::vector<std::string> reading;
  for (const Trained& r : runs) {
    std::vector<std::string> got;
    for (std::size_t k = 0; k < task.offsets.size(); ++k)
      if (r.digits[k] >= 0.9) got.push_back(text("$x_{i-", task.offsets[k], "}$"));
    reading.push_back(text(r.heads, r.heads > 1 ? " heads fetch " : " head fetches ", got.size(), " of the ",
                           task.offsets.size(), got.empty() ? "" : text(" (", listing(got), ")")));
    metric(text("tokens_fetched_", task.name, "_h", r.heads), double(got.size()));
  }
  say("The digit columns say which tokens each model found: a digit right at least 90 % of the time is a token the "
      "attention fetched; one near $1/6 = 0.167$ is a guess. ", listing(reading), ".");
  std::size_t fewest = 0;  // the fewest heads that solve the task
  for (const Trained& r : runs)
    if (!fewest && r.accuracy >= 0.99) fewest = r.heads;
  metric("fewest_heads_" + task.name, double(fewest));
  say(fewest ? text("The fewest heads that solve this task (held-out accuracy at least 0.99): ", fewest, ".")
             : std::string("No head count solves this task (held-out accuracy at least 0.99) in this run."));
  return runs;
}

void pair_claims(const std::vector<Trained>& runs) {
  const double one = runs[0].accuracy, four = runs[2].accuracy, eight = runs[3].accuracy;
  claim({"pair_several_heads", "test_acc_pair_h4 >= 0.6 and test_acc_pair_h8 >= 0.8",
         text("Several heads fetch both tokens: 4 heads reach ", fixed(four, 3), " held-out accuracy and 8 heads ",
              fixed(eight, 3), "."),
         text("Here several heads did not fetch both tokens: 4 heads reach ", fixed(four, 3), " and 8 heads ",
              fixed(eight, 3), ".")});
  claim({"pair_one_head_fails", "test_acc_pair_h1 < 0.5",
         text("One head does not solve it: ", fixed(one, 3), ", ", runs[0].digits[0] >= 0.9 || runs[0].digits[1] >= 0.9
              ? "one of the two tokens and a guess at the other." : "a guess at both tokens."),
         text("One head solves it all the same (", fixed(one, 3), "): with unequal weights $a \\ne b$, one mean "
              "$a\\,v(x_{i-2}) + b\\,v(x_{i-5})$ can still keep two tokens apart. How often one head finds such "
              "weights depends on the seed (one of the three reference seeds of the full run)."),
         Expect::either_way});
}

void triple_claims(const std::vector<Trained>& triple, const std::vector<Trained>& pair) {
  const double one = triple[0].accuracy, four = triple[2].accuracy, eight = triple[3].accuracy;
  claim({"triple_one_head_fails", "test_acc_triple_h1 < 0.9",
         text("One head does not solve it: ", fixed(one, 3), " held-out accuracy."),
         text("One head solves even this task: ", fixed(one, 3), " held-out accuracy.")});
  claim({"triple_four_heads_solve", "test_acc_triple_h4 >= 0.99 and test_acc_triple_h8 >= 0.99",
         text("Four and eight heads solve it: ", fixed(four, 3), " and ", fixed(eight, 3), " held-out accuracy."),
         text("Four and eight heads reach ", fixed(four, 3), " and ", fixed(eight, 3), " held-out accuracy, not both "
              "0.99: the full run (more data, more epochs) solves the task with both on every seed; this run was too "
              "small."),
         Expect::full_run});
  // The lesson's point, on whichever task this run shows it: one head failing where eight succeed.
  const bool on_pair = pair[0].accuracy < 0.5 && pair[3].accuracy >= 0.8;
  claim({"eight_heads_beat_one",
         "(test_acc_pair_h1 < 0.5 and test_acc_pair_h8 >= 0.8) or (test_acc_triple_h1 < 0.9 and test_acc_triple_h8 >= 0.9)",
         text("Eight heads succeed where one head fails, on ", on_pair ? "the pair task (" : "the triple task (",
              fixed(on_pair ? pair[3].accuracy : eight, 3), " against ", fixed(on_pair ? pair[0].accuracy : one, 3), ")",
              on_pair && eight >= 0.9 && one < 0.9 ? text(" and on the triple task (", fixed(eight, 3), " against ",
                                                          fixed(one, 3), ")") : std::string(), "."),
         text("On neither task did eight heads succeed where one failed: pair ", fixed(pair[3].accuracy, 3), " against ",
              fixed(pair[0].accuracy, 3), ", triple ", fixed(eight, 3), " against ", fixed(one, 3), ".")});
}

void accuracy_figures(const std::vector<Trained>& two, const std::vector<Trained>& three, const Task& a, const Task& b) {
  std::vector<std::string> categories;
  std::vector<double> acc_two, acc_three;
  for (std::size_t i = 0; i < kHeads.size(); ++i) {
    categories.push_back(counted(long(kHeads[i]), "head"));
    acc_two.push_back(two[i].accuracy), acc_three.push_back(three[i].accuracy);
  }
  save_figure(bar_figure({{"", "held-out accuracy", categories, {{a.name, acc_two}, {b.name, acc_three}}}},
                         {"One attention layer, d_model = 64, the same training for every head count", 2, 1.15}),
              "accuracy_by_heads", "Held-out test accuracy by head count on the two tasks");
  std::vector<std::pair<std::string, std::vector<Run>>> panels;
  for (const auto* runs : {&two, &three}) {
    panels.push_back({text("task \"", runs == &two ? a.name : b.name, "\""), {}});
    for (const Trained& r : *runs) panels.back().second.push_back({counted(long(r.heads), "head"), &r.history});
  }
  ScoreFigureOptions style{"Validation accuracy after every epoch", "accuracy", "accuracy", std::nullopt, 0.0, 1.05, 1600, 1800};
  const plots::Figure fig = score_panels(panels, style);
  save_figure(fig, "validation_by_heads", "Validation accuracy after every epoch, by head count, on the two tasks");
}

// ---------------------------------------------------------------------------------------------
// 4. What each head learned.

// Where each head of one layer looks (lessons/kit/encoder_tagger), over 256 held-out sequences.
OffsetProfile offset_profile_of(nn::EncoderModel<float>& model, const Task& task, std::size_t layer = 0) {
  return lessons::offset_profile_of(model, task.test.slice(0, 256).inputs, layer);
}

void what_each_head_learned(std::vector<Trained>& runs, const Task& task) {
  std::vector<std::string> offsets;
  for (std::size_t o : task.offsets) offsets.push_back(std::to_string(o));
  say("The 4-head model on task \"", task.name, "\", on one held-out sequence: every head's weights, rows are queries "
      "(positions $i$), columns are keys (positions $j$). The task reads the tokens ", listing(offsets), " places to "
      "the left of each query: a head that fetches one of them draws a line parallel to the diagonal, that many "
      "columns to its left.");
  nn::EncoderModel<float>& four = *runs[2].model;
  const IndexArray one = task.test.slice(0, 1).inputs;
  const xt::xarray<double> heads = xt::view(xt::cast<double>(attention_on(four, one)[0].value()), 0);
  const std::vector<std::string> positions = number_labels(kLength, 3);
  save_figure(head_grid(heads, positions, positions, text("The four heads on a held-out sequence (task \"", task.name,
                                                          "\")"), 2, 1600, 1600),
              "head_grid", "Attention weights of each head of the 4-head model: rows are queries, columns keys, one color scale");
  ExplorerPage page{text("Lesson 07: the 4-head model on task \"", task.name, "\""), "positions (queries)",
                    "positions (keys)",
                    text("One held-out sequence (each token its digit @ its position). The task needs the tokens ",
                         listing(offsets), " places to the left of each position: choose a head and hover a position "
                         "to see which it fetches; click it for the neuron view, its scores split into query-key "
                         "products."),
                    {explorer_input(four, "held-out sequence 1", at_positions(one), one)}};
  show_explorer(page, "explorer", "The attention explorer: the four heads of the trained 4-head model on a held-out "
                                  "sequence; click a position for its query-key products");
  say("A picture of one sequence is an anecdote; the mean weight each head puts at each offset $i - j$ over 256 "
      "held-out sequences is a measurement. For the 1-, 4- and 8-head models:");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> row_labels;
  std::vector<OffsetProfile> profiles;
  std::vector<std::size_t> peaked, over_half;  // per model, task offsets where some head looks most, or over half
  for (int k = 0; k < 3; ++k) {
    Trained& r = runs[k == 0 ? 0 : k + 1];
    profiles.push_back(offset_profile_of(*r.model, task));
    const OffsetProfile& profile = profiles.back();
    // Task offsets some head gives over half its weight; task offsets where some head looks most.
    const std::size_t covered = profile.offsets_above(task.offsets, 0.5), peaks = profile.offsets_peaked(task.offsets);
    peaked.push_back(peaks), over_half.push_back(covered);
    metric(text("offsets_over_half_h", r.heads), double(covered));
    metric(text("offsets_peaked_h", r.heads), double(peaks));
    for (std::size_t h = 0; h < r.heads; ++h) {
      const auto [offset, weight] = profile.peak(h);
      rows.push_back(row(r.heads, h + 1, offset, fixed(weight, 3)));
      row_labels.push_back(text(counted(long(r.heads), "head"), ": head ", h + 1));
      metric(text("offset_mass_h", r.heads, "_head", h + 1), weight);
    }
  }
  save_figure(offset_profiles_figure(profiles, row_labels, "Where each head looks: mean weight by offset i − j"),
              "offset_profiles", "Each head's mean weight at every offset over held-out sequences, for the 1-, 4- "
                                      "and 8-head models: a bright cell at offset $o$ means the head fetches the token "
                                      "$o$ places to the left");
  table({"model heads", "head", "offset it looks at most", "mean weight there"}, rows);
  const std::size_t n = task.offsets.size();
  std::vector<std::string> single;
  for (std::size_t off : task.offsets) single.push_back(text(fixed(profiles[0].at(0, long(off)), 2), " at offset ", off));
  claim({"four_heads_own_offsets", text("offsets_peaked_h4 == ", n, " and offsets_over_half_h1 == 0"),
         text("Heads specialize: each of the task's ", n, " offsets is where some head of the 4-head model looks most, "
              "a head for each token, while the single head spreads its weight (", listing(single), ")."),
         text(peaked[1], " of the task's ", n, " offsets are where some head of the 4-head model looks most, and the "
              "single head gives more than half its weight to ", over_half[0], " of them (", listing(single), "): the heads "
              "have not each settled on one token's offset."),
         Expect::full_run});
}

// ---------------------------------------------------------------------------------------------
// 5. What each head is worth: ablation and pruning.

// What each head is worth (lessons/kit/encoder_tagger), and per head (layer-major) the validation
// digit accuracy with it alone off: which tokens the model loses without it.
struct Worth : HeadWorth { std::vector<std::vector<double>> digits; };

Worth measure_worth(Trained& t, const Task& task) {
  Worth w{{head_worth(*t.model, task.validation, task.test, kNoTag)}, {}};
  for (const IndexArray& p : w.alone_off)
    w.digits.push_back(data::tuple_digit_accuracy(p, task.validation.targets, kVocab, task.offsets.size(), kNoTag));
  return w;
}

void importance_figures(const Worth& one, const Worth& two) {
  save_figure(head_importance_figure({{"1 layer, 8 heads", one.importance}, {"2 layers, 4 heads each", two.importance}},
                                     "Validation accuracy lost when one head is switched off"),
              "head_importance", "The accuracy each head is worth, measured by switching it off alone");
  std::vector<double> kept;
  for (std::size_t k = 0; k < one.pruned.size(); ++k) kept.push_back(double(8 - k));
  LineFigureOptions style{"Pruning heads, least important first", "heads left", "held-out accuracy", false, false, true, 0.0, 1.05};
  save_figure(line_figure({curve("1 layer x 8 heads", kept, one.pruned), curve("2 layers x 4 heads", kept, two.pruned)}, style),
              "pruning", "Test accuracy as heads are switched off in order of least importance (measured on validation data)");
}

void what_each_head_is_worth(Trained& eight, const Task& task) {
  say("Each head's output is multiplied by a gate before $W_O$ mixes the heads (MultiHeadAttention::set_head_gate, "
      "gradient-checked like every module): 1 leaves the head on, 0 switches it off. The importance of a head is the "
      "validation accuracy lost when it alone is off. Then we prune: switch off the least important head, then the "
      "next, and measure the test accuracy with the heads that are left. First the one-layer 8-head model of task \"",
      task.name, "\"; then a two-layer model with 4 heads per layer, trained on the same task the same way.");
  Trained deep = train_heads(task, 4, 2, 16);
  say("The two-layer model reaches ", fixed(deep.accuracy, 3), " held-out accuracy.");
  metric("test_acc_triple_two_layers_h4", deep.accuracy);
  const Worth one = measure_worth(eight, task), two = measure_worth(deep, task);
  const OffsetProfile eight_profile = offset_profile_of(*eight.model, task);
  std::vector<std::vector<std::string>> rows;
  double most = 0;  // the most any single head is worth
  for (std::size_t h = 0; h < 8; ++h) {
    rows.push_back(row(h + 1, eight_profile.peak(h).first, fixed(one.importance(0, h), 3)));
    metric(text("importance_h", h + 1), one.importance(0, h));
    most = std::max(most, one.importance(0, h));
  }
  table({"head (1 layer x 8)", "offset it looks at most", "accuracy lost with it off"}, rows);
  importance_figures(one, two);
  for (std::size_t k = 0; k < one.pruned.size(); ++k) metric(text("pruned_acc_keep", 8 - k), one.pruned[k]);
  std::size_t needed = 8;
  while (needed > 1 && one.pruned[8 - (needed - 1)] >= one.pruned[0] - 0.01) --needed;
  const double at_needed = one.pruned[8 - needed], below = one.pruned[std::min<std::size_t>(9 - needed, 7)];
  metric("heads_needed_one_layer", double(needed));
  metric("importance_max_one_layer", most);
  say("Pruned to its ", needed, " most important heads, the one-layer model keeps ", fixed(at_needed, 3), " held-out "
      "accuracy (", fixed(one.pruned[0], 3), " with all 8)", needed > 1 ? text("; with one more off it falls to ",
      fixed(below, 3)) : std::string(), ".");
  claim({"few_heads_carry", "heads_needed_one_layer <= 6",
         text("Trained heads are unequal: ", needed, " of the 8 carry the task and the other ", 8 - needed, " can be "
              "pruned; the most important head alone is worth ", fixed(most, 3), " of accuracy."),
         text("The task needs ", needed, " of the 8 heads: pruning any more than ", 8 - needed, " costs more than 0.01 "
              "of accuracy.")});
  say("For each head of the two-layer model: the offset it looks at most, and what is left of each digit of the "
      "triple when that head alone is switched off (validation data):");
  const OffsetProfile profiles[2] = {offset_profile_of(*deep.model, task, 0), offset_profile_of(*deep.model, task, 1)};
  std::vector<std::vector<std::string>> layer_rows;
  std::vector<std::string> header = {"layer", "head", "offset it looks at most", "mean weight there", "accuracy lost"};
  for (std::size_t o : task.offsets) header.push_back(text("$x_{i-", o, "}$ right, head off"));
  std::vector<std::size_t> unread(task.offsets);  // task offsets that no head of either layer peaks at
  for (std::size_t l = 0; l < 2; ++l)
    for (std::size_t h = 0; h < 4; ++h) {
      const auto [offset, weight] = profiles[l].peak(h);
      unread.erase(std::remove(unread.begin(), unread.end(), std::size_t(std::max(offset, 0L))), unread.end());
      metric(text("importance_l", l + 1, "_h", h + 1), two.importance(l, h));
      std::vector<std::string> cells = row(l + 1, h + 1, offset, fixed(weight, 3), fixed(two.importance(l, h), 3));
      for (double d : two.digits[l * 4 + h]) cells.push_back(fixed(d, 3));
      layer_rows.push_back(cells);
    }
  table(header, layer_rows);
  // A token no head looks at, read all the same: the first-layer head whose ablation loses it and
  // a second-layer head whose offset completes the distance.
  std::string hops;
  for (std::size_t o : unread) {
    const std::size_t r = std::size_t(std::find(task.offsets.begin(), task.offsets.end(), o) - task.offsets.begin());
    for (std::size_t h1 = 0; h1 < 4 && hops.empty(); ++h1) {
      const long o1 = profiles[0].peak(h1).first;
      if (two.digits[h1][r] >= 0.5 || o1 <= 0 || o1 >= long(o)) continue;
      for (std::size_t h2 = 0; h2 < 4 && hops.empty(); ++h2)
        if (profiles[1].peak(h2).first == long(o) - o1 && deep.digits[r] >= 0.9)
          hops = text("No head looks mostly at offset ", o, ", yet the model reads $x_{i-", o, "}$ (", fixed(deep.digits[r], 3),
                      " right): in two hops. Layer 1 head ", h1 + 1, " looks ", o1, " places back and copies that token "
                      "into each position; layer 2 head ", h2 + 1, " looks ", long(o) - o1, " places back and finds it "
                      "there: $", o1, " + ", long(o) - o1, " = ", o, "$. Switching off the first hop loses $x_{i-", o,
                      "}$ (", fixed(two.digits[h1][r], 3), " right with it off).");
    }
  }
  metric("two_hop_found", hops.empty() ? 0.0 : 1.0);
  claim({"layers_compose", "two_hop_found == 1", hops,
         text("Every task offset read by the two-layer model (", fixed(deep.accuracy, 3), " held-out accuracy) is "
              "where some head looks directly", unread.empty() ? "" : ", or no two heads were found whose offsets add up "
              "to one it does not look at", ": no token read in two hops was found in this run."),
         Expect::either_way});
}

// ---------------------------------------------------------------------------------------------
// 6. What it costs.

void what_it_costs(const Task& task) {
  std::vector<std::unique_ptr<nn::EncoderModel<float>>> models;
  for (std::size_t h : kHeads) models.push_back(make_model(task, h, 1));
  const int rounds = full_or_quick(60, 10);
  const std::vector<Timing> t = tagger_step_medians(models, task.train.rows(data::first_rows(64)), rounds);
  std::vector<std::vector<std::string>> rows;
  std::vector<double> wall, cpu;
  std::vector<std::string> names;
  for (std::size_t i = 0; i < kHeads.size(); ++i) {
    rows.push_back(row(kHeads[i], kModel / kHeads[i], fixed(t[i].cpu_ms, 2), fixed(t[i].wall_ms, 2)));
    wall.push_back(t[i].wall_ms), cpu.push_back(t[i].cpu_ms), names.push_back(counted(kHeads[i], "head"));
    timing(text("step_ms_h", kHeads[i]), t[i].wall_ms);
    timing(text("step_cpu_ms_h", kHeads[i]), t[i].cpu_ms);
  }
  say("One training step (forward, backward, Adam) of the one-layer model on a batch of 64 sequences, the four head "
      "counts timed in turn over ", rounds, " rounds, medians:");
  table({"heads", "$d_k$", "CPU ms per step", "wall ms per step"}, rows);
  say("The parameters and the multiply-adds are the same for every $h$ (section 1); what changes is how the same "
      "arithmetic is cut: $hB$ score matrices of ", kLength, " x ", kLength, " instead of $B$, each a small matrix "
      "product of inner size $d_k = 64/h$, and $h$ softmaxes per query. The projections and the feed-forward layer do "
      "not depend on $h$.");
  const double extra = t.back().cpu_ms / t.front().cpu_ms - 1.0;
  claim({"more_heads_cost_more", "cpu_extra_h8 > 0",
         text("Going from 1 to 8 heads costs ", percent(extra, 0), " more CPU time per step here: the price of more, "
              "thinner pieces of work."),
         text("Going from 1 to 8 heads did not cost more CPU time per step here (", percent(extra, 0), "): at these "
              "sizes the extra pieces of work are lost in the rest of the step."),
         Expect::either_way, {{"cpu_extra_h8", extra}}});
  save_figure(bar_figure({{"", "milliseconds per step (median)", names, {{"CPU time", cpu}, {"wall time", wall}}}},
                         {"Training step time by head count (d_model = 64, one layer, batch 64)"}),
              "step_time", "Median time of one training step for 1, 2, 4 and 8 heads at the same d_model, timed in turn");
}

}  // namespace

int main(int argc, char** argv) {
  LessonInfo info{"07_multi_head", "Multi-head attention: trained, and taken apart head by head",
                  "One attention layer with 1, 2, 4 and 8 heads on tasks that need two and three earlier tokens, what "
                  "each head learns, what each is worth, and what heads cost",
                  "test_acc_pair_h8"};
  info.lead_figure = "accuracy_by_heads";
  return run_lesson(info, argc, argv, [] {
    section("1. Splitting d_model into heads");
    splitting_into_heads();
    Generator gen(seed());
    const std::size_t n_train = full_or_quick<std::size_t>(8000, 4000), n_held_out = full_or_quick<std::size_t>(1000, 500);
    const Task pair = make_task("pair", "(x_{i-2}, x_{i-5})", {2, 5}, n_train, n_held_out, gen);
    const Task triple = make_task("triple", "(x_{i-1}, x_{i-3}, x_{i-6})", {1, 3, 6}, n_train, n_held_out, gen);
    config({{"vocabulary", kVocab}, {"length", kLength}, {"d_model", kModel}, {"train_sequences", n_train},
            {"held_out_sequences", n_held_out}});
    section("2. Two tokens, in order");
    say("Each output needs two earlier tokens, and which is which matters: the pair (3, 5) is another class than "
        "(5, 3). One head returns one weighted mean of the value vectors; a mean of two positions adds their values, "
        "$a\\,v(x_{i-2}) + b\\,v(x_{i-5})$, and with $a = b$ the order is gone. Two heads can each fetch one token and "
        "hand both to the feed-forward layer side by side.");
    const std::vector<Trained> pair_runs = train_head_counts(pair, 10);
    pair_claims(pair_runs);
    section("3. Three tokens, in order");
    say("Three tokens, each in its own place in the answer. If a head fetches one token, two heads cannot be enough; "
        "if a head can carry two, they might be.");
    std::vector<Trained> triple_runs = train_head_counts(triple, 16);
    triple_claims(triple_runs, pair_runs);
    accuracy_figures(pair_runs, triple_runs, pair, triple);
    section("4. What each head learned");
    what_each_head_learned(triple_runs, triple);
    section("5. What each head is worth: ablation and pruning");
    what_each_head_is_worth(triple_runs[3], triple);
    section("6. What it costs");
    what_it_costs(pair);
    section("7. Summary");
    say("A head is one weighted mean over the keys. When an answer needs several tokens and their order, several "
        "heads can split the work, each with its own pattern, and the merge keeps their results apart for the layer "
        "after. Splitting d_model into more heads costs no parameters and no multiply-adds, only more and smaller "
        "pieces of work. What the heads of this run learned, what each was worth and whether the layers composed is "
        "measured above.");
  });
}
