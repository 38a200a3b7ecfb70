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
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "core/random.hpp"
#include "lessons/common/lesson.hpp"
#include "lessons/common/progress.hpp"
#include "lessons/common/figure.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/tasks.hpp"
#include "nn/data/vocab.hpp"
#include "nn/metrics.hpp"
#include "nn/optim.hpp"
#include "nn/positional/positional.hpp"
#include "nn/schedule.hpp"
#include "nn/transformer/transformer.hpp"
#include "plots/plots.hpp"

namespace {

using namespace attnlab;
namespace data = attnlab::nn::data;
using lessons::fmt;
using lessons::Lesson;
using Grid = xt::xarray<double>;

// ---------------------------------------------------------------- figures

// 3.1e-15
std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

std::vector<std::string> number_labels(std::size_t n, std::size_t every) {
  std::vector<std::string> out(n);
  for (std::size_t i = 0; i < n; i += every) out[i] = std::to_string(i);
  return out;
}

// ---------------------------------------------------------------- 1. the sinusoidal table

// The frequency of dimension pair i: w_i = base^(-2i/d); its wavelength is 2 pi / w_i.
double frequency(std::size_t pair, std::size_t d, double base = 10000.0) {
  return std::pow(base, -2.0 * static_cast<double>(pair) / static_cast<double>(d));
}

// The block-diagonal rotation M_k. Block i acts on (PE(p, 2i), PE(p, 2i+1)) = (sin pw, cos pw):
//   sin((p+k)w) =  cos(kw) sin(pw) + sin(kw) cos(pw)
//   cos((p+k)w) = -sin(kw) sin(pw) + cos(kw) cos(pw)
// Nothing in M_k depends on p, so "k places further" is one fixed linear map at every position.
Grid rotation_for_offset(std::size_t k, std::size_t d) {
  Grid m = xt::zeros<double>({d, d});
  for (std::size_t i = 0; 2 * i < d; ++i) {
    const double angle = static_cast<double>(k) * frequency(i, d);
    const double c = std::cos(angle), s = std::sin(angle);
    m(2 * i, 2 * i) = c;
    m(2 * i, 2 * i + 1) = s;
    m(2 * i + 1, 2 * i) = -s;
    m(2 * i + 1, 2 * i + 1) = c;
  }
  return m;
}

// max over p and every dimension of |PE(p+k) - M_k PE(p)|, for p = 0 .. rows(table) - k - 1.
double rotation_error(const Grid& table, std::size_t k) {
  const std::size_t P = table.shape()[0], d = table.shape()[1];
  const Grid m = rotation_for_offset(k, d);
  double worst = 0.0;
  for (std::size_t p = 0; p + k < P; ++p)
    for (std::size_t r = 0; r < d; ++r) {
      double moved = 0.0;
      for (std::size_t c = 0; c < d; ++c) moved += m(r, c) * table(p, c);
      worst = std::max(worst, std::abs(table(p + k, r) - moved));
    }
  return worst;
}

// S(p, q) = PE(p) . PE(q) = sum_i cos((p - q) w_i): a function of p - q alone (a Toeplitz matrix).
Grid position_similarity(const Grid& table) {
  const std::size_t P = table.shape()[0], d = table.shape()[1];
  Grid s = xt::zeros<double>({P, P});
  for (std::size_t p = 0; p < P; ++p)
    for (std::size_t q = 0; q < P; ++q) {
      double dot = 0.0;
      for (std::size_t c = 0; c < d; ++c) dot += table(p, c) * table(q, c);
      s(p, q) = dot;
    }
  return s;
}

// max |S(p, q) - S(p+1, q+1)|: zero (to rounding) when similarity depends on the offset only.
double toeplitz_error(const Grid& s) {
  double worst = 0.0;
  for (std::size_t p = 0; p + 1 < s.shape()[0]; ++p)
    for (std::size_t q = 0; q + 1 < s.shape()[1]; ++q)
      worst = std::max(worst, std::abs(s(p, q) - s(p + 1, q + 1)));
  return worst;
}

void draw_table_heatmap(Lesson& L, const Grid& table) {
  const std::size_t P = table.shape()[0], d = table.shape()[1];
  plots::Figure fig(1500, 1400);
  fig.title("Sinusoidal positional encoding PE(p, j)");
  plots::HeatmapOptions o;
  o.cmap = plots::Colormap::rdbu();
  o.vmin = -1.0;
  o.vmax = 1.0;
  o.x_labels = number_labels(d, 8);
  o.y_labels = number_labels(P, 8);
  o.colorbar_label = "PE value";
  plots::heatmap(fig.panel(0, 0).xlabel("Encoding dimension j").ylabel("Position p"), table, o);
  save_figure(L, fig, "pe_table",
              "The table: rows are positions, columns are dimensions. Left columns oscillate fast, "
              "right columns barely move; each row is a distinct code.");
}

void draw_table_curves(Lesson& L, const Grid& table) {
  const std::size_t P = table.shape()[0], d = table.shape()[1];
  std::vector<plots::Series> series;
  for (std::size_t pair : {0u, 1u, 2u, 4u, 8u}) {
    const double wavelength = 2.0 * M_PI / frequency(pair, d);
    Grid column = xt::view(table, xt::all(), 2 * pair);
    series.emplace_back("dim " + std::to_string(2 * pair) + " (sin, wavelength " + fmt(wavelength, 1) + ")",
                        Grid(xt::arange<double>(static_cast<double>(P))), column);
  }
  plots::Figure fig(1800, 950);
  fig.title("Each dimension pair is a sine of its own frequency");
  plots::LineOptions o;
  o.ymin = -1.15;
  o.ymax = 1.15;
  plots::line_plot(fig.panel(0, 0).xlabel("Position p").ylabel("PE(p, j)"), series, o);
  save_figure(L, fig, "pe_curves",
              "Even dimensions 2i over the positions: the wavelength 2 pi 10000^(2i/d) grows "
              "geometrically, like the digits of a (smooth) counter.");
}

void draw_similarity(Lesson& L, const Grid& s) {
  const std::size_t P = s.shape()[0];
  plots::Figure fig(1500, 1400);
  fig.title("Dot product PE(p) . PE(q) between positions");
  plots::HeatmapOptions o;
  o.x_labels = number_labels(P, 8);
  o.y_labels = number_labels(P, 8);
  o.colorbar_label = "PE(p) . PE(q)";
  plots::heatmap(fig.panel(0, 0).xlabel("Position q").ylabel("Position p"), s, o);
  save_figure(L, fig, "pe_similarity",
              "Similarity of two positions: largest on the diagonal (d/2), falling off with |p - q|, "
              "and the same along every diagonal -- it depends on the offset p - q only.");
}

// ---------------------------------------------------------------- 2. the task and its data

constexpr char kFiller = '_';

// The target of the shift task: position i holds the input's token i - k; the first k positions,
// which have no such token, hold the filler.
std::string shift_right(const std::string& s, std::size_t k) {
  if (k >= s.size()) return std::string(s.size(), kFiller);
  return std::string(k, kFiller) + s.substr(0, s.size() - k);
}

struct TokenSet {
  IndexArray ids, targets;  // (N, L) each: every sequence has the same length, so no padding
  std::size_t size() const { return ids.shape()[0]; }
  std::size_t length() const { return ids.shape()[1]; }
};

// Distinct random digit strings of one length (make_seq_task's copy task gives distinct sources),
// with the shifted copy as the per-token tags.
std::vector<data::Pair> make_shift_pairs(std::size_t n, std::size_t length, std::size_t k,
                                         Generator& gen) {
  data::SeqTaskConfig cfg;
  cfg.task = data::SeqTask::copy;
  cfg.min_len = cfg.max_len = length;
  std::vector<data::Pair> pairs = data::make_seq_task(cfg, n, gen);
  for (auto& p : pairs) p.target = shift_right(p.source, k);
  return pairs;
}

TokenSet encode_shift_set(const std::vector<data::Pair>& pairs, const data::Vocab& vocab) {
  const std::size_t n = pairs.size(), len = pairs.front().source.size();
  TokenSet out{IndexArray::from_shape({n, len}), IndexArray::from_shape({n, len})};
  for (std::size_t r = 0; r < n; ++r) {
    const auto src = vocab.encode(pairs[r].source, data::Tokenizer::chars);
    const auto tgt = vocab.encode(pairs[r].target, data::Tokenizer::chars);
    for (std::size_t c = 0; c < len; ++c) {
      out.ids(r, c) = src[c];
      out.targets(r, c) = tgt[c];
    }
  }
  return out;
}

TokenSet rows_of(const TokenSet& s, const std::vector<std::size_t>& rows) {
  return {data::take_rows(s.ids, rows), data::take_rows(s.targets, rows)};
}

// What a model that sees only the bag of tokens (and its own token) could do with a simple rule:
// predict the most frequent token among the other positions (lowest id on ties).
double bag_rule_accuracy(const TokenSet& s, std::size_t vocab_size) {
  std::size_t hits = 0;
  for (std::size_t r = 0; r < s.size(); ++r) {
    std::vector<int> count(vocab_size, 0);
    for (std::size_t c = 0; c < s.length(); ++c) ++count[static_cast<std::size_t>(s.ids(r, c))];
    for (std::size_t c = 0; c < s.length(); ++c) {
      std::vector<int> others = count;
      --others[static_cast<std::size_t>(s.ids(r, c))];
      const auto guess = std::max_element(others.begin(), others.end()) - others.begin();
      hits += (guess == s.targets(r, c));
    }
  }
  return static_cast<double>(hits) / static_cast<double>(s.size() * s.length());
}

// ---------------------------------------------------------------- 3. models, training, scores

struct ModelSize {
  std::size_t d_model, heads, d_ff, layers;
};

struct TrainPlan {
  std::size_t epochs, batch;
  double peak_lr;
};

std::unique_ptr<nn::EncoderModel<float>> make_model(nn::Positional method, const ModelSize& size,
                                                    std::size_t vocab, std::size_t max_length,
                                                    std::uint64_t seed) {
  nn::EncoderModelConfig c;
  c.vocab = vocab;
  c.num_classes = vocab;  // a tag is a token (or the filler)
  c.num_layers = size.layers;
  c.max_length = max_length;  // the learned table has exactly the training positions
  c.layer = nn::LayerConfig{size.d_model, size.heads, size.d_ff, /*dropout=*/0.0,
                            /*norm_first=*/true, nn::Activation::ReLU, 1e-5};
  c.positional = method;
  c.pooling = nn::Pooling::None;  // per-token tagging
  c.pad_id = data::Vocab::pad;
  Generator gen(seed);  // every method starts from its own seed-determined weights
  return std::make_unique<nn::EncoderModel<float>>(c, gen);
}

// Adam with a warm-up + cosine schedule and gradient clipping; returns the mean loss per epoch.
std::vector<double> train_model(nn::EncoderModel<float>& model, const TokenSet& train,
                                const TrainPlan& plan, std::uint64_t seed, const std::string& name) {
  model.train();
  nn::Adam<float> opt(model.parameters(), plan.peak_lr);
  const long steps_per_epoch = static_cast<long>((train.size() + plan.batch - 1) / plan.batch);
  const long total = steps_per_epoch * static_cast<long>(plan.epochs);
  const nn::Schedule lr = nn::warmup_cosine_lr(plan.peak_lr, std::max(1L, total / 20), total,
                                               plan.peak_lr / 20);
  lessons::Progress bar(static_cast<std::size_t>(total), name);
  std::vector<double> curve;
  for (std::size_t e = 0; e < plan.epochs; ++e) {
    double sum = 0.0;
    for (const auto& rows : data::batch_slices(data::epoch_order(train.size(), seed, e), plan.batch)) {
      const TokenSet b = rows_of(train, rows);
      Tensor<float> loss = cross_entropy(model.forward(b.ids), b.targets);
      opt.zero_grad();
      loss.backward();
      nn::clip_grad_norm(opt.params(), 1.0);
      opt.set_lr(lr(opt.steps() + 1));
      opt.step();
      sum += loss.item();
      bar.step(loss.item());
    }
    curve.push_back(sum / static_cast<double>(steps_per_epoch));
  }
  bar.finish();
  return curve;
}

struct Scores {
  double token = 0.0, exact = 0.0;
  std::vector<double> by_position;  // per-token accuracy at each position
};

// Held-out per-token accuracy, exact match (every token of the string right), and accuracy per
// position.
Scores evaluate(nn::EncoderModel<float>& model, const TokenSet& test, std::size_t batch) {
  NoGrad no_grad;
  model.eval();
  IndexArray predictions = IndexArray::from_shape(test.ids.shape());
  std::vector<std::size_t> all(test.size());
  std::iota(all.begin(), all.end(), 0);
  for (const auto& rows : data::batch_slices(all, batch)) {
    const IndexArray p = nn::argmax_last(model.forward(data::take_rows(test.ids, rows)).value());
    for (std::size_t i = 0; i < rows.size(); ++i)
      xt::view(predictions, rows[i], xt::all()) = xt::view(p, i, xt::all());
  }
  Scores s;
  s.token = nn::accuracy(predictions, test.targets);
  s.exact = nn::exact_match_rows(predictions, test.targets);
  for (std::size_t c = 0; c < test.length(); ++c)
    s.by_position.push_back(nn::accuracy(IndexArray(xt::view(predictions, xt::all(), c)),
                                         IndexArray(xt::view(test.targets, xt::all(), c))));
  return s;
}

// ---------------------------------------------------------------- 4. looking inside

// max over positions i and classes of |f(pi x)[i] - f(x)[pi(i)]|: zero (to rounding) exactly when
// the model treats its input as a bag, whatever its weights.
double permutation_error(nn::EncoderModel<float>& model, const IndexArray& one,
                         const std::vector<std::size_t>& perm) {
  NoGrad no_grad;
  model.eval();
  IndexArray shuffled = one;
  for (std::size_t i = 0; i < perm.size(); ++i) shuffled(0, i) = one(0, perm[i]);
  const Array<float> a = model.forward(one).value(), b = model.forward(shuffled).value();
  double worst = 0.0;
  for (std::size_t i = 0; i < perm.size(); ++i)
    for (std::size_t c = 0; c < a.shape()[2]; ++c)
      worst = std::max(worst, static_cast<double>(std::abs(b(0, i, c) - a(0, perm[i], c))));
  return worst;
}

struct HeadView {
  std::size_t layer = 0, head = 0;
  double offset_mass = 0.0;  // mean weight on the key k places left of the query
  Grid weights;              // (L, L): rows queries, columns keys
};

// The attention head that does the job: the (layer, head) putting the most weight on key i - k
// for query i, on one example.
HeadView shift_head(nn::EncoderModel<float>& model, const IndexArray& one, std::size_t k) {
  NoGrad no_grad;
  model.eval();
  model.forward(one);
  const auto layers = model.attention_weights();
  const std::size_t len = one.shape()[1];
  HeadView best;
  best.offset_mass = -1.0;
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const Array<float>& w = layers[l].value();  // (1, h, L, L)
    for (std::size_t h = 0; h < w.shape()[1]; ++h) {
      double mass = 0.0;
      for (std::size_t i = k; i < len; ++i) mass += w(0, h, i, i - k);
      mass /= static_cast<double>(len - k);
      if (mass > best.offset_mass) {
        best = {l, h, mass, Grid(xt::view(xt::cast<double>(w), 0, h, xt::all(), xt::all()))};
      }
    }
  }
  return best;
}

