// Lesson 05: positional encoding.
//
// Self-attention is permutation-equivariant (shuffle the input tokens and every output is shuffled
// the same way), so a Transformer without positions reads a sequence as a bag of tokens. We take the
// sinusoidal encoding apart (its table, its frequencies, the similarity of two positions, and the
// fixed rotation M_k with PE(p + k) = M_k PE(p) that makes an offset a linear map), then train one
// small encoder seven times on a task only position can solve (at every position, output the token k
// places to its left) with no positions, sinusoidal, learned, T5 relative bias, RoPE, ALiBi and
// Shaw's relative vectors, testing each at the training length and at twice it.
#include <algorithm>
#include <cmath>
#include <memory>

#include <xtensor/xview.hpp>

#include "lessons/kit/encoder_tagger.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/offset_profile.hpp"
#include "nn/data/shift_tags.hpp"
#include "nn/positional/positional.hpp"
#include "nn/transformer/encoder_model.hpp"
#include "nn/transformer/equivariance.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;
using Grid = xt::xarray<double>;

namespace {

// ---------------------------------------------------------------------------------------------
// 1. The sinusoidal table.

void the_sinusoidal_table() {
  const std::size_t d = 64, P = 64;
  say("Attention compares queries with keys by content alone: nothing in $\\mathrm{softmax}(qk^\\top)\\,v$ says which "
      "key came first. So we add to each token embedding a vector of its position $p$, in the original Transformer a "
      "fixed table:");
  say("$$PE(p, 2i) = \\sin(p\\,\\omega_i),\\qquad PE(p, 2i+1) = \\cos(p\\,\\omega_i),\\qquad \\omega_i = 10000^{-2i/d}.$$");
  say("Each dimension pair is a clock of its own speed, from a turn per $2\\pi \\approx 6.3$ positions ($i = 0$) to "
      "nearly one per $2\\pi \\cdot 10000 \\approx 62{,}832$ (the last pair): together, a distinct bounded code for "
      "every position, at any length.");
  const Grid pe = nn::sinusoidal_table<double>(P, d);
  const auto w = [d](std::size_t i) { return nn::sinusoidal_frequency(i, d); };  // w_i
  say("The table's first positions and dimensions ($d = ", d, "$): column 0 is $\\sin p$, column 1 $\\cos p$; columns "
      "2 and 3 turn at $\\omega_1 = 10000^{-2/d} = ", fixed(w(1), 2), "$ radian per position, and so on.");
  matrix("PE[0:6, 0:8]", xt::view(pe, xt::range(0, 6), xt::range(0, 8)), numbered("p=", 6), numbered("j=", 8));
  plots::HeatmapOptions o;
  o.cmap = plots::Colormap::rdbu(), o.vmin = -1.0, o.vmax = 1.0, o.colorbar_label = "PE value";
  o.x_labels = number_labels(d, 8), o.y_labels = number_labels(P, 8);
  save_figure(heatmap_figure(pe, o, {"Sinusoidal positional encoding PE(p, j)", "Encoding dimension j", "Position p"}),
              "pe_table", "The table: rows are positions, columns are dimensions. Left columns oscillate fast, "
                          "right columns barely move.");
  std::vector<plots::Series> series;
  for (std::size_t i : {0u, 1u, 2u, 4u, 8u})
    series.emplace_back(text("dim ", 2 * i, " (sin, wavelength ", fixed(2 * M_PI / w(i), 1), ")"),
                        xt::arange<double>(double(P)), xt::view(pe, xt::all(), 2 * i));
  const LineFigureOptions curves{"Each dimension pair is a sine of its own frequency", "Position p", "PE(p, j)",
                                 false, false, false, -1.15, 1.15, 1800, 950};
  save_figure(line_figure(series, curves), "pe_curves", "Even dimensions $2i$ over the positions: the wavelength "
              "$2\\pi \\cdot 10000^{2i/d}$ grows geometrically, like the digits of a (smooth) counter.");
  say("Why sines and cosines in pairs? Moving $k$ positions turns each pair by the angle $k\\omega_i$, whatever the "
      "start: $PE(p + k) = M_k\\, PE(p)$ with $M_k$ block-diagonal, its block $i$ turning the pair "
      "$(\\sin p\\omega_i, \\cos p\\omega_i)$ by the angle $k\\omega_i$, so a linear layer (a query or key "
      "projection) can express \"the token $k$ places away\" with one fixed matrix. For several $k$ we measure "
      "$\\max \\lvert PE(p + k) - M_k PE(p) \\rvert$ over all $p < 512$ and dimensions, in double precision.");
  std::vector<std::vector<std::string>> rows;
  double rotation_worst = 0.0;
  for (std::size_t k : {1, 2, 5, 17, 100, 250}) {
    const double err = nn::sinusoidal_rotation_error(k, d, 512);  // rows of PE(p) times M_k^T, against PE(p + k)
    rotation_worst = std::max(rotation_worst, err);
    rows.push_back(row(k, sci(err)));
  }
  table({"offset $k$", "$\\max_{p < 512} \\lvert PE(p+k) - M_k PE(p) \\rvert$"}, rows);
  metric("rotation_max_error", rotation_worst);
  claim({"rotation_exact", "rotation_max_error <= 1e-9",
         text("Rounding error only (at most ", sci(rotation_worst), "): the identity is exact. Not $10^{-16}$: "
              "positions up to 761 mean angles up to 761 radians, and the sine of a large angle carries a rounding "
              "error proportional to it."),
         text("The largest error is ", sci(rotation_worst), ", more than double-precision rounding of angles up to "
              "761 radians explains.")});
  const Grid S = matmul(Tensor<double>(pe), Tensor<double>(pe), false, true).value();  // S(p, q) = PE(p) . PE(q)
  const double toeplitz = max_abs_diff(xt::view(S, xt::range(0, P - 1), xt::range(0, P - 1)),
                                       xt::view(S, xt::range(1, P), xt::range(1, P)));
  const double self = S(0, 0), lowest = xt::amin(S)();
  say("Hence $PE(p) \\cdot PE(q) = \\sum_i [\\sin p\\omega_i \\sin q\\omega_i + \\cos p\\omega_i \\cos q\\omega_i] = "
      "\\sum_i \\cos((p - q)\\,\\omega_i)$ depends on $p - q$ only, and is largest, $d/2$, at $p = q$.");
  metric("similarity_toeplitz_error", toeplitz);
  metric("similarity_self", self);
  metric("similarity_min", lowest);
  claim({"similarity_depends_on_offset", "similarity_toeplitz_error <= 1e-9 and similarity_min > 0 and "
                                         "similarity_min < similarity_self / 2",
         text("Measured: $\\max \\lvert S(p, q) - S(p+1, q+1) \\rvert$ = ", sci(toeplitz), ", so the similarity is one "
              "function of the offset. It falls from ", fixed(self, 1), " at $p = q$, not steadily and not to zero: "
              "its smallest value within ", P, " positions is ", fixed(lowest, 1), ", because the slow dimensions "
              "barely move over so few positions."),
         text("Measured: $\\max \\lvert S(p, q) - S(p+1, q+1) \\rvert$ = ", sci(toeplitz), "; the similarity ranges "
              "from ", fixed(lowest, 1), " to ", fixed(self, 1), ".")});
  plots::HeatmapOptions so;
  so.x_labels = so.y_labels = number_labels(P, 8), so.colorbar_label = "PE(p) · PE(q)";
  save_figure(heatmap_figure(S, so, {"Dot product PE(p) · PE(q) between positions", "Position q", "Position p"}),
              "pe_similarity", "Similarity of two positions: largest on the diagonal ($d/2$), the same along every "
                               "diagonal (a function of the offset $p - q$).");
}

// The task (nn/data/shift_tags): tag every position with the token kShift places to its left ('_'
// for the first kShift), trained at kTrainLength and tested at twice it too.
constexpr std::size_t kShift = 3, kTrainLength = 16, kLongLength = 2 * kTrainLength;
using ShiftTask = data::ShiftTags;

// ---------------------------------------------------------------------------------------------
// The encoder and its seven positional methods.

struct Method { nn::Positional id; std::string name, idea; };
enum { kNone, kSinusoidal, kLearned, kRelative, kRope, kAlibi, kShaw };  // places in kMethods, the runs, tables
constexpr std::size_t kShawClip = 8;  // Shaw's K: distances beyond it share the edge vector
const std::vector<Method> kMethods = {
    {nn::Positional::None, "none", "nothing: attention sees a bag of tokens"},
    {nn::Positional::Sinusoidal, "sinusoidal", "$x + PE(p)$, the fixed table of section 1"},
    {nn::Positional::Learned, "learned", "$x + W[p]$, one trained vector per position (max_length rows)"},
    {nn::Positional::RelativeBias, "relative", "a trained bias $b_h(\\mathrm{bucket}(j - i))$ added to every score (T5)"},
    {nn::Positional::Rotary, "rope", "$q$ and $k$ rotated by $p\\,\\theta_i$, so $q \\cdot k$ depends on $j - i$ only (RoPE)"},
    {nn::Positional::ALiBi, "alibi", "a fixed bias $-m_h \\lvert i - j \\rvert$ added to the scores (ALiBi)"},
    {nn::Positional::ShawRelative, "shaw", text("a trained vector per distance in the score, $q_i \\cdot (k_j + w_{\\mathrm{clip}(j - i)}) / "
                                                "\\sqrt{d_k}$, clipped at $K = ", kShawClip, "$ (Shaw et al.)")},
};

std::unique_ptr<nn::EncoderModel<float>> make_model(nn::Positional method, std::size_t vocab) {
  nn::EncoderModelConfig c;
  c.vocab = c.num_classes = vocab, c.num_layers = 2;  // a tag is a token (or the filler)
  c.max_length = kTrainLength;                        // the learned table has exactly the training positions
  c.layer = nn::LayerConfig{full_or_quick<std::size_t>(64, 32), 4, full_or_quick<std::size_t>(128, 64), 0.0,
                            /*norm_first=*/true, nn::Activation::ReLU, 1e-5};
  c.positional = method, c.shaw_max_distance = kShawClip, c.pooling = nn::Pooling::None, c.pad_id = data::Vocab::pad;  // per-token tagging
  Generator gen(seed() + 1000);  // every method starts from its own seed-determined weights
  return std::make_unique<nn::EncoderModel<float>>(c, gen);
}

void equivariance(const ShiftTask& task, Generator& gen) {
  say("Permute the tokens by $\\pi$: the embeddings permute alike; the scores $q_i \\cdot k_j$ are the same numbers, "
      "rows and columns permuted; softmax works row by row; the weighted sum over keys ignores their order; layer norm "
      "and feed-forward act per token. So every layer and the encoder satisfy $f(\\pi x) = \\pi f(x)$: a token's "
      "output depends on its own token and the bag of the others, never on where anything is, and equal tokens get "
      "equal outputs. We check it on untrained encoders (it holds for any weights) and a random digit string, "
      "randomly permuted.");
  const std::vector<std::size_t> perm = nn::random_permutation(kTrainLength, gen);
  std::vector<std::vector<std::string>> rows;
  double none_error = 0.0, positional_min = 1e30;  // without positions; the smallest with them
  for (const Method& m : kMethods) {
    const double err = nn::permutation_error(*make_model(m.id, task.vocab.size()), task.test.slice(0, 1).inputs, perm);
    metric(m.id == nn::Positional::None ? "none_permutation_error" : "permutation_error_" + m.name, err);
    if (m.id == nn::Positional::None) none_error = err;
    else positional_min = std::min(positional_min, err);
    rows.push_back(row(m.name, fixed(err, 7)));
  }
  table({"positional method", "$\\max \\lvert f(\\pi x) - \\pi f(x) \\rvert$, logits, untrained"}, rows);
  claim({"only_none_is_equivariant", "none_permutation_error <= 1e-4 and positional_min >= 1e-3",
         text("Only the model without positions is equivariant (its error is float rounding); every positional method "
              "breaks the symmetry, by at least ", fixed(positional_min, 3), ", which is the whole point of it."),
         text("The model without positions is off by ", sci(none_error), " and the smallest "
              "positional error is ", sci(positional_min), ": not the clean split the argument predicts."),
         Expect::every_run, {{"positional_min", positional_min}}});
}

void the_task(const ShiftTask& task) {
  say("Input: a random string of ", kTrainLength, " digits. Tag at position $i$: the input token at position $i - ",
      kShift, "$, or the filler '_' for the first ", kShift, " positions: per-token tagging, so the encoder-only model "
      "applies (a linear head on every output vector). Example:");
  verbatim("input   " + task.example.source + "\ntarget  " + task.example.target);
  say("Without positions the model cannot know which token sits ", kShift, " places to the left, only that the target "
      "is one of the other tokens of the bag. With positions, one head attending at offset $-", kShift, "$ solves it "
      "exactly. Data: ", task.train.size(), " training and ", task.test.size(), " held-out strings of length ",
      kTrainLength, " (all distinct), plus ", task.test_long.size(), " held-out ones of length ", kLongLength,
      " for extrapolation.");
  metric("bag_rule_accuracy", task.bag_rule);
  claim({"bag_rule_is_weak", "bag_rule_accuracy < 0.3",
         text("Guessing from the bag, with the rule \"the most frequent other token\", scores ", fixed(task.bag_rule, 3),
              " per token on the held-out set (chance over the 11 tags: ", fixed(1.0 / 11, 3), ")."),
         text("Guessing from the bag, with the rule \"the most frequent other token\", scores ", fixed(task.bag_rule, 3),
              " per token on the held-out set: the task is easier from the bag than it is meant to be.")});
  config({{"task", "shift right by k, per-token tags"}, {"k", kShift}, {"train_length", kTrainLength},
          {"n_train", task.train.size()}, {"n_test", task.test.size()}});
}

// ---------------------------------------------------------------------------------------------
// 4. Seven methods, one budget.

// A method's trained model, scored on held-out strings at the training length and at twice it
// (at_train, at_long; long_failure says why it cannot run there; lessons/kit/encoder_tagger).
struct Trained : ScoredTagger {
  Method method;
};

std::vector<Trained> train_all(const ShiftTask& task) {
  Recipe recipe;  // Adam, a warm-up over 1/20 of the steps, then a cosine decay to 1/20 of the peak
  recipe.epochs = epochs(10, 8), recipe.batch = 32, recipe.lr = full_or_quick(2e-3, 1e-2);
  recipe.warmup = 0.05, recipe.decay = Decay::cosine, recipe.floor = 0.05, recipe.clip = 1.0, recipe.seed = seed() + 7;
  const nn::LayerConfig layer = make_model(nn::Positional::None, task.vocab.size())->config().layer;
  config({{"d_model", layer.d_model}, {"heads", layer.heads}, {"d_ff", layer.d_ff}, {"layers", 2},
          {"epochs", recipe.epochs}, {"batch", recipe.batch}, {"peak_lr", recipe.lr}});
  say("The same pre-norm encoder (2 layers, $d = ", layer.d_model, "$, ", layer.heads, " heads, feed-forward ",
      layer.d_ff, ", no dropout), the same data and the same training, ", describe(recipe, fit_steps(task.train.size(), recipe)),
      "; only the positional method differs:");
  std::vector<std::vector<std::string>> ideas;
  for (const Method& m : kMethods) ideas.push_back(row(m.name, m.idea));
  table({"method", "what it adds"}, ideas);
  say("Sinusoidal and learned encodings act once, on the embeddings (absolute positions). Relative bias, RoPE, "
      "ALiBi and Shaw's vectors act inside every attention call and only ever see the offset $j - i$ between query "
      "and key. T5 adds one trained number per (distance bucket, head), the same for every query; Shaw et al. add a "
      "trained vector $w_r$ to the key, so the position term $q_i \\cdot w_{j-i}$ depends on what the query holds. "
      "Shaw's table has $2K + 1 = ", 2 * kShawClip + 1, "$ rows of $d_k$ numbers, one per distance "
      "$-K \\ldots K$, shared by the heads and layers; every key farther than $K$ reads the edge row.");
  std::vector<Trained> runs;
  for (const Method& m : kMethods) {
    recipe.label = m.name;  // trained, then scored at both lengths (the learned table: n/a at twice the length)
    runs.push_back({train_and_score(make_model(m.id, task.vocab.size()), task.train, task.test, task.test_long, recipe, 64), m});
    timing("train_seconds_" + m.name, runs.back().history.seconds);
  }
  return runs;
}

void held_out_accuracy(const std::vector<Trained>& runs, const ShiftTask& task) {
  std::vector<NamedTagger> scored;
  for (const Trained& t : runs) scored.push_back({t.method.name, &t});
  // The metrics token_accuracy_<method>_L16 and exact_match_<method>_L16 (and _L32 where it runs), the
  // table's rows and the bars of both lengths (lessons/kit/encoder_tagger).
  TwoLengthReport report = report_two_lengths(scored, kTrainLength, kLongLength);
  table({"method", text("token acc $L=", kTrainLength, "$"), text("exact $L=", kTrainLength, "$"),
         text("token acc $L=", kLongLength, "$"), text("exact $L=", kLongLength, "$"), "final train loss"}, report.rows);
  const std::vector<double>& tok = report.bars[0].series[0].second;  // per-token accuracy at L = 16, every method
  const double none = tok[kNone], alibi = tok[kAlibi];
  const double worst = std::min({tok[kSinusoidal], tok[kLearned], tok[kRelative], tok[kRope]});
  metric("accuracy_gain_best_over_none", *std::max_element(tok.begin(), tok.end()) - none);
  claim({"none_stays_at_bag_rule", "token_accuracy_none_L16 < bag_rule_accuracy + 0.05",
         text("Without positions the model scores ", fixed(none, 3), " per token, no more than 0.05 above the "
              "bag-of-tokens rule (", fixed(task.bag_rule, 3), "), as equivariance says it must."),
         text("Without positions the model scores ", fixed(none, 3), " per token, more than 0.05 above the "
              "bag-of-tokens rule (", fixed(task.bag_rule, 3), "): a simple rule is not the best a bag allows.")});
  claim({"positions_solve_shift",
         "min(token_accuracy_sinusoidal_L16, token_accuracy_learned_L16, token_accuracy_relative_L16, "
         "token_accuracy_rope_L16) >= 0.99 and token_accuracy_none_L16 <= 0.3",
         text("With positions the task is solved: sinusoidal, learned, relative and RoPE all reach at least ",
              fixed(worst, 3), " per token on held-out strings, against ", fixed(none, 3), " without positions."),
         text("Not every position method solved the task at this budget: the weakest of sinusoidal, learned, relative "
              "and RoPE reaches ", fixed(worst, 3), " per token (none: ", fixed(none, 3), ").")});
  const double mirror = nn::permutation_error(*runs[kAlibi].model, task.test.slice(0, 1).inputs, nn::reversal(kTrainLength));
  metric("alibi_reversal_error", mirror);
  say("ALiBi's bias $-m_h \\lvert i - j \\rvert$ is symmetric: in an encoder (no causal mask) nothing else tells the "
      "keys ", kShift, " places left and right apart, so reversing the input reverses the output. The prediction at "
      "$i$ is then that at $L-1-i$ of the reversed string, whose answer is $x[i+", kShift, "]$, not $x[i-", kShift,
      "]$: both are right only if those tokens agree (one time in ten), capping it near $(1 + 0.1)/2 = 0.55$ per "
      "token. ALiBi was made for causal language models, whose mask gives the direction.");
  claim({"alibi_mirrors", "alibi_reversal_error <= 1e-3 and token_accuracy_alibi_L16 <= 0.6",
         text("Measured on the trained model: $\\max \\lvert f(\\mathrm{rev}\\,x) - \\mathrm{rev}\\,f(x) \\rvert$ = ",
              sci(mirror), " (float rounding), and it scores ", fixed(alibi, 3), " per token, under the cap."),
         text("The trained ALiBi model is off reflection symmetry by ", sci(mirror), " and scores ", fixed(alibi, 3),
              " per token.")});
  report.bars[0].title = text("Training length L = ", kTrainLength);  // one above the other, each the figure's width
  report.bars[1].title = text("Twice the length, L = ", kLongLength, " (learned: n/a)");
  report.bars[0].ylabel = report.bars[1].ylabel = "Accuracy";
  save_figure(bar_figure({report.bars[0], report.bars[1]}, {text("Held-out accuracy by positional method (shift-by-", kShift, " task)"), 2, 1.1, 1600, 1400}),
              "accuracy_by_method",
              text("Per-token accuracy and exact match on held-out strings, at the training length (top) and at twice "
                   "it (bottom). Bag-of-tokens rule: ", fixed(task.bag_rule, 2), "; chance: 0.09."));
}

void extrapolation(const std::vector<Trained>& runs) {
  say("Extrapolation: the trained models on sequences longer than any they saw, here ", kLongLength, ", twice the "
      "training length. The learned table has rows for positions 0..", kTrainLength - 1, " only; we keep it that size "
      "(extra rows would never be trained, staying random) and report n/a. Asked for more, it fails loudly:");
  std::vector<NamedTagger> scored;
  std::vector<Run> curves;  // the training losses
  for (const Trained& t : runs) {
    scored.push_back({t.method.name, &t});
    curves.push_back({t.method.name, &t.history});
    if (!t.runs_long()) verbatim(t.method.name + ": " + t.long_failure);  // the learned table
  }
  // A row per method, and a curve of the accuracy by position for those that run (lessons/kit/encoder_tagger).
  PositionReport by_position = report_by_position(scored, kTrainLength);
  table({"method", text("token acc, positions 0..", kTrainLength - 1),
         text("token acc, positions ", kTrainLength, "..", kLongLength - 1), "exact match"}, by_position.rows);
  const auto& sinus = runs[kSinusoidal].at_long.by_position;
  const double seen_part = mean_over(sinus, 0, kTrainLength), new_part = mean_over(sinus, kTrainLength);
  metric("token_accuracy_sinusoidal_L32_seen_positions", seen_part);
  metric("token_accuracy_sinusoidal_L32_new_positions", new_part);
  claim({"sinusoidal_fails_new_positions",
         "token_accuracy_sinusoidal_L32_seen_positions >= 0.9 and token_accuracy_sinusoidal_L32_new_positions <= 0.5",
         text("On held-out length-", kLongLength, " strings the sinusoidal model scores ", fixed(seen_part, 3), " on "
              "positions 0..", kTrainLength - 1, " and ", fixed(new_part, 3), " on ", kTrainLength, "..",
              kLongLength - 1, ": the table has codes for the new positions, but the network never saw them."),
         text("On held-out length-", kLongLength, " strings the sinusoidal model scores ", fixed(seen_part, 3), " on "
              "positions 0..", kTrainLength - 1, " and ", fixed(new_part, 3), " on ", kTrainLength, "..",
              kLongLength - 1, ".")});
  std::vector<std::string> new_buckets;  // PositionalScheme's T5 settings: 32 buckets up to distance 128, both ways
  for (std::size_t b : nn::unseen_buckets(kTrainLength, kLongLength, 32, 128, true)) new_buckets.push_back(std::to_string(b));
  say("Relative methods see no absolute position, but longer strings bring unseen offsets, $\\lvert j - i \\rvert$ up "
      "to ", kLongLength - 1, " instead of ", kTrainLength - 1, ": RoPE scores such keys with rotation angles it never "
      "trained on; the T5 table puts them in buckets ", new_buckets.empty() ? std::string("(none)") : listing(new_buckets),
      ", which no training string reached, so their biases are still as initialized.");
  const double rope = runs[kRope].at_long.token, t5 = runs[kRelative].at_long.token, sin_long = runs[kSinusoidal].at_long.token;
  const TagScores &rope_long = runs[kRope].at_long, &t5_long = runs[kRelative].at_long;
  claim({"relative_methods_degrade", "exact_match_rope_L32 < 0.9 and exact_match_relative_L32 < 0.9",
         text("Neither carries over intact: at twice the length RoPE scores ", fixed(rope, 3), " per token and the T5 "
              "bias ", fixed(t5, 3), ", and only ", fixed(rope_long.exact, 3), " and ", fixed(t5_long.exact, 3),
              " of the strings come out entirely right, against ", fixed(runs[kRope].at_train.exact, 3), " and ",
              fixed(runs[kRelative].at_train.exact, 3), " at the training length."),
         text("At twice the length RoPE gets ", fixed(rope_long.exact, 3), " of the strings entirely right and the T5 "
              "bias ", fixed(t5_long.exact, 3), " (", fixed(rope, 3), " and ", fixed(t5, 3), " per token): at least "
              "one of them carries over to 0.9 of the strings or more.")});
  claim({"relative_beat_sinusoidal_at_L32",
         "token_accuracy_rope_L32 > token_accuracy_sinusoidal_L32 + 0.1 and "
         "token_accuracy_relative_L32 > token_accuracy_sinusoidal_L32 + 0.1",
         text("They keep more than the sinusoidal table, though: ", fixed(rope, 3), " (RoPE) and ", fixed(t5, 3),
              " (T5) against ", fixed(sin_long, 3), " at $L = ", kLongLength, "$."),
         text("At this budget they do not keep clearly more than the sinusoidal table: ", fixed(rope, 3), " (RoPE) and ",
              fixed(t5, 3), " (T5) against ", fixed(sin_long, 3), " at $L = ", kLongLength, "$, a margin below 0.1 "
              "for at least one."),
         Expect::full_run});
  say("Exact match needs all ", kLongLength, " tags of a string right, so one wrong tag spoils it. ALiBi's bias is the "
      "same function of distance at every length, which is why it extrapolates in language models, but it cannot do "
      "this task at any length.");
  by_position.curves.push_back(reference("last trained position", {kTrainLength - 0.5, kTrainLength - 0.5}, {0.0, 1.0}));
  const LineFigureOptions style{text("Accuracy per position at L = ", kLongLength, " (trained at L = ", kTrainLength, ")"),
                                "Position in the string", "Per-token accuracy", false, false, true, 0.0, 1.05, 1800, 950};
  save_figure(line_figure(by_position.curves, style), "accuracy_by_position",
              text("Held-out per-token accuracy at each position of length-", kLongLength, " strings. Right of the "
                   "dashed line: positions training never showed (the sinusoidal model). Queries near either end see "
                   "keys up to ", kLongLength - 1, " places away; training had at most ", kTrainLength - 1, "."));
  CurvesFigureOptions loss{"Training loss (cross-entropy per token)"};
  loss.steps = false, loss.log_y = false, loss.width = 1800, loss.height = 950;
  save_figure(loss_curves(curves, loss), "training_loss",
              "Mean training loss per epoch; the same data, steps and schedule for every method.");
}

// Shaw's vectors against T5's scalars: both relative, both trained; they differ in what a distance
// contributes (a vector that meets the query, or a number) and in what lies past the training
// distances (the edge row Shaw's clipping trains, or T5 buckets no training string reached).
void shaw_against_t5(const std::vector<Trained>& runs, const ShiftTask& task) {
  const TagScores &shaw = runs[kShaw].at_train, &shaw_long = runs[kShaw].at_long;
  const TagScores &t5 = runs[kRelative].at_train, &t5_long = runs[kRelative].at_long;
  say("Shaw's clipping at $K = ", kShawClip, "$ means the training strings (offsets up to ", kTrainLength - 1, ") "
      "already trained the two edge rows that every farther key reads: at $L = ", kLongLength, "$ no key meets a row "
      "training left as initialized, unlike the T5 table above.");
  claim({"shaw_solves_shift", "token_accuracy_shaw_L16 >= 0.99",
         text("Shaw's relative vectors solve the task as well: ", fixed(shaw.token, 3), " per token and ",
              fixed(shaw.exact, 3), " exact match on held-out strings of the training length (T5: ", fixed(t5.token, 3),
              ")."),
         text("Shaw's relative vectors reach only ", fixed(shaw.token, 3), " per token at the training length (T5: ",
              fixed(t5.token, 3), ")."),
         Expect::every_run});
  claim({"shaw_vs_t5_at_L32", "token_accuracy_shaw_L32 > token_accuracy_relative_L32 + 0.1 and exact_match_shaw_L32 >= 0.9",
         text("At twice the length Shaw's vectors keep more: ", fixed(shaw_long.token, 3), " per token (exact ",
              fixed(shaw_long.exact, 3), ") against T5's ", fixed(t5_long.token, 3), " (exact ", fixed(t5_long.exact, 3),
              "): clipping gave every distance it meets a trained vector."),
         text("At twice the length Shaw's vectors do not carry over clearly better than T5's bias: ", fixed(shaw_long.token, 3),
              " per token (exact ", fixed(shaw_long.exact, 3), ") against ", fixed(t5_long.token, 3), " (exact ",
              fixed(t5_long.exact, 3), "), although every distance they meet has a trained vector."),
         Expect::every_run});
  // Where the three trained relative methods look at L = 32: each one's head with the most weight on
  // the key kShift places left, its mean weight by offset over held-out long strings.
  const auto strings = [](const data::Tagged& set) { return set.slice(0, std::min<std::size_t>(64, set.size())).inputs; };
  std::vector<NamedOffsetHead> heads;  // the figure's panels (lessons/kit/encoder_tagger)
  double band[kShaw + 1] = {}, unseen[kShaw + 1] = {};  // by method: the weight at offset kShift, and beyond training's
  for (std::size_t m : {std::size_t(kRelative), std::size_t(kRope), std::size_t(kShaw)}) {
    const OffsetHead h = offset_head(*runs[m].model, strings(task.test_long), long(kShift), kTrainLength);
    unseen[m] = h.far;  // a query's weight on keys >= kTrainLength away
    metric("offset_attention_L32_" + runs[m].method.name, band[m] = h.pick.mass);
    metric("unseen_offset_weight_L32_" + runs[m].method.name, unseen[m]);
    heads.push_back({runs[m].method.name, h, plots::series_color(m)});
  }
  const double shaw_mass = band[kShaw], t5_mass = band[kRelative];
  const double t5_band_short = head_for_offset(attention_on(*runs[kRelative].model, strings(task.test)), long(kShift)).mass;
  metric("offset_attention_L16_relative", t5_band_short);
  claim({"shaw_band_survives_at_L32", "offset_attention_L32_shaw > offset_attention_L32_relative",
         text("Where the heads look: at $L = ", kLongLength, "$ Shaw's best head still puts ", fixed(shaw_mass, 3),
              " of a query's weight on the key ", kShift, " places left, T5's ", fixed(t5_mass, 3), " (at $L = ",
              kTrainLength, "$: ", fixed(t5_band_short, 3), ", so no single T5 head carries the shift). On keys ",
              kTrainLength, " or more places away, which no training string had, Shaw's head puts ", fixed(unseen[kShaw], 3),
              " of a query's weight, T5's ", fixed(unseen[kRelative], 3), "."),
         text("At $L = ", kLongLength, "$ Shaw's best head puts ", fixed(shaw_mass, 3), " of a query's weight on the "
              "key ", kShift, " places left, T5's ", fixed(t5_mass, 3), ": Shaw's band is not the sharper one."),
         Expect::every_run});
  save_figure(offset_heads_figure(heads, kTrainLength,
                                  text("Where the best head looks at L = ", kLongLength, " (trained at L = ", kTrainLength, ")")),
              "offset_profile_L32",
              text("For T5's bias, RoPE and Shaw's vectors, the head with the most weight on the key ", kShift,
                   " places left: its mean weight at each offset over held-out strings of length ", kLongLength,
                   ". Offsets beyond ", kTrainLength - 1, " never occurred in training."));
}

// ---------------------------------------------------------------------------------------------
// 5. Looking inside: the head that does the job.

void attention_by_method(std::vector<Trained>& runs, const ShiftTask& task) {
  const IndexArray example = task.test.slice(0, 1).inputs;
  const std::vector<std::string> labels = task.vocab.decode(std::vector<Index>(example.begin(), example.end()));
  // Two positions holding the same token (16 digits: one always repeats).
  const auto [first, second] = first_repeat(labels).value_or(std::pair<std::size_t, std::size_t>{0, 0});
  std::vector<HeadPick> views;  // per model, the head with the most weight on the key kShift places left of each query
  std::vector<AttentionMap> maps;
  std::vector<std::vector<std::string>> rows;
  for (Trained& t : runs) {
    const HeadPick& v = views.emplace_back(head_for_offset(attention_on(*t.model, example), long(kShift)));
    maps.push_back({v.weights, labels, labels,
                    text(t.method.name, " (L", v.layer + 1, " H", v.head + 1, ", ", fixed(v.mass, 2), ")")});
    rows.push_back(row(t.method.name, v.layer + 1, v.head + 1, fixed(v.mass, 3)));
    metric("offset_attention_" + t.method.name, v.mass);
  }
  const HeadPick &none = views[kNone], &sin = views[kSinusoidal];
  const double same_rows = max_abs_diff(xt::view(none.weights, first), xt::view(none.weights, second));
  metric("none_equal_token_rows_diff", same_rows);
  say("For one held-out string we show each model's head with the most weight on the key ", kShift, " places left of "
      "the query (rows = queries, columns = keys, labelled by token). Without positions $a_{ij}$ is, within one "
      "string, a function of the two tokens only.");
  claim({"none_equal_tokens_equal_rows", "none_equal_token_rows_diff <= 1e-5",
         text("The token '", labels[first], "' at positions ", first, " and ", second, " has two equal rows in the "
              "model without positions (largest difference ", sci(same_rows), "), so both get one output though their "
              "targets differ."),
         text("The token '", labels[first], "' at positions ", first, " and ", second, " has rows that differ by ",
              sci(same_rows), " in the model without positions.")});
  claim({"sinusoidal_draws_band", "offset_attention_sinusoidal > 0.5",
         text("The sinusoidal model draws the band one would write by hand: head ", sin.head + 1, " of layer ",
              sin.layer + 1, " puts ", fixed(sin.mass, 2), " of a query's weight, on average, on the key ", kShift,
              " places to its left."),
         text("The sinusoidal model has not formed one clean band: its best head puts only ", fixed(sin.mass, 2),
              " of each query's weight on the key ", kShift, " places to its left, the shift spread over several "
              "heads or layers.")});
  const auto title = [](auto m, const auto& v) { return text(m, ": layer ", v.layer + 1, ", head ", v.head + 1); };
  const AttentionFigureOptions both{"Attention weights on one held-out string (rows: queries, columns: keys)", 2, 2000, 1000};
  save_figure(attention_figure({{none.weights, labels, labels, title("no positions", none)},
                                {sin.weights, labels, labels, title("sinusoidal", sin)}}, both),
              "attention_none_vs_sinusoidal",
              text("Left: without positions, equal query tokens have identical rows and equal key tokens identical "
                   "columns. Right: the sinusoidal head with the most weight on the key ", kShift, " places left of "
                   "each query."));
  const AttentionFigureOptions all{text("The head that looks ", kShift, " places to the left, per method"), 3, 2200, 2150};
  save_figure(attention_figure(maps, all), "attention_by_method",
              text("For each method, the head with the most weight on key $i - ", kShift, "$ (title: layer, head, mean "
                   "weight on that key). A model may also spread the shift over several heads or both layers, so a "
                   "faint band does not mean failure: read it with the accuracy table."));
  table({"method", "layer", "head", text("mean weight on key $i - ", kShift, "$")}, rows);
}

// The attention explorer (lessons/kit/explorer.hpp), the methods as its layers: every head of every
// trained model on a held-out string, and on one of twice the length for the methods that run there.
void explorer(std::vector<Trained>& runs, const ShiftTask& task) {
  ExplorerPage page{text("Lesson 05: seven positional methods on the shift-by-", kShift, " task"), "positions (queries)",
                    "positions (keys)", text("Each token is its digit @ its position; the tag of position i is the digit "
                    "at i - ", kShift, ". Choose a method's layer and a head, hover a position to see where it looks, click "
                    "it for its scores split into q · k and the bias that T5's, ALiBi's and Shaw's methods add."), {}};
  for (const data::Tagged* set : {&task.test, &task.test_long}) {
    std::vector<NamedModel> models;
    for (Trained& t : runs)
      if (set == &task.test || t.runs_long()) models.push_back({t.method.name, t.model.get()});
    page.inputs.push_back(explorer_input(models, text("held-out string, L = ", set->length()), task.vocab, set->slice(0, 1).inputs));
  }
  show_explorer(page, "explorer", text("The attention explorer: every head of the seven models on a held-out string of "
                                       "length ", kTrainLength, ", and of the six that run there on one of length ",
                                       kLongLength, "; click a position for its query-key products"));
}

}  // namespace

