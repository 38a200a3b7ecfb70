// Lesson 05: positional encoding.
//
// Self-attention is permutation-equivariant: shuffle the input tokens and every output is shuffled
// the same way, so a Transformer without positional information reads a sequence as a bag of
// tokens. We take the sinusoidal encoding apart (its table, its frequencies, the similarity of two
// positions, and the fixed rotation M_k with PE(p + k) = M_k PE(p) that makes an offset a linear
// map), then train one small encoder six times on a task only position can solve -- output, at
// every position, the token k places to its left -- with no positions, sinusoidal, learned,
// T5 relative bias, RoPE and ALiBi, and test each at the training length and at twice that length.
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

// max over p < P and every dimension of |PE(p + k) - M_k PE(p)|: the table's first P rows moved k
// places by the rotation, against its rows k .. k + P - 1 (rows are positions, so M_k acts as a right
// product with M_k^T).
double rotation_error(const Grid& table, std::size_t P, std::size_t k) {
  const Grid m = nn::sinusoidal_offset_rotation(k, table.shape()[1]);  // block-diagonal, block i turning by k w_i
  const Tensor<double> first(Grid(xt::view(table, xt::range(0, P))));
  return max_abs_diff(xt::view(table, xt::range(k, k + P)), matmul(first, Tensor<double>(m), false, true).value());
}

void the_sinusoidal_table() {
  const std::size_t d = 64, P = 64;
  say("Attention compares queries with keys by content alone: nothing in softmax(q k^T) v says which key came "
      "first. So we add to each token embedding a vector that depends on its position p. The original Transformer "
      "uses a fixed table: PE(p, 2i) = sin(p w_i), PE(p, 2i+1) = cos(p w_i), w_i = 10000^(-2i/d). Each pair of "
      "dimensions is a clock with its own speed, from one turn per 2 pi = 6.3 positions (i = 0) to nearly one per "
      "2 pi 10000 = 62,832 (the last pair): together, a distinct bounded code for every position, at any length.");
  const Grid pe = nn::sinusoidal_table<double>(P, d);
  say("The first positions and dimensions of the table (d = ", d, "): column 0 is sin(p), column 1 cos(p); columns 2, "
      "3 turn at w_1 = 10000^(-2/d) = ", fixed(nn::sinusoidal_frequency(1, d), 2), " radian per position, and so on.");
  matrix("PE[0:6, 0:8]", xt::view(pe, xt::range(0, 6), xt::range(0, 8)), numbered("p=", 6), numbered("j=", 8));
  plots::HeatmapOptions o;
  o.cmap = plots::Colormap::rdbu();
  o.vmin = -1.0, o.vmax = 1.0;
  o.x_labels = number_labels(d, 8), o.y_labels = number_labels(P, 8);
  o.colorbar_label = "PE value";
  save_figure(heatmap_figure(pe, o, {"Sinusoidal positional encoding PE(p, j)", "Encoding dimension j", "Position p"}),
              "pe_table", "The table: rows are positions, columns are dimensions. Left columns oscillate fast, "
                          "right columns barely move; each row is a distinct code.");
  std::vector<plots::Series> series;
  for (std::size_t pair : {0u, 1u, 2u, 4u, 8u}) {
    const double wavelength = 2 * M_PI / nn::sinusoidal_frequency(pair, d);
    series.emplace_back(text("dim ", 2 * pair, " (sin, wavelength ", fixed(wavelength, 1), ")"),
                        xt::arange<double>(double(P)), xt::view(pe, xt::all(), 2 * pair));
  }
  const LineFigure curves{"Each dimension pair is a sine of its own frequency", "Position p", "PE(p, j)",
                          false, false, false, -1.15, 1.15, 1800, 950};
  save_figure(line_figure(series, curves), "pe_curves",
              "Even dimensions 2i over the positions: the wavelength 2 pi 10000^(2i/d) grows geometrically, like "
              "the digits of a (smooth) counter.");

  say("Why sines and cosines in pairs? Then moving k positions turns each pair by the angle k w_i, whatever the "
      "start: PE(p + k) = M_k PE(p), M_k block-diagonal with block i = [[cos k w_i, sin k w_i], [-sin k w_i, "
      "cos k w_i]]. So a linear layer (a query or key projection) can express 'the token k places away' with one "
      "fixed matrix. We build M_k for several offsets and measure max |PE(p + k) - M_k PE(p)| over every position "
      "p < 512 and every dimension, in double precision.");
  const Grid long_table = nn::sinusoidal_table<double>(512 + 250, d);
  std::vector<std::vector<std::string>> rows;
  double rotation_worst = 0.0;
  for (std::size_t k : {1, 2, 5, 17, 100, 250}) {
    const double err = rotation_error(long_table, 512, k);
    rotation_worst = std::max(rotation_worst, err);
    rows.push_back(row(k, sci(err)));
  }
  table({"offset k", "max over p < 512 of abs(PE(p+k) - M_k PE(p))"}, rows);
  say("Rounding error only: the identity is exact. (Not 1e-16: positions up to 761 mean angles up to 761 radians, "
      "and the sine of a large angle carries a rounding error proportional to it.)");
  metric("rotation_max_error", rotation_worst);

  // S(p, q) = PE(p) . PE(q) = sum_i cos((p - q) w_i): a function of p - q alone (a Toeplitz matrix).
  const Grid similarity = matmul(Tensor<double>(pe), Tensor<double>(pe), false, true).value();
  const double toeplitz = max_abs_diff(xt::view(similarity, xt::range(0, P - 1), xt::range(0, P - 1)),
                                       xt::view(similarity, xt::range(1, P), xt::range(1, P)));
  say("A consequence: PE(p) . PE(q) = sum_i [sin pw sin qw + cos pw cos qw] = sum_i cos((p - q) w_i) depends on the "
      "offset p - q only. Measured on the table: max |S(p, q) - S(p+1, q+1)| = ", sci(toeplitz), ". The similarity "
      "peaks at p = q (d/2 = 32) and falls off with distance, so nearby positions have similar codes; not to zero, "
      "because the slow dimensions barely change over 64 positions.");
  metric("similarity_toeplitz_error", toeplitz);
  plots::HeatmapOptions so;
  so.x_labels = so.y_labels = number_labels(P, 8);
  so.colorbar_label = "PE(p) . PE(q)";
  save_figure(heatmap_figure(similarity, so, {"Dot product PE(p) . PE(q) between positions", "Position q", "Position p"}),
              "pe_similarity", "Similarity of two positions: largest on the diagonal (d/2), falling off with |p - q|, "
                               "and the same along every diagonal -- it depends on the offset p - q only.");
}

