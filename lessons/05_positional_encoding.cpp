// Lesson 05: positional encoding.
//
// Self-attention is permutation-equivariant (shuffle the input tokens and every output is shuffled
// the same way), so a Transformer without positions reads a sequence as a bag of tokens. We take the
// sinusoidal encoding apart (its table, its frequencies, the similarity of two positions, and the
// fixed rotation M_k with PE(p + k) = M_k PE(p) that makes an offset a linear map), then train one
// small encoder six times on a task only position can solve (at every position, output the token k
// places to its left) with no positions, sinusoidal, learned, T5 relative bias, RoPE and ALiBi,
// testing each at the training length and at twice it.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numeric>
#include <set>

#include <xtensor/xadapt.hpp>
#include <xtensor/xview.hpp>

#include "lessons/kit/kit.hpp"
#include "nn/data/tagged.hpp"
#include "nn/data/tasks.hpp"
#include "nn/data/vocab.hpp"
#include "nn/positional/positional.hpp"
#include "nn/schedule.hpp"
#include "nn/transformer/encoder_model.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;
using Grid = xt::xarray<double>;

namespace {

// ---------------------------------------------------------------------------------------------
// 1. The sinusoidal table.

void the_sinusoidal_table() {
  const std::size_t d = 64, P = 64;
  say("Attention compares queries with keys by content alone: nothing in softmax(q k^T) v says which key came first. "
      "So we add to each token embedding a vector of its position p, in the original Transformer a fixed table: "
      "PE(p, 2i) = sin(p w_i), PE(p, 2i+1) = cos(p w_i), w_i = 10000^(-2i/d). Each dimension pair is a clock of its "
      "own speed, from a turn per 2 pi = 6.3 positions (i = 0) to nearly one per 2 pi 10000 = 62,832 (the last pair): "
      "together, a distinct bounded code for every position, at any length.");
  const Grid pe = nn::sinusoidal_table<double>(P, d);
  const auto w = [d](std::size_t i) { return nn::sinusoidal_frequency(i, d); };  // w_i
  say("The table's first positions and dimensions (d = ", d, "): column 0 is sin(p), column 1 cos(p); columns 2, 3 "
      "turn at w_1 = 10000^(-2/d) = ", fixed(w(1), 2), " radian per position, and so on.");
  matrix("PE[0:6, 0:8]", xt::view(pe, xt::range(0, 6), xt::range(0, 8)), numbered("p=", 6), numbered("j=", 8));
  plots::HeatmapOptions o;
  o.cmap = plots::Colormap::rdbu(), o.vmin = -1.0, o.vmax = 1.0, o.colorbar_label = "PE value";
  o.x_labels = number_labels(d, 8), o.y_labels = number_labels(P, 8);
  save_figure(heatmap_figure(pe, o, {"Sinusoidal positional encoding PE(p, j)", "Encoding dimension j", "Position p"}),
              "pe_table", "The table: rows are positions, columns are dimensions. Left columns oscillate fast, "
                          "right columns barely move; each row is a distinct code.");
  std::vector<plots::Series> series;
  for (std::size_t i : {0u, 1u, 2u, 4u, 8u})
    series.emplace_back(text("dim ", 2 * i, " (sin, wavelength ", fixed(2 * M_PI / w(i), 1), ")"),
                        xt::arange<double>(double(P)), xt::view(pe, xt::all(), 2 * i));
  const LineFigureOptions curves{"Each dimension pair is a sine of its own frequency", "Position p", "PE(p, j)",
                          false, false, false, -1.15, 1.15, 1800, 950};
  save_figure(line_figure(series, curves), "pe_curves", "Even dimensions 2i over the positions: the wavelength "
              "2 pi 10000^(2i/d) grows geometrically, like the digits of a (smooth) counter.");
  say("Why sines and cosines in pairs? Moving k positions turns each pair by the angle k w_i, whatever the start: "
      "PE(p + k) = M_k PE(p), M_k block-diagonal, block i = [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]], so a "
      "linear layer (a query or key projection) can express 'the token k places away' with one fixed matrix. For "
      "several k we measure max |PE(p + k) - M_k PE(p)| over all p < 512 and dimensions, in double precision.");
  const Grid long_table = nn::sinusoidal_table<double>(512 + 250, d);
  const Tensor<double> first(Grid(xt::view(long_table, xt::range(0, 512))));  // PE(p) for p < 512, one per row
  std::vector<std::vector<std::string>> rows;
  double rotation_worst = 0.0;
  for (std::size_t k : {1, 2, 5, 17, 100, 250}) {  // rows are positions, so M_k acts as a right product with M_k^T
    const Tensor<double> m(nn::sinusoidal_offset_rotation(k, d));  // block-diagonal, block i turning by k w_i
    const double err = max_abs_diff(xt::view(long_table, xt::range(k, k + 512)), matmul(first, m, false, true).value());
    rotation_worst = std::max(rotation_worst, err);
    rows.push_back(row(k, sci(err)));
  }
  table({"offset k", "max over p < 512 of abs(PE(p+k) - M_k PE(p))"}, rows);
  say("Rounding error only: the identity is exact. (Not 1e-16: positions up to 761 mean angles up to 761 radians, and "
      "the sine of a large angle carries a rounding error proportional to it.)");
  metric("rotation_max_error", rotation_worst);
  const Grid S = matmul(Tensor<double>(pe), Tensor<double>(pe), false, true).value();  // S(p, q) = PE(p) . PE(q)
  const double toeplitz = max_abs_diff(xt::view(S, xt::range(0, P - 1), xt::range(0, P - 1)),
                                       xt::view(S, xt::range(1, P), xt::range(1, P)));
  say("Hence PE(p) . PE(q) = sum_i [sin pw sin qw + cos pw cos qw] = sum_i cos((p - q) w_i) depends on p - q only "
      "(measured: max |S(p, q) - S(p+1, q+1)| = ", sci(toeplitz), "). It peaks at p = q (d/2 = 32) and decays with "
      "distance (nearby codes are similar), but not to zero: the slow dimensions barely move in 64 positions.");
  metric("similarity_toeplitz_error", toeplitz);
  plots::HeatmapOptions so;
  so.x_labels = so.y_labels = number_labels(P, 8), so.colorbar_label = "PE(p) . PE(q)";
  save_figure(heatmap_figure(S, so, {"Dot product PE(p) . PE(q) between positions", "Position q", "Position p"}),
              "pe_similarity", "Similarity of two positions: largest on the diagonal (d/2), falling off with |p - q|, "
                               "and the same along every diagonal -- it depends on the offset p - q only.");
}

// ---------------------------------------------------------------------------------------------
// The task: tag every position with the token k places to its left ('_' for the first k).

constexpr std::size_t kShift = 3, kTrainLength = 16, kLongLength = 2 * kTrainLength;
// vocab: '_' and the ten digits (and the specials); bag_rule: bag_rule_accuracy on the test strings.
struct ShiftTask { data::Vocab vocab; data::Tagged train, test, test_long; data::Pair example; double bag_rule = 0; };

// What a model seeing only the bag of tokens (and its own token) could do with a simple rule: predict
// the most frequent token among the other positions (lowest id on ties).
double bag_rule_accuracy(const data::Tagged& s, std::size_t vocab_size) {
  std::size_t hits = 0;
  for (std::size_t r = 0; r < s.size(); ++r)
    for (std::size_t c = 0; c < s.length(); ++c) {
      std::vector<int> others(vocab_size, 0);  // the bag of the other positions
      for (std::size_t o = 0; o < s.length(); ++o) others[std::size_t(s.inputs(r, o))] += o != c;
      hits += std::max_element(others.begin(), others.end()) - others.begin() == s.targets(r, c);
    }
  return double(hits) / double(s.inputs.size());
}

ShiftTask make_shift_task(std::size_t n_train, std::size_t n_test, Generator& gen) {
  auto shifted_strings = [&gen](std::size_t n, std::size_t length) {  // distinct, with their shifted copies as tags
    data::SeqTaskConfig cfg{data::SeqTask::shift};
    cfg.min_len = cfg.max_len = length, cfg.shift = kShift;
    return data::make_seq_task(cfg, n, gen);
  };
  ShiftTask t;
  for (const char* c : {"_", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}) t.vocab.add(c);
  const std::vector<data::Pair> pairs = shifted_strings(n_train + n_test, kTrainLength);
  const data::Tagged all = data::tag_pairs(pairs, t.vocab);
  t.train = all.slice(0, n_train), t.test = all.slice(n_train, n_train + n_test), t.example = pairs[n_train];
  t.test_long = data::tag_pairs(shifted_strings(n_test, kLongLength), t.vocab);
  t.bag_rule = bag_rule_accuracy(t.test, t.vocab.size());
  return t;
}

// ---------------------------------------------------------------------------------------------
// The encoder and its six positional methods.

struct Method { nn::Positional id; std::string name, idea; };
enum { kNone, kSinusoidal, kLearned, kRelative, kRope, kAlibi };  // their places in kMethods, the runs and tables
const std::vector<Method> kMethods = {
    {nn::Positional::None, "none", "nothing: attention sees a bag of tokens"},
    {nn::Positional::Sinusoidal, "sinusoidal", "x + PE(p), the fixed table of section 1"},
    {nn::Positional::Learned, "learned", "x + W[p], one trained vector per position (max_length rows)"},
    {nn::Positional::RelativeBias, "relative", "a trained bias b_h(bucket(j - i)) added to every score (T5)"},
    {nn::Positional::Rotary, "rope", "q and k rotated by p * theta_i, so q.k depends on j - i only (RoPE)"},
    {nn::Positional::ALiBi, "alibi", "a fixed bias -m_h abs(i - j) added to the scores (ALiBi)"},
};

std::unique_ptr<nn::EncoderModel<float>> make_model(nn::Positional method, std::size_t vocab) {
  nn::EncoderModelConfig c;
  c.vocab = c.num_classes = vocab, c.num_layers = 2;  // a tag is a token (or the filler)
  c.max_length = kTrainLength;                        // the learned table has exactly the training positions
  c.layer = nn::LayerConfig{full_or_quick<std::size_t>(64, 32), 4, full_or_quick<std::size_t>(128, 64), 0.0,
                            /*norm_first=*/true, nn::Activation::ReLU, 1e-5};
  c.positional = method, c.pooling = nn::Pooling::None, c.pad_id = data::Vocab::pad;  // per-token tagging
  Generator gen(seed() + 1000);  // every method starts from its own seed-determined weights
  return std::make_unique<nn::EncoderModel<float>>(c, gen);
}

// max over positions i and classes of |f(pi x)[i] - f(x)[pi(i)]|: zero (to rounding) exactly when
// the model treats its input as a bag, whatever its weights.
double permutation_error(nn::EncoderModel<float>& model, const IndexArray& one, const std::vector<std::size_t>& perm) {
  NoGrad no_grad;
  model.eval();
  const IndexArray index = xt::cast<Index>(xt::adapt(perm));
  const IndexArray shuffled = xt::view(one, xt::all(), xt::keep(perm));                // pi x
  const Tensor<float> permuted_outputs = index_select(model.forward(one), 1, index);  // pi f(x)
  return max_abs_diff(xt::cast<double>(model.forward(shuffled).value()), xt::cast<double>(permuted_outputs.value()));
}

void equivariance(const ShiftTask& task, Generator& gen) {
  say("Permute the tokens by pi: the embeddings permute alike; the scores q_i . k_j are the same numbers, rows and "
      "columns permuted; softmax works row by row; the weighted sum over keys ignores their order; layer norm and "
      "feed-forward act per token. So every layer and the encoder satisfy f(pi x) = pi f(x): a token's output depends "
      "on its own token and the bag of the others, never on where anything is, and equal tokens get equal outputs. We "
      "check it on untrained encoders (it holds for any weights) and a random digit string, randomly permuted.");
  std::vector<std::size_t> perm(kTrainLength);
  std::iota(perm.begin(), perm.end(), 0);
  shuffle(perm, gen);
  std::vector<std::vector<std::string>> rows;
  for (const Method& m : kMethods) {
    const double err = permutation_error(*make_model(m.id, task.vocab.size()), task.test.slice(0, 1).inputs, perm);
    if (m.id == nn::Positional::None) metric("none_permutation_error", err);
    rows.push_back(row(m.name, fixed(err, 7)));
  }
  table({"positional method", "max abs(f(pi x) - pi f(x)), logits, untrained"}, rows);
  say("Only the model without positions is equivariant (the error is float rounding); every positional method breaks "
      "the symmetry, which is the whole point of it.");
}

void the_task(const ShiftTask& task) {
  say("Input: a random string of ", kTrainLength, " digits. Tag at position i: the input token at position i - ",
      kShift, ", or the filler '_' for the first ", kShift, " positions: per-token tagging, so the encoder-only model "
      "applies (a linear head on every output vector). Example:");
  verbatim("input   " + task.example.source + "\ntarget  " + task.example.target);
  say("Without positions the model cannot know which token sits ", kShift, " places to the left, only that the target "
      "is one of the other tokens of the bag; guessing from the bag, e.g. 'the most frequent other token', scores ",
      fixed(task.bag_rule, 3), " per token on the held-out set (chance over the 11 tags: ", fixed(1.0 / 11, 3), "). "
      "With positions, one head attending at offset -", kShift, " solves it exactly. Data: ", task.train.size(),
      " training and ", task.test.size(), " held-out strings of length ", kTrainLength, " (all distinct), plus ",
      task.test_long.size(), " held-out ones of length ", kLongLength, " for extrapolation.");
  metric("bag_rule_accuracy", task.bag_rule);
  config({{"task", "shift right by k, per-token tags"}, {"k", kShift}, {"train_length", kTrainLength},
          {"n_train", task.train.size()}, {"n_test", task.test.size()}});
}

// ---------------------------------------------------------------------------------------------
// 4. Six methods, one budget.

struct Trained {
  Method method;
  std::unique_ptr<nn::EncoderModel<float>> model;
  History history;
  TagScores at_train, at_long;
  std::string long_failure;  // why the model cannot run at the long length (empty: it can)
  bool runs_long() const { return long_failure.empty(); }
};

std::vector<Trained> train_six(const ShiftTask& task) {
  FitOptions fo;
  fo.epochs = epochs(10, 4), fo.batch = 32, fo.clip = 1.0, fo.seed = seed() + 7;
  const double peak_lr = full_or_quick(2e-3, 1e-2);
  const long total = fit_steps(task.train.size(), fo);
  fo.lr = nn::warmup_cosine_lr(peak_lr, std::max(1L, total / 20), total, peak_lr / 20);
  const nn::LayerConfig layer = make_model(nn::Positional::None, task.vocab.size())->config().layer;
  config({{"d_model", layer.d_model}, {"heads", layer.heads}, {"d_ff", layer.d_ff}, {"layers", 2},
          {"epochs", fo.epochs}, {"batch", fo.batch}, {"peak_lr", peak_lr}});
  say("The same pre-norm encoder (2 layers, d = ", layer.d_model, ", ", layer.heads, " heads, feed-forward ",
      layer.d_ff, ", no dropout), the same data, the same ", fo.epochs, " epochs of Adam (batch ", fo.batch, ", "
      "warm-up then cosine decay from ", fixed(peak_lr, 4), "); only the positional method differs:");
  std::vector<std::vector<std::string>> ideas;
  for (const Method& m : kMethods) ideas.push_back(row(m.name, m.idea));
  table({"method", "what it adds"}, ideas);
  say("Sinusoidal and learned encodings act once, on the embeddings (absolute positions). Relative bias, RoPE and "
      "ALiBi act inside every attention call and only ever see the offset j - i between query and key.");
  std::vector<Trained> runs;
  for (const Method& m : kMethods) {
    Trained t{m, make_model(m.id, task.vocab.size()), {}, {}, {}, ""};
    nn::Adam<float> opt(t.model->parameters(), peak_lr);
    fo.label = m.name;
    t.history = fit(*t.model, opt, task.train.size(), [&](const std::vector<std::size_t>& rows) {
      const data::Tagged b = task.train.rows(rows);
      return cross_entropy(t.model->forward(b.inputs), b.targets);
    }, fo);
    timing("train_seconds_" + m.name, t.history.seconds);
    const Tagger logits_of = [&t](const IndexArray& inputs) { return t.model->forward(inputs); };
    t.at_train = evaluate_tagger(logits_of, task.test, 64);
    try {
      t.at_long = evaluate_tagger(logits_of, task.test_long, 64);
    } catch (const ShapeError& e) {  // the learned table has no row for position kTrainLength
      t.long_failure = e.what();
    }
    runs.push_back(std::move(t));
  }
  return runs;
}

void held_out_accuracy(const std::vector<Trained>& runs, const ShiftTask& task) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> solved, names[2];  // the bars: [0] at the training length, [1] at twice it (where it runs)
  std::vector<double> tok[2], ex[2];          // per-token accuracy and exact match
  for (const Trained& t : runs) {
    const auto at_long = [&t](double v) { return t.runs_long() ? fixed(v, 3) : std::string("n/a"); };
    rows.push_back(row(t.method.name, fixed(t.at_train.token, 3), fixed(t.at_train.exact, 3), at_long(t.at_long.token),
                       at_long(t.at_long.exact), fixed(t.history.epoch_loss.back(), 4)));
    for (std::size_t i = 0; i < (t.runs_long() ? 2 : 1); ++i) {
      const TagScores& s = i ? t.at_long : t.at_train;
      metric(text("token_accuracy_", t.method.name, "_L", i ? kLongLength : kTrainLength), s.token);
      metric(text("exact_match_", t.method.name, "_L", i ? kLongLength : kTrainLength), s.exact);
      names[i].push_back(t.method.name), tok[i].push_back(s.token), ex[i].push_back(s.exact);
    }
    if (t.at_train.token >= 0.99) solved.push_back(t.method.name);
  }
  table({"method", text("token acc L=", kTrainLength), text("exact L=", kTrainLength),
         text("token acc L=", kLongLength), text("exact L=", kLongLength), "final train loss"}, rows);
  const double none = tok[0][kNone];
  const std::size_t best = std::size_t(std::max_element(tok[0].begin() + 1, tok[0].end()) - tok[0].begin());
  metric("accuracy_gain_best_over_none", tok[0][best] - none);
  say("Held-out accuracy. Without positions the model scores ", fixed(none, 3), " per token, no better than the "
      "bag-of-tokens rule (", fixed(task.bag_rule, 3), "), as equivariance says it must. ",
      solved.empty() ? std::string("No method reaches 0.99 per token at this budget")
                     : "Solved (at least 0.99 per token): " + listing(solved),
      "; the best positional method (", names[0][best], ") reaches ", fixed(tok[0][best], 3), ", a gain of ",
      fixed(tok[0][best] - none, 3), " over no positions.");
  if (runs[kLearned].at_train.token < 0.9)
    say("The learned table lags here: its rows start near zero (std 0.02, against token vectors of unit scale) and "
        "all ", kTrainLength, " must be trained; at this budget it reaches ", fixed(runs[kLearned].at_train.token, 3),
        ". The sinusoidal codes need no training: they exist from the first step.");
  std::vector<std::size_t> reversal(kTrainLength);
  std::iota(reversal.rbegin(), reversal.rend(), 0);
  const double mirror = permutation_error(*runs[kAlibi].model, task.test.slice(0, 1).inputs, reversal);
  metric("alibi_reversal_error", mirror);
  say("ALiBi's bias -m_h |i - j| is symmetric: in an encoder (no causal mask) nothing else tells the keys ", kShift,
      " places left and right apart, so reversing the input reverses the output exactly (trained model: "
      "max |f(rev x) - rev f(x)| = ", sci(mirror), ", float rounding). The prediction at i is thus that at L-1-i of "
      "the reversed string, whose answer is x[i+", kShift, "], not x[i-", kShift, "]: both are right only if those "
      "tokens agree (one time in ten), capping it near (1 + 0.1) / 2 = 0.55 per token; it scores ",
      fixed(runs[kAlibi].at_train.token, 3), ". ALiBi was made for causal language models, whose mask gives the "
      "direction.");
  plots::Figure fig(2200, 950, 1, 2);
  fig.title(text("Held-out accuracy by positional method (shift-by-", kShift, " task)"));
  for (std::size_t i : {0, 1})
    bar_panel(fig.panel(i).title(i ? text("Twice the length, L = ", kLongLength, " (learned: n/a)")
                                   : text("Training length L = ", kTrainLength)).ylabel("Accuracy"),
              names[i], {{"per-token accuracy", tok[i]}, {"exact match", ex[i]}}, 2, 1.1);
  save_figure(fig, "accuracy_by_method",
              text("Per-token accuracy and exact match on held-out strings, at the training length (left) and at twice "
                   "it (right). Bag-of-tokens rule: ", fixed(task.bag_rule, 2), "; chance: 0.09."));
}