std::vector<std::string> token_labels(const IndexArray& one, const data::Vocab& vocab) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < one.shape()[1]; ++i) out.push_back(vocab.token(one(0, i)));
  return out;
}

// ---------------------------------------------------------------- the methods

struct Method {
  nn::Positional id;
  std::string name, idea;
};

std::vector<Method> methods() {
  return {
      {nn::Positional::None, "none", "nothing: attention sees a bag of tokens"},
      {nn::Positional::Sinusoidal, "sinusoidal", "x + PE(p), the fixed table of section 1"},
      {nn::Positional::Learned, "learned", "x + W[p], one trained vector per position (max_length rows)"},
      {nn::Positional::RelativeBias, "relative", "a trained bias b_h(bucket(j - i)) added to every score (T5)"},
      {nn::Positional::Rotary, "rope", "q and k rotated by p * theta_i, so q.k depends on j - i only (RoPE)"},
      {nn::Positional::ALiBi, "alibi", "a fixed bias -m_h abs(i - j) added to the scores (ALiBi)"},
  };
}

// One method's model, its training curve and its held-out scores.
struct Trained {
  Method method;
  std::unique_ptr<nn::EncoderModel<float>> model;
  std::vector<double> curve;
  Scores at_train, at_long;
  bool has_long = false;   // false when the model cannot run at the long length
  std::string long_note;   // why not (the error it raised)
};