// ---------------------------------------------------------------------------------------------
// The task: tag every position with the token k places to its left ('_' for the first k).

constexpr std::size_t kShift = 3, kTrainLength = 16, kLongLength = 2 * kTrainLength;

struct ShiftTask {
  data::Vocab vocab;  // '_' and the ten digits (and the specials)
  data::Tagged train, test, test_long;
  data::Pair example;
  double bag_rule = 0;  // bag_rule_accuracy on the test strings
};

// What a model that sees only the bag of tokens (and its own token) could do with a simple rule:
// predict the most frequent token among the other positions (lowest id on ties).
double bag_rule_accuracy(const data::Tagged& s, std::size_t vocab_size) {
  std::size_t hits = 0;
  for (std::size_t r = 0; r < s.size(); ++r) {
    std::vector<int> count(vocab_size, 0);
    for (std::size_t c = 0; c < s.length(); ++c) ++count[std::size_t(s.inputs(r, c))];
    for (std::size_t c = 0; c < s.length(); ++c) {
      std::vector<int> others = count;
      --others[std::size_t(s.inputs(r, c))];
      hits += std::max_element(others.begin(), others.end()) - others.begin() == s.targets(r, c);
    }
  }
  return double(hits) / double(s.inputs.size());
}

ShiftTask make_shift_task(std::size_t n_train, std::size_t n_test, Generator& gen) {
  auto shifted_strings = [&gen](std::size_t n, std::size_t length) {  // distinct, with their shifted copies as tags
    data::SeqTaskConfig cfg{data::SeqTask::shift};
    cfg.min_len = cfg.max_len = length;
    cfg.shift = kShift;
    return data::make_seq_task(cfg, n, gen);
  };
  ShiftTask t;
  for (const char* c : {"_", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}) t.vocab.add(c);
  const std::vector<data::Pair> pairs = shifted_strings(n_train + n_test, kTrainLength);
  const data::Tagged all = data::tag_pairs(pairs, t.vocab);
  t.train = all.slice(0, n_train);
  t.test = all.slice(n_train, n_train + n_test);
  t.test_long = data::tag_pairs(shifted_strings(n_test, kLongLength), t.vocab);
  t.example = pairs[n_train];
  t.bag_rule = bag_rule_accuracy(t.test, t.vocab.size());
  return t;
}