void extrapolation(const std::vector<Trained>& runs) {
  say("Extrapolation: the trained models on sequences longer than any they saw, here ", kLongLength, ", twice the "
      "training length. The learned table has rows for positions 0..", kTrainLength - 1, " only; we keep it that size "
      "(extra rows would never be trained, staying random) and report n/a. Asked for more, it fails loudly:");
  std::vector<std::vector<std::string>> rows;
  std::vector<plots::Series> series;  // accuracy by position at the long length
  std::vector<Run> curves;            // the training losses
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Trained& t = runs[i];
    curves.push_back({t.method.name, &t.history});
    if (!t.runs_long()) {  // the learned table
      verbatim(t.method.name + ": " + t.long_failure);
      rows.push_back(row(t.method.name, "n/a", "n/a", "n/a"));
      continue;
    }
    const auto& a = t.at_long.by_position;
    rows.push_back(row(t.method.name, fixed(mean_over(a, 0, kTrainLength), 3), fixed(mean_over(a, kTrainLength), 3),
                       fixed(t.at_long.exact, 3)));
    series.push_back(curve(t.method.name, a));
    series.back().x = series.back().x - 1.0, series.back().color = plots::series_color(i);  // positions from 0
  }
  table({"method", text("token acc, positions 0..", kTrainLength - 1),
         text("token acc, positions ", kTrainLength, "..", kLongLength - 1), "exact match"}, rows);
  std::set<std::size_t> seen, reached;  // the T5 buckets of the offsets training saw, and of the long strings'
  for (long r = -long(kLongLength) + 1; r < long(kLongLength); ++r)  // PositionalScheme's T5 settings
    (std::abs(r) < long(kTrainLength) ? seen : reached).insert(nn::relative_position_bucket(r, 32, 128, true));
  std::vector<std::string> new_buckets;
  for (std::size_t b : reached) if (!seen.count(b)) new_buckets.push_back(std::to_string(b));
  const auto& sinus = runs[kSinusoidal].at_long.by_position;
  const double seen_part = mean_over(sinus, 0, kTrainLength), new_part = mean_over(sinus, kTrainLength);
  const double rope = runs[kRope].at_long.token, t5 = runs[kRelative].at_long.token;
  say("On held-out length-", kLongLength, " strings the sinusoidal model scores ", fixed(seen_part, 3), " on "
      "positions 0..", kTrainLength - 1, " and ", fixed(new_part, 3), " on ", kTrainLength, "..", kLongLength - 1,
      ": the table has codes for the new positions, but the network never saw them. Relative methods see no absolute "
      "position, but longer strings bring unseen offsets, |j - i| up to ", kLongLength - 1, " instead of ",
      kTrainLength - 1, ": RoPE scores such keys with rotation angles it never trained on; the T5 table puts them in "
      "buckets ", new_buckets.empty() ? std::string("(none)") : listing(new_buckets), ", which no training string "
      "reached, their biases still random. Both degrade (RoPE to ", fixed(rope, 3), " per token, T5 to ", fixed(t5, 3),
      "); exact match falls fastest, one wrong tag among ", kLongLength, " spoiling the string. ALiBi's bias is the "
      "same at every distance -- why it extrapolates in language models -- but it cannot do this task at all.");
  series.push_back(reference("last trained position", {kTrainLength - 0.5, kTrainLength - 0.5}, {0.0, 1.0}));
  const LineFigureOptions style{text("Where extrapolation breaks: accuracy per position at L = ", kLongLength),
                         "Position in the string", "Per-token accuracy", false, false, true, 0.0, 1.05, 1800, 950};
  save_figure(line_figure(series, style), "accuracy_by_position",
              text("Held-out per-token accuracy at each position of length-", kLongLength, " strings. Dips are where "
                   "queries meet what training never showed: new positions for the sinusoidal model (right of the "
                   "dashed line), new offsets for the relative methods (keys up to ", kLongLength - 1, " places away; "
                   "training had at most ", kTrainLength - 1, ")."));
  CurvesFigureOptions loss{"Training loss (cross-entropy per token)"};
  loss.steps = false, loss.log_y = false, loss.width = 1800, loss.height = 950;
  save_figure(loss_curves(curves, loss), "training_loss",
              "Mean training loss per epoch; the same data, steps and schedule for every method.");
}