// The grouped bar chart: per-token accuracy and exact match, at the training length (left) and at
// twice it (right, without the methods that cannot run there).
void draw_accuracy_bars(Lesson& L, const std::vector<Trained>& runs, std::size_t train_len,
                        std::size_t long_len, std::size_t k, double bag) {
  const std::string Ls = std::to_string(train_len), LLs = std::to_string(long_len);
  plots::Figure fig(2200, 950, 1, 2);
  fig.title("Held-out accuracy by positional method (shift-by-" + std::to_string(k) + " task)");
  std::vector<std::string> names_all, names_long;
  Grid at_train = xt::zeros<double>({std::size_t(2), runs.size()});
  std::vector<double> tok_long, ex_long;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    names_all.push_back(runs[i].method.name);
    at_train(0, i) = runs[i].at_train.token;
    at_train(1, i) = runs[i].at_train.exact;
    if (runs[i].has_long) {
      names_long.push_back(runs[i].method.name);
      tok_long.push_back(runs[i].at_long.token);
      ex_long.push_back(runs[i].at_long.exact);
    }
  }
  Grid at_long = xt::zeros<double>({std::size_t(2), names_long.size()});
  for (std::size_t i = 0; i < names_long.size(); ++i) at_long(0, i) = tok_long[i], at_long(1, i) = ex_long[i];
  plots::BarOptions o;
  o.series = {"per-token accuracy", "exact match"};
  o.value_labels = true;
  o.ymin = 0.0;
  o.ymax = 1.1;
  o.categories = names_all;
  plots::bar_chart(fig.panel(0, 0).title("Training length L = " + Ls).ylabel("Accuracy"), at_train, o);
  o.categories = names_long;
  plots::bar_chart(fig.panel(0, 1).title("Twice the length, L = " + LLs + " (learned: n/a)").ylabel("Accuracy"),
                   at_long, o);
  save_figure(L, fig, "accuracy_by_method",
              "Per-token accuracy and exact match on held-out strings, at the training length (left) "
              "and at twice it (right). Bag-of-tokens rule: " + fmt(bag, 2) + "; chance: 0.09.");
}