// ---------------------------------------------------------------------------------------------
// The encoder and its six positional methods.

struct Method {
  nn::Positional id;
  std::string name, idea;
};

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
  c.vocab = c.num_classes = vocab;  // a tag is a token (or the filler)
  c.num_layers = 2;
  c.max_length = kTrainLength;  // the learned table has exactly the training positions
  c.layer = nn::LayerConfig{full_or_quick<std::size_t>(64, 32), 4, full_or_quick<std::size_t>(128, 64), 0.0,
                            /*norm_first=*/true, nn::Activation::ReLU, 1e-5};
  c.positional = method;
  c.pooling = nn::Pooling::None;  // per-token tagging
  c.pad_id = data::Vocab::pad;
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
  say("Shuffle the input tokens with a permutation pi. The embeddings are shuffled the same way; the scores q_i . k_j "
      "are the same numbers in shuffled rows and columns; softmax works row by row; the weighted sum over keys ignores "
      "their order; layer norm and the feed-forward act on one token at a time. So every layer, and the whole encoder, "
      "satisfies f(pi x) = pi f(x): a token's output depends on its own token and the bag of the others, never on "
      "where anything is, and equal tokens get equal outputs. We check it on freshly initialized encoders (it holds "
      "for any weights), on a random permutation of a random digit string.");
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
  say("Only the model without positions is equivariant (the error is float rounding); every positional method "
      "breaks the symmetry, which is the whole point of it.");
}

void the_task(const ShiftTask& task) {
  say("Input: a random string of ", kTrainLength, " digits. Tag at position i: the input token at position i - ",
      kShift, ", or the filler '_' for the first ", kShift, " positions: per-token tagging, so the encoder-only model "
      "applies (a linear head on every output vector). Example:");
  verbatim("input   " + task.example.source + "\ntarget  " + task.example.target);
  say("Without positions the model cannot know which token sits ", kShift, " places to the left: the target is just "
      "one of the other tokens of the bag. The best it can do is guess from the bag, e.g. 'the most frequent other "
      "token', which scores ", fixed(task.bag_rule, 3), " per token on the held-out set (chance over the 11 tags: ",
      fixed(1.0 / 11, 3), "). With positions, one attention head looking at offset -", kShift, " solves it exactly. "
      "Data: ", task.train.size(), " training strings and ", task.test.size(), " held-out strings of length ",
      kTrainLength, " (all distinct), plus ", task.test_long.size(), " held-out strings of length ", kLongLength,
      " to test extrapolation.");
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
  fo.epochs = epochs(10, 4);
  fo.batch = 32;
  fo.clip = 1.0;
  fo.seed = seed() + 7;
  const double peak_lr = full_or_quick(2e-3, 1e-2);
  const long total = long((task.train.size() + fo.batch - 1) / fo.batch) * fo.epochs;
  fo.lr = nn::warmup_cosine_lr(peak_lr, std::max(1L, total / 20), total, peak_lr / 20);
  const nn::LayerConfig layer = make_model(nn::Positional::None, task.vocab.size())->config().layer;
  config({{"d_model", layer.d_model}, {"heads", layer.heads}, {"d_ff", layer.d_ff}, {"layers", 2},
          {"epochs", fo.epochs}, {"batch", fo.batch}, {"peak_lr", peak_lr}});
  say("The same pre-norm encoder (2 layers, d = ", layer.d_model, ", ", layer.heads, " heads, feed-forward ",
      layer.d_ff, ", no dropout), the same data, the same ", fo.epochs, " epochs of Adam (batch ", fo.batch,
      ", warm-up then cosine decay from ", fixed(peak_lr, 4), "); only the positional method differs:");
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
    } catch (const ShapeError& e) {
      t.long_failure = e.what();
    }
    runs.push_back(std::move(t));
  }
  return runs;
}

const Trained& run_of(const std::vector<Trained>& runs, nn::Positional id) {
  return *std::find_if(runs.begin(), runs.end(), [id](const Trained& t) { return t.method.id == id; });
}