int main(int argc, char** argv) {
  LessonInfo info{"05_positional_encoding", "Positional encoding: putting order back into attention",
                  "Sinusoidal table and its rotation property; seven positional methods on a shift task",
                  "token_accuracy_rope_L32"};
  info.lead_figure = "accuracy_by_method";
  return run_lesson(info, argc, argv, [] {
    section("1. The sinusoidal encoding");
    the_sinusoidal_table();
    section("2. Permuting the input");
    Generator gen(seed());
    const ShiftTask task = data::shift_tags(kShift, kTrainLength, kLongLength, full_or_quick<std::size_t>(6144, 1536),
                                            full_or_quick<std::size_t>(1024, 256), gen);
    equivariance(task, gen);
    section(text("3. The task: copy the token ", kShift, " places to the left"));
    the_task(task);
    section("4. One encoder, seven ways to know position");
    std::vector<Trained> runs = train_all(task);
    held_out_accuracy(runs, task);
    extrapolation(runs);
    shaw_against_t5(runs, task);
    section("5. Attention weights, method by method");
    attention_by_method(runs, task);
    explorer(runs, task);
    section("6. The methods side by side");
    say("Attention alone is a set operation: permuting the input permutes the output, and positional information "
        "breaks the symmetry. Absolute methods (sinusoidal, learned) stamp each token with its position; the "
        "sinusoidal stamp turns offsets into fixed rotations, so attention can learn \"$k$ places away\" as a linear "
        "map, and it exists at every length, where a learned table stops at its last row. Relative methods (T5 bias, "
        "RoPE, ALiBi, Shaw) put the offset $j - i$ into the attention scores, Shaw's as a vector that meets the "
        "query; ALiBi's bias is a symmetric distance penalty, "
        "a locality prior, not an address. What each did here at twice the training length is measured above.");
  });
}