// Accuracy at each position of the long strings: where extrapolation breaks.
void draw_accuracy_by_position(Lesson& L, const std::vector<Trained>& runs, std::size_t train_len,
                               std::size_t long_len) {
  const std::string LLs = std::to_string(long_len);
  plots::Figure fig(1800, 950);
  fig.title("Where extrapolation breaks: accuracy per position at L = " + LLs);
  std::vector<plots::Series> series;
  const Grid x = xt::arange<double>(static_cast<double>(long_len));
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].has_long) continue;
    const auto& acc = runs[i].at_long.by_position;
    series.emplace_back(runs[i].method.name, x, Grid(xt::adapt(acc, {acc.size()})));
    series.back().color = plots::series_color(i);
  }
  plots::Series edge("last trained position", Grid{train_len - 0.5, train_len - 0.5}, Grid{0.0, 1.0});
  edge.color = plots::Color{0.5, 0.5, 0.5};
  edge.dashed = true;
  series.push_back(edge);
  plots::LineOptions o;
  o.markers = true;
  o.ymin = 0.0;
  o.ymax = 1.05;
  plots::line_plot(fig.panel(0, 0).xlabel("Position in the string").ylabel("Per-token accuracy"), series, o);
  save_figure(L, fig, "accuracy_by_position",
              "Held-out per-token accuracy at each position of length-" + LLs + " strings. A dip is "
              "where queries meet what training never showed them: new positions for the sinusoidal "
              "model (right of the dashed line), new offsets for the relative methods (a query has "
              "keys up to " + std::to_string(long_len - 1) + " places away, training had at most " +
              std::to_string(train_len - 1) + ").");
}

void draw_training_loss(Lesson& L, const std::vector<Trained>& runs) {
  plots::Figure fig(1800, 950);
  fig.title("Training loss (cross-entropy per token)");
  std::vector<plots::Series> series;
  for (const Trained& t : runs) {
    Grid x = xt::arange<double>(1.0, static_cast<double>(t.curve.size()) + 1.0);
    series.emplace_back(t.method.name, x, Grid(xt::adapt(t.curve, {t.curve.size()})));
    series.back().color = plots::series_color(series.size() - 1);
  }
  plots::LineOptions o;
  o.markers = true;
  plots::line_plot(fig.panel(0, 0).xlabel("Epoch").ylabel("Mean loss"), series, o);
  save_figure(L, fig, "training_loss",
              "Mean training loss per epoch; the same data, steps and schedule for every method.");
}

// The no-position model's head next to the sinusoidal model's, on one string.
void draw_none_vs_sinusoidal(Lesson& L, const HeadView& none_view, const HeadView& sin_view,
                             const std::vector<std::string>& labels, std::size_t k) {
  plots::Figure fig(2400, 1000, 1, 2);
  fig.title("Attention weights on one held-out string (rows: queries, columns: keys)");
  plots::HeatmapOptions o;
  o.x_labels = labels;
  o.y_labels = labels;
  o.vmin = 0.0;
  o.vmax = 1.0;
  o.colorbar = false;
  plots::heatmap(fig.panel(0, 0)
                     .title("no positions: layer " + std::to_string(none_view.layer + 1) + ", head " +
                            std::to_string(none_view.head + 1))
                     .xlabel("Keys")
                     .ylabel("Queries"),
                 none_view.weights, o);
  plots::heatmap(fig.panel(0, 1)
                     .title("sinusoidal: layer " + std::to_string(sin_view.layer + 1) + ", head " +
                            std::to_string(sin_view.head + 1))
                     .xlabel("Keys")
                     .ylabel("Queries"),
                 sin_view.weights, o);
  fig.shared_colorbar({plots::Colormap::viridis(), 0.0, 1.0, "attention weight"});
  save_figure(L, fig, "attention_none_vs_sinusoidal",
              "Left: without positions, equal query tokens have identical rows and equal key tokens "
              "identical columns -- the weights depend on the tokens, not on where they are. Right: "
              "the sinusoidal model's head with the most weight on the key " + std::to_string(k) +
              " places to the left of each query (a band below the diagonal).");
}

}  // namespace