// ---------------------------------------------------------------------------------------------
// 5. Looking inside: the head that does the job.

void why_none_fails(std::vector<Trained>& runs, const ShiftTask& task) {
  const IndexArray example = task.test.slice(0, 1).inputs;
  const std::vector<std::string> labels = task.vocab.decode(std::vector<Index>(example.begin(), example.end()));
  std::size_t first = 0, second = 0;  // two positions holding the same token
  for (std::size_t i = 0; i < labels.size() && !second; ++i)
    for (std::size_t j = i + 1; j < labels.size() && !second; ++j)
      if (labels[i] == labels[j]) first = i, second = j;
  std::vector<HeadPick> views;  // per model, the head with the most weight on the key kShift places left of each query
  std::vector<AttentionMap> maps;
  std::vector<std::vector<std::string>> rows;
  for (Trained& t : runs) {
    NoGrad no_grad;
    t.model->forward(example);
    const HeadPick& v = views.emplace_back(head_for_offset(t.model->attention_weights(), long(kShift)));
    maps.push_back({v.weights, labels, labels,
                    text(t.method.name, " (L", v.layer + 1, " H", v.head + 1, ", ", fixed(v.mass, 2), ")")});
    rows.push_back(row(t.method.name, v.layer + 1, v.head + 1, fixed(v.mass, 3)));
    metric("offset_attention_" + t.method.name, v.mass);
  }
  const HeadPick &none = views[kNone], &sin = views[kSinusoidal];
  const double same_rows = max_abs_diff(xt::view(none.weights, first), xt::view(none.weights, second));
  say("For one held-out string we show each model's head with the most weight on the key ", kShift, " places left of "
      "the query (rows = queries, columns = keys, labelled by token). Without positions a_ij is, within one string, a "
      "function of the two tokens only: the token '", labels[first], "' at positions ", first, " and ", second, " has "
      "two equal rows (max difference ", fixed(same_rows, 7), "), so both get one output though their targets differ.");
  if (sin.mass > 0.5)
    say("The sinusoidal model draws the band one would write by hand: head ", sin.head + 1, " of layer ", sin.layer + 1,
        " puts ", fixed(sin.mass, 2), " of a query's weight, on average, on the key ", kShift, " places to its left.");
  else
    say("The sinusoidal model has not formed one clean band: its best head puts only ", fixed(sin.mass, 2), " of each "
        "query's weight on the key ", kShift, " places to its left, the shift spread over several heads or layers.");
  const auto title = [](auto m, const auto& v) { return text(m, ": layer ", v.layer + 1, ", head ", v.head + 1); };
  const AttentionFigureOptions both{"Attention weights on one held-out string (rows: queries, columns: keys)", 2, 2400, 1000};
  save_figure(attention_figure({{none.weights, labels, labels, title("no positions", none)},
                                {sin.weights, labels, labels, title("sinusoidal", sin)}}, both),
              "attention_none_vs_sinusoidal",
              text("Left: without positions, equal query tokens have identical rows and equal key tokens identical "
                   "columns -- the weights depend on the tokens, not where they are. Right: the sinusoidal head with "
                   "the most weight on the key ", kShift, " places left of each query (a band below the diagonal)."));
  const AttentionFigureOptions all{text("The head that looks ", kShift, " places to the left, per method"), 3, 2400, 1700};
  save_figure(attention_figure(maps, all), "attention_by_method",
              text("For each method, the head with the most weight on key i - ", kShift, " (title: layer, head, mean "
                   "weight on that key). A model may also spread the shift over several heads or both layers (the T5 "
                   "bias often does), so a faint band does not mean failure: read it with the accuracy table."));
  table({"method", "layer", "head", text("mean weight on key i - ", kShift)}, rows);
}

}  // namespace