// The mean per-token accuracy over positions [from, to).
double mean_over(const std::vector<double>& by_position, std::size_t from, std::size_t to) {
  return mean(std::vector<double>(by_position.begin() + long(from), by_position.begin() + long(to)));
}

void held_out_accuracy(const std::vector<Trained>& runs, const ShiftTask& task) {
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> solved, names, names_long;
  std::vector<double> tok, ex, tok_long, ex_long;  // the bars: per-token accuracy and exact match at each length
  for (const Trained& t : runs) {
    const bool long_ok = t.runs_long();
    rows.push_back(row(t.method.name, fixed(t.at_train.token, 3), fixed(t.at_train.exact, 3),
                       long_ok ? fixed(t.at_long.token, 3) : "n/a", long_ok ? fixed(t.at_long.exact, 3) : "n/a",
                       fixed(t.history.epoch_loss.back(), 4)));
    metric(text("token_accuracy_", t.method.name, "_L", kTrainLength), t.at_train.token);
    metric(text("exact_match_", t.method.name, "_L", kTrainLength), t.at_train.exact);
    names.push_back(t.method.name), tok.push_back(t.at_train.token), ex.push_back(t.at_train.exact);
    if (long_ok) {
      metric(text("token_accuracy_", t.method.name, "_L", kLongLength), t.at_long.token);
      metric(text("exact_match_", t.method.name, "_L", kLongLength), t.at_long.exact);
      names_long.push_back(t.method.name), tok_long.push_back(t.at_long.token), ex_long.push_back(t.at_long.exact);
    }
    if (t.at_train.token >= 0.99) solved.push_back(t.method.name);
  }
  table({"method", text("token acc L=", kTrainLength), text("exact L=", kTrainLength), text("token acc L=", kLongLength),
         text("exact L=", kLongLength), "final train loss"}, rows);
  const double none = tok[0];  // kMethods begins with no positions
  const std::size_t best = std::size_t(std::max_element(tok.begin() + 1, tok.end()) - tok.begin());
  metric("accuracy_gain_best_over_none", tok[best] - none);
  say("Held-out accuracy. Without positions the model scores ", fixed(none, 3), " per token, no better than the "
      "bag-of-tokens rule (", fixed(task.bag_rule, 3), "), as equivariance says it must. ",
      solved.empty() ? std::string("No method reaches 0.99 per token at this budget")
                     : "Solved (at least 0.99 per token): " + listing(solved),
      "; the best positional method (", names[best], ") reaches ", fixed(tok[best], 3), ", a gain of ",
      fixed(tok[best] - none, 3), " over no positions.");
  const Trained& learned = run_of(runs, nn::Positional::Learned);
  if (learned.at_train.token < 0.9)
    say("The learned table lags here: its rows start near zero (std 0.02, against token vectors of unit scale) and "
        "each of the ", kTrainLength, " rows must be learned from data; at this budget it has reached ",
        fixed(learned.at_train.token, 3), ". The sinusoidal table needs no training: its codes are there from the "
        "first step.");
  std::vector<std::size_t> reversal(kTrainLength);
  std::iota(reversal.rbegin(), reversal.rend(), 0);
  const Trained& alibi = run_of(runs, nn::Positional::ALiBi);
  const double mirror = permutation_error(*alibi.model, task.test.slice(0, 1).inputs, reversal);
  metric("alibi_reversal_error", mirror);
  say("ALiBi deserves a remark. Its bias -m_h |i - j| is symmetric: in an encoder (no causal mask) the keys ", kShift,
      " places to the left and to the right get the same bias, and nothing else tells them apart, so reversing the "
      "input reverses the output exactly (measured on the trained model: max |f(rev x) - rev f(x)| = ", sci(mirror),
      ", float rounding). So the prediction at position i of x is also the one at position L-1-i of the reversed "
      "string, where the right answer is x[i+", kShift, "] instead of x[i-", kShift, "]: both can be right only when "
      "those two tokens agree (one time in ten), and ALiBi cannot exceed about (1 + 0.1) / 2 = 0.55 per token on "
      "this task. It scores ", fixed(alibi.at_train.token, 3), ". ALiBi was designed for causal language models, "
      "where the mask supplies the direction.");

  plots::Figure fig(2200, 950, 1, 2);
  fig.title(text("Held-out accuracy by positional method (shift-by-", kShift, " task)"));
  bar_panel(fig.panel(0).title(text("Training length L = ", kTrainLength)).ylabel("Accuracy"), names,
            {{"per-token accuracy", tok}, {"exact match", ex}}, 2, 1.1);
  bar_panel(fig.panel(1).title(text("Twice the length, L = ", kLongLength, " (learned: n/a)")).ylabel("Accuracy"), names_long,
            {{"per-token accuracy", tok_long}, {"exact match", ex_long}}, 2, 1.1);
  save_figure(fig, "accuracy_by_method",
              "Per-token accuracy and exact match on held-out strings, at the training length (left) and at twice it "
              "(right). Bag-of-tokens rule: " + fixed(task.bag_rule, 2) + "; chance: 0.09.");
}