int main(int argc, char** argv) {
  Lesson L({"05_positional_encoding", "Positional encoding: putting order back into attention",
            "Sinusoidal table and its rotation property; six positional methods on a shift task"},
           argc, argv);
  const bool quick = L.quick();

  // ================================================================ 1
  L.section("1. The sinusoidal encoding");
  const std::size_t d_table = 64, P = 64;
  L.say("Attention compares every query with every key by content alone. Nothing in softmax(q k^T) v "
        "says which key came first, so we add to each token embedding a vector that depends on its "
        "position p. The original Transformer uses a fixed table: PE(p, 2i) = sin(p w_i), "
        "PE(p, 2i+1) = cos(p w_i), w_i = 10000^(-2i/d). Each pair of dimensions is a clock turning at "
        "its own speed, from one turn per 2 pi = 6.3 positions (i = 0) to nearly one per "
        "2 pi 10000 = 62,832 positions (the last pair): together they give every position a distinct, bounded code, for any length.");
  const Grid table = nn::sinusoidal_table<double>(P, d_table);
  std::vector<std::vector<double>> slice;
  for (std::size_t p = 0; p < 6; ++p) {
    slice.emplace_back();
    for (std::size_t j = 0; j < 8; ++j) slice.back().push_back(table(p, j));
  }
  std::vector<std::string> dims, poss;
  for (std::size_t j = 0; j < 8; ++j) dims.push_back("j=" + std::to_string(j));
  for (std::size_t p = 0; p < 6; ++p) poss.push_back("p=" + std::to_string(p));
  L.say("The first positions and dimensions of the table (d = " + std::to_string(d_table) + "): column 0 "
        "is sin(p), column 1 cos(p); columns 2, 3 turn at w_1 = 10000^(-2/d) = " +
        fmt(frequency(1, d_table), 2) + " radian per position, and so on.");
  L.matrix("PE[0:6, 0:8]", slice, poss, dims);
  draw_table_heatmap(L, table);
  draw_table_curves(L, table);

  L.say("Why sines and cosines in pairs? Because then moving k positions is a rotation of each pair by "
        "the angle k w_i, whatever the starting position: PE(p + k) = M_k PE(p), with M_k "
        "block-diagonal, block i = [[cos k w_i, sin k w_i], [-sin k w_i, cos k w_i]]. A linear layer "
        "(the query or key projection) can therefore express 'the token k places away' with one fixed "
        "matrix. We build M_k for several offsets and measure max |PE(p + k) - M_k PE(p)| over every "
        "position p < 512 and every dimension, in double precision.");
  const std::vector<std::size_t> offsets = {1, 2, 5, 17, 100, 250};
  const Grid long_table = nn::sinusoidal_table<double>(512 + 250, d_table);
  std::vector<std::vector<std::string>> rot_rows;
  double rotation_worst = 0.0;
  for (std::size_t k : offsets) {
    const double err = rotation_error(xt::view(long_table, xt::range(0, 512 + k), xt::all()), k);
    rotation_worst = std::max(rotation_worst, err);
    rot_rows.push_back({std::to_string(k), sci(err)});
  }
  L.table({"offset k", "max over p < 512 of abs(PE(p+k) - M_k PE(p))"}, rot_rows);
  L.say("Rounding error only: the identity is exact. (Not 1e-16: positions up to 761 mean angles up "
        "to 761 radians, and the sine of a large angle carries a rounding error proportional to it.)");
  L.metric("rotation_max_error", rotation_worst);

  const Grid similarity = position_similarity(table);
  const double toeplitz = toeplitz_error(similarity);
  L.say("A consequence: PE(p) . PE(q) = sum_i [sin pw sin qw + cos pw cos qw] = sum_i cos((p - q) w_i) "
        "depends on the offset p - q only. Measured on the table: max |S(p, q) - S(p+1, q+1)| = " +
        sci(toeplitz) + ". The similarity peaks at p = q (d/2 = 32) and falls off with "
        "distance, so nearby positions have similar codes; not to zero, because the slow dimensions "
        "barely change over 64 positions.");
  L.metric("similarity_toeplitz_error", toeplitz);
  draw_similarity(L, similarity);

  // ================================================================ 2
  L.section("2. Without positions, attention is permutation-equivariant");
  L.say("Shuffle the input tokens with a permutation pi. The embeddings are shuffled the same way; the "
        "scores q_i . k_j are the same numbers in shuffled rows and columns; softmax works row by row; "
        "the weighted sum over keys does not care about their order; layer norm and the feed-forward "
        "act on one token at a time. So every layer, and the whole encoder, satisfies "
        "f(pi x) = pi f(x): each token's output depends on its own token and on the bag of all the "
        "others, never on where anything is. Two equal tokens get equal outputs. We check it on "
        "freshly initialized encoders (the property holds for any weights), on a random permutation "
        "of a random digit string.");

  // The task and its sizes, needed from here on.
  const std::size_t k = 3;
  const std::size_t train_len = 16, long_len = 2 * train_len;
  const std::size_t n_train = quick ? 1536 : 6144, n_test = quick ? 256 : 1024;
  const ModelSize size = quick ? ModelSize{32, 4, 64, 2} : ModelSize{64, 4, 128, 2};
  const TrainPlan plan{static_cast<std::size_t>(L.epochs(10, 4)), 32, quick ? 1e-2 : 2e-3};
  data::Vocab vocab;
  vocab.add(std::string(1, kFiller));
  for (char c : std::string("0123456789")) vocab.add(std::string(1, c));

  Generator data_gen(L.seed());
  std::vector<data::Pair> pairs = make_shift_pairs(n_train + n_test, train_len, k, data_gen);
  const TokenSet train = encode_shift_set(std::vector<data::Pair>(pairs.begin(), pairs.begin() + n_train), vocab);
  const TokenSet test = encode_shift_set(std::vector<data::Pair>(pairs.begin() + n_train, pairs.end()), vocab);
  const TokenSet test_long = encode_shift_set(make_shift_pairs(n_test, long_len, k, data_gen), vocab);
  const IndexArray example = xt::view(test.ids, xt::range(0, 1), xt::all());

  std::vector<std::size_t> perm(train_len);
  std::iota(perm.begin(), perm.end(), 0);
  shuffle(perm, data_gen);
  std::vector<std::vector<std::string>> perm_rows;
  double none_perm_error = 0.0;
  for (const Method& m : methods()) {
    auto model = make_model(m.id, size, vocab.size(), train_len, L.seed() + 1000);
    const double err = permutation_error(*model, example, perm);
    if (m.id == nn::Positional::None) none_perm_error = err;
    perm_rows.push_back({m.name, fmt(err, 7)});
  }
  L.table({"positional method", "max abs(f(pi x) - pi f(x)), logits, untrained"}, perm_rows);
  L.say("Only the model without positions is equivariant (the error is float rounding); every "
        "positional method breaks the symmetry, which is the whole point of it.");
  L.metric("none_permutation_error", none_perm_error);

  // ================================================================ 3
  L.section("3. A task only position can solve: copy the token " + std::to_string(k) +
            " places to the left");
  L.say("Input: a random string of " + std::to_string(train_len) + " digits. Tag at position i: the input "
        "token at position i - " + std::to_string(k) + ", or the filler '_' for the first " +
        std::to_string(k) + " positions. It is per-token tagging, so the encoder-only model applies "
        "(a linear head on every output vector). Example:");
  L.verbatim("input   " + pairs[n_train].source + "\ntarget  " + pairs[n_train].target);
  const double bag = bag_rule_accuracy(test, vocab.size());
  L.say("Without positions the model cannot know which token sits " + std::to_string(k) +
        " places to the left: the target is just one of the other tokens of the bag. The best it can "
        "do is guess from the bag, e.g. 'the most frequent other token', which scores " + fmt(bag, 3) +
        " per token on the held-out set (chance over the 11 tags: " + fmt(1.0 / 11, 3) + "). With "
        "positions, one attention head looking at offset -" + std::to_string(k) + " solves it exactly.");
  L.say("Data: " + std::to_string(n_train) + " training strings and " + std::to_string(n_test) +
        " held-out strings of length " + std::to_string(train_len) + " (all distinct), plus " +
        std::to_string(n_test) + " held-out strings of length " + std::to_string(long_len) +
        " to test extrapolation.");
  L.metric("bag_rule_accuracy", bag);
  L.config("task", "shift right by k, per-token tags");
  L.config("k", static_cast<int>(k));
  L.config("train_length", static_cast<int>(train_len));
  L.config("n_train", static_cast<int>(n_train));
  L.config("n_test", static_cast<int>(n_test));
  L.config("d_model", static_cast<int>(size.d_model));
  L.config("heads", static_cast<int>(size.heads));
  L.config("d_ff", static_cast<int>(size.d_ff));
  L.config("layers", static_cast<int>(size.layers));
  L.config("epochs", static_cast<int>(plan.epochs));
  L.config("batch", static_cast<int>(plan.batch));
  L.config("peak_lr", plan.peak_lr);

  // ================================================================ 4
  L.section("4. One encoder, six ways to know position");
  L.say("The same pre-norm encoder (" + std::to_string(size.layers) + " layers, d = " +
        std::to_string(size.d_model) + ", " + std::to_string(size.heads) + " heads, feed-forward " +
        std::to_string(size.d_ff) + ", no dropout), the same data, the same " +
        std::to_string(plan.epochs) + " epochs of Adam (batch " + std::to_string(plan.batch) +
        ", warm-up then cosine decay from " + fmt(plan.peak_lr, 4) + "); only the positional method differs:");
  std::vector<std::vector<std::string>> idea_rows;
  for (const Method& m : methods()) idea_rows.push_back({m.name, m.idea});
  L.table({"method", "what it adds"}, idea_rows);
  L.say("Sinusoidal and learned encodings act once, on the embeddings (absolute positions). Relative "
        "bias, RoPE and ALiBi act inside every attention call and only ever see the offset j - i "
        "between query and key.");

  std::vector<Trained> runs;
  for (const Method& m : methods()) {
    Trained t{m, make_model(m.id, size, vocab.size(), train_len, L.seed() + 1000), {}, {}, {}, false, ""};
    const auto start = std::chrono::steady_clock::now();
    t.curve = train_model(*t.model, train, plan, L.seed() + 7, m.name);
    L.timing("train_seconds_" + m.name,
             std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    t.at_train = evaluate(*t.model, test, 64);
    try {
      t.at_long = evaluate(*t.model, test_long, 64);
      t.has_long = true;
    } catch (const ShapeError& e) {
      t.long_note = e.what();
    }
    runs.push_back(std::move(t));
  }

  std::vector<std::vector<std::string>> rows;
  double none_token = 0.0, best_token = 0.0;
  std::string best_name;
  for (const Trained& t : runs) {
    rows.push_back({t.method.name, fmt(t.at_train.token, 3), fmt(t.at_train.exact, 3),
                    t.has_long ? fmt(t.at_long.token, 3) : "n/a", t.has_long ? fmt(t.at_long.exact, 3) : "n/a",
                    fmt(t.curve.back(), 4)});
    L.metric("token_accuracy_" + t.method.name + "_L" + std::to_string(train_len), t.at_train.token);
    L.metric("exact_match_" + t.method.name + "_L" + std::to_string(train_len), t.at_train.exact);
    if (t.has_long) {
      L.metric("token_accuracy_" + t.method.name + "_L" + std::to_string(long_len), t.at_long.token);
      L.metric("exact_match_" + t.method.name + "_L" + std::to_string(long_len), t.at_long.exact);
    }
    if (t.method.id == nn::Positional::None) none_token = t.at_train.token;
    else if (t.at_train.token > best_token) best_token = t.at_train.token, best_name = t.method.name;
  }
  const std::string Ls = std::to_string(train_len), LLs = std::to_string(long_len);
  L.table({"method", "token acc L=" + Ls, "exact L=" + Ls, "token acc L=" + LLs, "exact L=" + LLs,
           "final train loss"},
          rows);
  L.metric("accuracy_gain_best_over_none", best_token - none_token);
  auto run_of = [&runs](nn::Positional id) -> const Trained& {
    return *std::find_if(runs.begin(), runs.end(), [id](const Trained& t) { return t.method.id == id; });
  };
  std::string solved;
  for (const Trained& t : runs)
    if (t.at_train.token >= 0.99) solved += (solved.empty() ? "" : ", ") + t.method.name;
  L.say("Held-out accuracy. Without positions the model scores " + fmt(none_token, 3) +
        " per token, no better than the bag-of-tokens rule (" + fmt(bag, 3) + "), as equivariance says "
        "it must. " + (solved.empty() ? std::string("No method reaches 0.99 per token at this budget")
                                       : "Solved (at least 0.99 per token): " + solved) +
        "; the best positional method (" + best_name + ") reaches " + fmt(best_token, 3) +
        ", a gain of " + fmt(best_token - none_token, 3) + " over no positions.");
  const Trained& learned = run_of(nn::Positional::Learned);
  if (learned.at_train.token < 0.9)
    L.say("The learned table lags here: its rows start near zero (std 0.02, against token vectors of "
          "unit scale) and each of the " + std::to_string(train_len) + " rows must be learned from data; "
          "at this budget it has reached " + fmt(learned.at_train.token, 3) + ". The sinusoidal table "
          "needs no training: its codes are there from the first step.");

  std::vector<std::size_t> reversal(train_len);
  for (std::size_t i = 0; i < train_len; ++i) reversal[i] = train_len - 1 - i;
  const Trained& alibi = run_of(nn::Positional::ALiBi);
  const double alibi_mirror = permutation_error(*alibi.model, example, reversal);
  L.metric("alibi_reversal_error", alibi_mirror);
  L.say("ALiBi deserves a remark. Its bias -m_h |i - j| is symmetric: in an encoder (no causal mask) the "
        "key " + std::to_string(k) + " places to the left and the key " + std::to_string(k) + " places to "
        "the right get the same bias, and nothing else tells them apart, so reversing the input reverses "
        "the output exactly (measured on the trained model: max |f(rev x) - rev f(x)| = " + sci(alibi_mirror) +
        ", float rounding). Hence the prediction at position i of x is also the prediction at position "
        "L-1-i of the reversed string, where the right answer is x[i+" + std::to_string(k) + "] instead of x[i-" +
        std::to_string(k) + "]: both can be right only when those two tokens agree (one time in ten), so "
        "ALiBi cannot exceed about (1 + 0.1) / 2 = 0.55 per token on this task. It scores " +
        fmt(alibi.at_train.token, 3) + ". ALiBi was designed for causal language models, where the mask "
        "supplies the direction.");

  // Extrapolation
  L.say("Extrapolation means running the trained model on sequences longer than any it saw: here "
        "length " + LLs + ", twice the training length. The learned table has rows for positions 0.." +
        std::to_string(train_len - 1) + " only; we chose to keep it that size (rather than a bigger table "
        "whose extra rows would never be trained and stay at their random initialization) and report n/a. "
        "Asking it for a longer sequence fails loudly:");
  for (const Trained& t : runs)
    if (!t.has_long) L.verbatim(t.method.name + ": " + t.long_note);
  auto mean_of = [](const std::vector<double>& v, std::size_t from, std::size_t to) {
    return std::accumulate(v.begin() + from, v.begin() + to, 0.0) / static_cast<double>(to - from);
  };
  std::vector<std::vector<std::string>> ext_rows;
  for (const Trained& t : runs) {
    if (!t.has_long) {
      ext_rows.push_back({t.method.name, "n/a", "n/a", "n/a"});
      continue;
    }
    const auto& a = t.at_long.by_position;
    ext_rows.push_back({t.method.name, fmt(mean_of(a, 0, train_len), 3),
                        fmt(mean_of(a, train_len, long_len), 3), fmt(t.at_long.exact, 3)});
  }
  L.table({"method", "token acc, positions 0.." + std::to_string(train_len - 1),
           "token acc, positions " + Ls + ".." + std::to_string(long_len - 1), "exact match"},
          ext_rows);
  const Trained& sinus = run_of(nn::Positional::Sinusoidal);
  std::vector<std::size_t> seen, unseen;  // T5 buckets of the offsets at each length
  for (long r = -static_cast<long>(long_len) + 1; r < static_cast<long>(long_len); ++r) {
    const std::size_t b = nn::relative_position_bucket(r, 32, 128, true);  // PositionalScheme's T5 settings
    auto& into = std::abs(r) < static_cast<long>(train_len) ? seen : unseen;
    if (std::find(into.begin(), into.end(), b) == into.end()) into.push_back(b);
  }
  std::sort(unseen.begin(), unseen.end());
  std::string new_buckets;
  for (std::size_t b : unseen)
    if (std::find(seen.begin(), seen.end(), b) == seen.end())
      new_buckets += (new_buckets.empty() ? "" : ", ") + std::to_string(b);
  L.say("On the long strings (table above, accuracy on held-out length-" + LLs + " strings) the "
        "sinusoidal model scores " + fmt(mean_of(sinus.at_long.by_position, 0, train_len), 3) +
        " on positions 0.." + std::to_string(train_len - 1) + " and " +
        fmt(mean_of(sinus.at_long.by_position, train_len, long_len), 3) + " on positions " + Ls + ".." +
        std::to_string(long_len - 1) + ": the table has codes for the new positions, but the network never "
        "saw them. The relative methods never see an absolute position, but a longer string brings offsets "
        "they never saw either: |j - i| up to " + std::to_string(long_len - 1) + " instead of " +
        std::to_string(train_len - 1) + ". RoPE scores such a key with rotation angles it never trained on; "
        "the T5 table puts these offsets into buckets " + (new_buckets.empty() ? std::string("(none)") : new_buckets) +
        " that no training string reached, so those biases are still at their random initialization. Both "
        "degrade (RoPE to " + fmt(run_of(nn::Positional::Rotary).at_long.token, 3) + " per token, the T5 bias to " +
        fmt(run_of(nn::Positional::RelativeBias).at_long.token, 3) + "); exact match falls fastest, since one wrong tag among " + LLs +
        " spoils the string. ALiBi's bias is defined the same way at every distance -- why it extrapolates "
        "in language models -- but it cannot do this task in the first place.");

  draw_accuracy_bars(L, runs, train_len, long_len, k, bag);
  draw_accuracy_by_position(L, runs, train_len, long_len);
  draw_training_loss(L, runs);

  // ================================================================ 5
  L.section("5. Why the model without positions fails: its attention");
  const std::vector<std::string> labels = token_labels(example, vocab);
  std::size_t first = 0, second = 0;
  for (std::size_t i = 0; i < labels.size() && !second; ++i)
    for (std::size_t j = i + 1; j < labels.size(); ++j)
      if (labels[i] == labels[j]) {
        first = i, second = j;
        break;
      }
  std::vector<HeadView> views;
  for (Trained& t : runs) views.push_back(shift_head(*t.model, example, k));
  const HeadView& none_view = views[0];
  double same_rows = 0.0;
  for (std::size_t j = 0; j < labels.size(); ++j)
    same_rows = std::max(same_rows, std::abs(none_view.weights(first, j) - none_view.weights(second, j)));
  L.say("For one held-out string we show, for each model, the attention head that puts the most weight "
        "on the key " + std::to_string(k) + " places left of the query (rows = queries, columns = keys, "
        "labelled with their tokens). In the model without positions the weight a_ij is, within one "
        "string, a function of the two tokens only: the token '" + labels[first] + "' appears at positions " +
        std::to_string(first) + " and " + std::to_string(second) + ", and its two rows are the same "
        "(max difference " + fmt(same_rows, 7) + "), so the two get the same output although their "
        "targets differ.");
  const HeadView& sin_view = views[1];
  if (sin_view.offset_mass > 0.5)
    L.say("The sinusoidal model draws the band one would write by hand: its head " +
          std::to_string(sin_view.head + 1) + " in layer " + std::to_string(sin_view.layer + 1) + " puts " +
          fmt(sin_view.offset_mass, 2) + " of each query's weight, on average, on the key " +
          std::to_string(k) + " places to its left.");
  else
    L.say("The sinusoidal model has not formed one clean band: its best head puts only " +
          fmt(sin_view.offset_mass, 2) + " of each query's weight on the key " + std::to_string(k) +
          " places to its left, so the shift is spread over several heads or layers.");
  draw_none_vs_sinusoidal(L, none_view, sin_view, labels, k);
  {
    plots::Figure fig(2400, 1700, 2, 3);
    fig.title("The head that looks " + std::to_string(k) + " places to the left, per method");
    plots::HeatmapOptions o;
    o.x_labels = labels;
    o.y_labels = labels;
    o.vmin = 0.0;
    o.vmax = 1.0;
    o.colorbar = false;
    std::vector<std::vector<std::string>> head_rows;
    for (std::size_t i = 0; i < runs.size(); ++i) {
      const HeadView& v = views[i];
      plots::Panel& p = fig.panel(static_cast<int>(i / 3), static_cast<int>(i % 3));
      p.title(runs[i].method.name + " (L" + std::to_string(v.layer + 1) + " H" + std::to_string(v.head + 1) +
              ", " + fmt(v.offset_mass, 2) + ")");
      if (i % 3 == 0) p.ylabel("Queries");
      if (i / 3 == 1) p.xlabel("Keys");
      plots::heatmap(p, v.weights, o);
      head_rows.push_back({runs[i].method.name, std::to_string(v.layer + 1), std::to_string(v.head + 1),
                           fmt(v.offset_mass, 3)});
      L.metric("offset_attention_" + runs[i].method.name, v.offset_mass);
    }
    fig.shared_colorbar({plots::Colormap::viridis(), 0.0, 1.0, "attention weight"});
    save_figure(L, fig, "attention_by_method",
                "For each method, the head with the most weight on key i - " + std::to_string(k) +
                " (title: layer, head, mean weight on that key). A model may also spread the shift over "
                "several heads or both layers (the T5 bias often does), so a faint band does not mean failure: "
                "read it with the accuracy table.");
    L.table({"method", "layer", "head", "mean weight on key i - " + std::to_string(k)}, head_rows);
  }

  // ================================================================ 6
  L.section("6. What to remember");
  L.say("Attention alone is a set operation: permuting the input permutes the output. Positional "
        "information breaks the symmetry. Absolute methods (sinusoidal, learned) stamp each token with "
        "its position; the sinusoidal stamp turns offsets into fixed rotations, so attention can learn "
        "'k places away' as a linear map, and it exists for every length, while a learned table stops "
        "at its last row. Relative methods (T5 bias, RoPE, ALiBi) put the offset j - i directly into "
        "the attention scores, which is what a shift needs and why they carry over to longer inputs; "
        "ALiBi's bias is a symmetric distance penalty, a locality prior rather than an address.");
  return L.finish();
}