int main(int argc, char** argv) {
  const LessonInfo info{"05_positional_encoding", "Positional encoding: putting order back into attention",
                        "Sinusoidal table and its rotation property; six positional methods on a shift task",
                        "token_accuracy_rope_L32"};
  return run_lesson(info, argc, argv, [] {
    section("1. The sinusoidal encoding");
    the_sinusoidal_table();
    section("2. Without positions, attention is permutation-equivariant");
    Generator gen(seed());
    const ShiftTask task =
        make_shift_task(full_or_quick<std::size_t>(6144, 1536), full_or_quick<std::size_t>(1024, 256), gen);
    equivariance(task, gen);
    section(text("3. A task only position can solve: copy the token ", kShift, " places to the left"));
    the_task(task);
    section("4. One encoder, six ways to know position");
    std::vector<Trained> runs = train_six(task);
    held_out_accuracy(runs, task);
    extrapolation(runs);
    section("5. Why the model without positions fails: its attention");
    why_none_fails(runs, task);
    section("6. What to remember");
    say("Attention alone is a set operation: permuting the input permutes the output; positional information breaks "
        "the symmetry. Absolute methods (sinusoidal, learned) stamp each token with its position; the sinusoidal stamp "
        "turns offsets into fixed rotations, so attention can learn 'k places away' as a linear map, and exists at "
        "every length, where a learned table stops at its last row. Relative methods (T5 bias, RoPE, ALiBi) put the "
        "offset j - i into the attention scores, what a shift needs and why they carry over to longer inputs; ALiBi's "
        "bias is a symmetric distance penalty, a locality prior, not an address.");
  });
}