void extrapolation(const std::vector<Trained>& runs) {
  say("Extrapolation: running the trained model on sequences longer than any it saw, here ", kLongLength, ", twice "
      "the training length. The learned table has rows for positions 0..", kTrainLength - 1, " only; we keep it that size (extra "
      "rows would never be trained and stay random) and report n/a. Asked for a longer sequence, it fails loudly:");
  std::vector<std::vector<std::string>> rows;
  std::vector<plots::Series> series;  // accuracy by position at the long length
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const Trained& t = runs[i];
    if (!t.runs_long()) {
      verbatim(t.method.name + ": " + t.long_failure);
      rows.push_back(row(t.method.name, "n/a", "n/a", "n/a"));
      continue;
    }
    const auto& a = t.at_long.by_position;
    rows.push_back(row(t.method.name, fixed(mean_over(a, 0, kTrainLength), 3),
                       fixed(mean_over(a, kTrainLength, kLongLength), 3), fixed(t.at_long.exact, 3)));
    series.push_back(curve(t.method.name, a));
    series.back().x = series.back().x - 1.0;  // positions from 0
    series.back().color = plots::series_color(i);
  }
  table({"method", text("token acc, positions 0..", kTrainLength - 1),
         text("token acc, positions ", kTrainLength, "..", kLongLength - 1), "exact match"}, rows);
  std::set<std::size_t> seen, reached;  // the T5 buckets of the offsets training saw, and of the long strings'
  for (long r = -long(kLongLength) + 1; r < long(kLongLength); ++r)  // PositionalScheme's T5 settings
    (std::abs(r) < long(kTrainLength) ? seen : reached).insert(nn::relative_position_bucket(r, 32, 128, true));
  std::vector<std::string> new_buckets;
  for (std::size_t b : reached)
    if (!seen.count(b)) new_buckets.push_back(std::to_string(b));
  const auto& sinus = run_of(runs, nn::Positional::Sinusoidal).at_long.by_position;
  say("On the held-out length-", kLongLength, " strings the sinusoidal model scores ",
      fixed(mean_over(sinus, 0, kTrainLength), 3), " on positions 0..", kTrainLength - 1, " and ",
      fixed(mean_over(sinus, kTrainLength, kLongLength), 3), " on positions ", kTrainLength, "..", kLongLength - 1,
      ": the table has codes for the new positions, but the network never saw them. The relative methods never see "
      "an absolute position, but a longer string brings offsets they never saw either: |j - i| up to ",
      kLongLength - 1, " instead of ", kTrainLength - 1, ". RoPE scores such a key with rotation angles it never "
      "trained on; the T5 table puts these offsets into buckets ",
      new_buckets.empty() ? std::string("(none)") : listing(new_buckets), " that no training string reached, whose "
      "biases are still random. Both degrade (RoPE to ", fixed(run_of(runs, nn::Positional::Rotary).at_long.token, 3),
      " per token, the T5 bias to ", fixed(run_of(runs, nn::Positional::RelativeBias).at_long.token, 3), "); exact "
      "match falls fastest, since one wrong tag among ", kLongLength, " spoils the string. ALiBi's bias is defined "
      "the same way at every distance -- why it extrapolates in language models -- but it cannot do this task at all.");
  series.push_back(reference("last trained position", {kTrainLength - 0.5, kTrainLength - 0.5}, {0.0, 1.0}));
  const LineFigure style{text("Where extrapolation breaks: accuracy per position at L = ", kLongLength),
                         "Position in the string", "Per-token accuracy", false, false, true, 0.0, 1.05, 1800, 950};
  save_figure(line_figure(series, style), "accuracy_by_position",
              text("Held-out per-token accuracy at each position of length-", kLongLength, " strings. A dip is where "
                   "queries meet what training never showed them: new positions for the sinusoidal model (right of the "
                   "dashed line), new offsets for the relative methods (a query has keys up to ", kLongLength - 1,
                   " places away, training had at most ", kTrainLength - 1, ")."));
  std::vector<Run> curves;
  for (const Trained& t : runs) curves.push_back({t.method.name, &t.history});
  CurvesFigure loss{"Training loss (cross-entropy per token)"};
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
  // Per model, the head with the most weight on the key kShift places left of each query.
  std::vector<HeadPick> views;
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
  const HeadPick &none = views[0], &sin = views[1];
  const double same_rows = max_abs_diff(xt::view(none.weights, first), xt::view(none.weights, second));
  say("For one held-out string we show, for each model, the attention head that puts the most weight on the key ",
      kShift, " places left of the query (rows = queries, columns = keys, labelled with their tokens). Without "
      "positions the weight a_ij is, within one string, a function of the two tokens only: the token '",
      labels[first], "' appears at positions ", first, " and ", second, ", and its two rows are the same (max "
      "difference ", fixed(same_rows, 7), "), so the two get the same output although their targets differ.");
  if (sin.mass > 0.5)
    say("The sinusoidal model draws the band one would write by hand: its head ", sin.head + 1, " in layer ",
        sin.layer + 1, " puts ", fixed(sin.mass, 2), " of each query's weight, on average, on the key ", kShift,
        " places to its left.");
  else
    say("The sinusoidal model has not formed one clean band: its best head puts only ", fixed(sin.mass, 2),
        " of each query's weight on the key ", kShift, " places to its left, so the shift is spread over several "
        "heads or layers.");
  auto title = [](const std::string& name, const HeadPick& v) {
    return text(name, ": layer ", v.layer + 1, ", head ", v.head + 1);
  };
  save_figure(attention_figure({{none.weights, labels, labels, title("no positions", none)},
                                {sin.weights, labels, labels, title("sinusoidal", sin)}},
                               {"Attention weights on one held-out string (rows: queries, columns: keys)", 2, 2400, 1000}),
              "attention_none_vs_sinusoidal",
              "Left: without positions, equal query tokens have identical rows and equal key tokens identical columns "
              "-- the weights depend on the tokens, not on where they are. Right: the sinusoidal model's head with the "
              "most weight on the key " + std::to_string(kShift) + " places to the left of each query (a band below "
              "the diagonal).");
  save_figure(attention_figure(maps, {text("The head that looks ", kShift, " places to the left, per method"), 3, 2400, 1700}),
              "attention_by_method",
              "For each method, the head with the most weight on key i - " + std::to_string(kShift) + " (title: layer, "
              "head, mean weight on that key). A model may also spread the shift over several heads or both layers "
              "(the T5 bias often does), so a faint band does not mean failure: read it with the accuracy table.");
  table({"method", "layer", "head", text("mean weight on key i - ", kShift)}, rows);
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"05_positional_encoding", "Positional encoding: putting order back into attention",
                     "Sinusoidal table and its rotation property; six positional methods on a shift task",
                     "token_accuracy_rope_L32"},
                    argc, argv, [] {
                      section("1. The sinusoidal encoding");
                      the_sinusoidal_table();
                      section("2. Without positions, attention is permutation-equivariant");
                      Generator gen(seed());
                      const ShiftTask task = make_shift_task(full_or_quick<std::size_t>(6144, 1536),
                                                             full_or_quick<std::size_t>(1024, 256), gen);
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
                      say("Attention alone is a set operation: permuting the input permutes the output. Positional "
                          "information breaks the symmetry. Absolute methods (sinusoidal, learned) stamp each token "
                          "with its position; the sinusoidal stamp turns offsets into fixed rotations, so attention can "
                          "learn 'k places away' as a linear map, and it exists for every length, while a learned table "
                          "stops at its last row. Relative methods (T5 bias, RoPE, ALiBi) put the offset j - i directly "
                          "into the attention scores, which is what a shift needs and why they carry over to longer "
                          "inputs; ALiBi's bias is a symmetric distance penalty, a locality prior rather than an address.");
                    });
}
