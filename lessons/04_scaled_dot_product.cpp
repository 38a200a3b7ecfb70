// Lesson 04: scaled dot-product attention, softmax(Q K^T / sqrt(d_k)) V.
//
// Self-attention lets every token look at every other: a query q_i is compared with each key k_j
// by a dot product, the scores are turned into weights by a softmax, and the output is the
// weighted mean of the values. Why divide by sqrt(d_k)? If q and k have unit-variance entries,
// q.k is a sum of d_k unit-variance terms, so Var(q.k) = d_k. At d_k = 512 a typical score is
// +-23, the softmax collapses onto one key, and almost no gradient flows back through it. Dividing
// by sqrt(d_k) brings the variance back to 1. We compute a toy example by hand, measure the
// variance and the gradient, look at masks, then train a small model with and without the scale.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "lessons/common/lesson.hpp"
#include "lessons/common/progress.hpp"
#include "lessons/common/figure.hpp"
#include "nn/init.hpp"
#include "nn/layers.hpp"
#include "nn/metrics.hpp"
#include "nn/module.hpp"
#include "nn/optim.hpp"
#include "plots/plots.hpp"

using namespace attnlab;
using lessons::fmt;
using lessons::Lesson;
using Rows = std::vector<std::vector<double>>;

namespace {

// ---------------------------------------------------------------------------------------------
// Small helpers: printing, saving figures.

template <class T>
Rows rows_of(const Array<T>& a) {
  Rows r(a.shape()[0], std::vector<double>(a.shape()[1]));
  for (std::size_t i = 0; i < r.size(); ++i)
    for (std::size_t j = 0; j < r[i].size(); ++j) r[i][j] = double(a(i, j));
  return r;
}

std::string sci(double v, int digits = 3) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", digits, v);
  return buf;
}

double max_abs_diff(const Array<double>& a, const Array<double>& b) {
  return double(xt::amax(xt::abs(a - b))());
}

plots::HeatmapOptions weight_map(const std::vector<std::string>& keys, const std::vector<std::string>& queries,
                                 bool annotate) {
  plots::HeatmapOptions o;
  o.x_labels = keys;
  o.y_labels = queries;
  o.vmin = 0.0;
  o.vmax = 1.0;
  o.annotate = annotate;
  o.decimals = 2;
  o.colorbar_label = "attention weight";
  return o;
}

// ---------------------------------------------------------------------------------------------
// 1. "The cat sat", by hand.

void toy_self_attention(Lesson& L) {
  const std::vector<std::string> words = {"The", "cat", "sat"};
  const std::vector<std::string> dims = {"d1", "d2", "d3", "d4"};
  const Tensor<double> X(Array<double>{{0.2, 0.1, 0.3, 0.1}, {0.5, 0.3, 0.2, 0.4}, {0.3, 0.2, 0.4, 0.3}});
  const Tensor<double> W(Array<double>(0.5 * xt::eye<double>(4)));
  L.say("Three words, each a 4-dimensional embedding (one row of X). The projections are W_Q = W_K = W_V "
        "= 0.5 I, so every query, key and value is half its embedding. We compute each step with the "
        "engine's ops: Q = X W_Q, K = X W_K, V = X W_V, scores S = Q K^T / sqrt(4), weights A = softmax(S) "
        "row by row, output O = A V.");
  const Tensor<double> Q = matmul(X, W), K = matmul(X, W), V = matmul(X, W);
  const Tensor<double> S = matmul(Q, K, false, true) / std::sqrt(4.0);
  const Tensor<double> A = softmax(S, -1);
  const Tensor<double> O = matmul(A, V);
  L.matrix("Q = X W_Q", rows_of(Q.value()), words, dims, 4);
  L.matrix("K = X W_K", rows_of(K.value()), words, dims, 4);
  L.matrix("V = X W_V", rows_of(V.value()), words, dims, 4);
  L.matrix("S = Q K^T / sqrt(4)   (rows: queries, columns: keys)", rows_of(S.value()), words, words, 6);
  L.matrix("A = softmax(S)   (each row sums to 1)", rows_of(A.value()), words, words, 6);
  L.matrix("O = A V", rows_of(O.value()), words, dims, 6);

  // The course's golden values (printed to 6 decimals, so agreement is within 5e-7).
  const Array<double> gold_S{{.01875, .02875, .02875}, {.02875, .0675, .05125}, {.02875, .05125, .0475}};
  const Array<double> gold_A{{.331115, .334443, .334443}, {.326556, .339458, .333986}, {.328765, .336247, .334988}};
  const Array<double> gold_O{{.166889, .100166, .15, .133611},
                             {.167618, .100645, .149726, .134317},
                             {.167186, .100374, .149937, .133936}};
  const double dS = max_abs_diff(S.value(), gold_S), dA = max_abs_diff(A.value(), gold_A),
               dO = max_abs_diff(O.value(), gold_O);
  const auto fused = scaled_dot_product_attention(Q, K, V);  // default scale 1/sqrt(d_k) = 1/2
  const double dF = std::max(max_abs_diff(fused.output.value(), O.value()),
                             max_abs_diff(fused.weights.value(), A.value()));
  L.table({"quantity", "max abs(ours - golden)"},
          {{"scores S", sci(dS)}, {"weights A", sci(dA)}, {"output O", sci(dO)}});
  const bool agree = std::max({dS, dA, dO}) <= 5e-7;  // half a unit in the 6th decimal
  L.say(std::string(agree ? "Every entry agrees with the course's values to their printed precision (6 decimals)."
                          : "MISMATCH: some entry differs from the course's values by more than their rounding.") +
        " The fused op scaled_dot_product_attention, which the models use, gives the same weights and output "
        "as the step-by-step computation: max difference " + sci(dF) + ".");
  L.say("The weights are almost uniform (0.33 everywhere): the scores differ by at most 0.05, and a softmax "
        "of nearly equal numbers is nearly flat. Each output row is therefore close to the mean of the "
        "three values. Small embeddings make gentle attention; the rest of the lesson is about the opposite "
        "problem, scores that are too large.");
  plots::Figure fig(1100, 1000, 1, 1);
  fig.title("\"The cat sat\": self-attention weights");
  auto hm = weight_map(words, words, true);
  hm.decimals = 3;
  plots::heatmap(fig.panel(0, 0).xlabel("Keys").ylabel("Queries"), A.value(), hm);
  save_figure(L, fig, "toy_weights", "Weights softmax(Q K^T / 2) of the toy example: rows are queries, columns keys");
  L.metric("golden_max_diff", std::max({dS, dA, dO}));
  L.metric("fused_vs_stepwise_max_diff", dF);

}

// ---------------------------------------------------------------------------------------------
// 2. Var(q.k) grows like d_k.

std::vector<std::size_t> dk_values() {
  std::vector<std::size_t> d;
  for (std::size_t v = 4; v <= 1024; v *= 2) d.push_back(v);
  return d;
}

double variance(const std::vector<double>& x) {
  double m = 0, s = 0;
  for (double v : x) m += v;
  m /= double(x.size());
  for (double v : x) s += (v - m) * (v - m);
  return s / double(x.size() - 1);
}

double median(std::vector<double> x) {
  std::nth_element(x.begin(), x.begin() + long(x.size() / 2), x.end());
  return x[x.size() / 2];
}

// Least-squares slope of log y against log x.
double log_log_slope(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0, sxy = 0, sxx = 0;
  const double n = double(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) mx += std::log(x[i]) / n, my += std::log(y[i]) / n;
  for (std::size_t i = 0; i < x.size(); ++i) {
    sxy += (std::log(x[i]) - mx) * (std::log(y[i]) - my);
    sxx += (std::log(x[i]) - mx) * (std::log(x[i]) - mx);
  }
  return sxy / sxx;
}

void variance_experiment(Lesson& L, Generator& gen) {
  const std::size_t samples = L.quick() ? 2000 : 20000, chunk = 1000;
  L.config("variance_samples_per_dk", double(samples));
  L.say("Draw q and k with independent N(0, 1) entries. Then q.k = sum_i q_i k_i is a sum of d_k independent "
        "terms, each of mean 0 and variance E[q_i^2] E[k_i^2] = 1, so Var(q.k) = d_k: the typical score "
        "grows like sqrt(d_k). Dividing by sqrt(d_k) divides the variance by d_k. We measure both with " +
        std::to_string(samples) + " random pairs per d_k.");
  std::vector<double> dks, raw, scaled;
  std::vector<std::vector<std::string>> rows;
  for (std::size_t dk : dk_values()) {
    std::vector<double> dots;
    for (std::size_t done = 0; done < samples; done += chunk) {
      const auto q = Tensor<double>::randn({chunk, dk}, gen), k = Tensor<double>::randn({chunk, dk}, gen);
      const Array<double> d = sum(q * k, {-1}).value();
      dots.insert(dots.end(), d.begin(), d.end());
    }
    const double v = variance(dots);
    const double vs = v / double(dk);  // Var(c X) = c^2 Var(X) with c = 1/sqrt(d_k)
    dks.push_back(double(dk));
    raw.push_back(v);
    scaled.push_back(vs);
    rows.push_back({std::to_string(dk), fmt(v, 1), fmt(vs, 3)});
  }
  L.table({"d_k", "Var(q.k)", "Var(q.k / sqrt(d_k))"}, rows);
  const double slope_raw = log_log_slope(dks, raw), slope_scaled = log_log_slope(dks, scaled);
  double worst = 0;
  for (double v : scaled) worst = std::max(worst, std::abs(v - 1.0));
  L.say("On log-log axes Var(q.k) is a line of slope " + fmt(slope_raw, 3) + " (theory: 1), and the scaled "
        "variance stays flat (slope " + fmt(slope_scaled, 3) + ", at most " + fmt(worst, 3) + " away from 1, "
        "which is sampling noise). Without the scale, at d_k = 512 a typical score is +-" +
        fmt(std::sqrt(512.0), 1) + "; a softmax over such numbers is an arg-max.");
  plots::Figure fig(1600, 1000, 1, 1);
  fig.title("Variance of dot products of random unit-variance vectors");
  plots::LineOptions o;
  o.log_x = o.log_y = true;
  o.markers = true;
  plots::line_plot(fig.panel(0, 0).xlabel("d_k").ylabel("variance (over random q, k)"),
                   {plots::Series("Var(q·k)", xt::adapt(dks), xt::adapt(raw)),
                    plots::Series("Var(q·k / √d_k)", xt::adapt(dks), xt::adapt(scaled)),
                    [&] {
                      plots::Series s("Var = d_k (theory)", xt::adapt(dks), xt::adapt(dks));
                      s.dashed = true;
                      s.color = plots::Color{0.4, 0.4, 0.4};
                      return s;
                    }()},
                   o);
  save_figure(L, fig, "variance", "Var(q.k) follows the line Var = d_k; after dividing by sqrt(d_k) it stays at 1");
  L.metric("var_slope_unscaled", slope_raw);
  L.metric("var_slope_scaled", slope_scaled);
  L.metric("var_scaled_max_dev_from_1", worst);
}

// ---------------------------------------------------------------------------------------------
// 3. Large scores saturate the softmax and starve the gradient.

void softmax_saturation(Lesson& L, Generator& gen) {
  const auto show = [](const Array<double>& x) {
    std::string s = "[";
    for (std::size_t i = 0; i < x.size(); ++i) s += (i ? ", " : "") + sci(x(i), 4);
    return s + "]";
  };
  const Tensor<double> small(Array<double>{2.0, 1.0, 0.5}), big(Array<double>{30.0, 10.0, 5.0});
  const Array<double> ps = softmax(small).value(), pb = softmax(big).value();
  L.table({"scores", "softmax"}, {{"[2, 1, 0.5]", show(ps)}, {"[30, 10, 5]", show(pb)}});
  L.say("The same ordering, very different weights: softmax([2, 1, 0.5]) = [0.63, 0.23, 0.14] still mixes "
        "the values, while softmax([30, 10, 5]) = [1, 2e-9, 1e-11] is a hard arg-max. The derivative of a "
        "softmax is dp/ds = diag(p) - p p^T, which is zero for a one-hot p: the gradient through a saturated "
        "softmax vanishes, so the queries and keys that produced the scores stop learning.");

  const std::size_t trials = L.quick() ? 400 : 2000, keys = 16;
  L.config("saturation_trials_per_dk", double(trials));
  L.say("Measured: for each d_k, " + std::to_string(trials) + " random queries q, each scored against " +
        std::to_string(keys) + " random keys (unit-variance entries), s = q.k without the scale or "
        "s = q.k / sqrt(d_k) with it. We push a random upstream gradient g back through p = softmax(s) with our "
        "backward (the vector-Jacobian product g^T dp/ds) and look at the norm of dL/ds per query, and at what "
        "reaches the query itself, dL/dq = scale * sum_j (dL/ds_j) k_j.");
  // Per variant (0: no scale, 1: 1/sqrt(d_k)) and d_k: median and mean of ‖dL/ds‖, median ‖dL/dq‖.
  std::vector<double> dks, med_s[2], mean_s[2], med_q[2];
  std::vector<std::vector<std::string>> rows;
  for (std::size_t dk : dk_values()) {
    const Array<double> q0 = random_normal<double>({trials, 1, dk}, gen);
    const auto k = Tensor<double>::randn({trials, keys, dk}, gen);
    const Array<double> upstream = random_normal<double>({trials, 1, keys}, gen);
    std::vector<std::string> row{std::to_string(dk)};
    for (int v = 0; v < 2; ++v) {
      const Tensor<double> q(q0, true);
      const Tensor<double> s = matmul(q, k, false, true) * (v ? 1.0 / std::sqrt(double(dk)) : 1.0);
      s.retain_grad();
      const Tensor<double> p = softmax(s, -1);
      p.backward(upstream);
      std::vector<double> ns, nq;
      double top = 0;
      for (std::size_t t = 0; t < trials; ++t) {
        double a2 = 0, b2 = 0, mx = 0;
        for (std::size_t j = 0; j < keys; ++j) a2 += s.grad()(t, 0, j) * s.grad()(t, 0, j), mx = std::max(mx, p.value()(t, 0, j));
        for (std::size_t j = 0; j < dk; ++j) b2 += q.grad()(t, 0, j) * q.grad()(t, 0, j);
        ns.push_back(std::sqrt(a2));
        nq.push_back(std::sqrt(b2));
        top += mx / double(trials);
      }
      double m = 0;
      for (double x : ns) m += x / double(trials);
      med_s[v].push_back(median(ns));
      mean_s[v].push_back(m);
      med_q[v].push_back(median(nq));
      for (const std::string& cell : {fmt(top, 3), sci(med_s[v].back(), 1), sci(m, 1), sci(med_q[v].back(), 1)}) row.push_back(cell);
    }
    dks.push_back(double(dk));
    rows.push_back(row);
  }
  L.table({"d_k", "max w, none", "med ‖ds‖, none", "mean ‖ds‖, none", "med ‖dq‖, none", "max w, scaled",
           "med ‖ds‖, scaled", "mean ‖ds‖, scaled", "med ‖dq‖, scaled"},
          rows);
  L.say("(\"none\": s = q.k; \"scaled\": s = q.k / sqrt(d_k). max w: the largest softmax weight, averaged over "
        "queries; med and mean: median and mean over queries of the norms ‖dL/ds‖ and ‖dL/dq‖.)");
  const double ratio = med_s[1].back() / med_s[0].back(), ratio_q = med_q[1].back() / med_q[0].back();
  L.say("Without the scale the largest weight climbs towards 1 as d_k grows, and the typical (median) query's "
        "gradient collapses: at d_k = 1024 its ‖dL/ds‖ is " + sci(med_s[0].back(), 1) + ", " + fmt(ratio, 0) +
        " times smaller than with the scale, and its ‖dL/dq‖ is " + fmt(ratio_q, 0) + " times smaller. The mean "
        "falls far less (" + sci(mean_s[0].back(), 1) + "): it is carried by the few queries whose two best keys "
        "happen to score almost the same, the only ones the softmax still lets learn. With the scale, every "
        "column stays flat: the weights stay spread out and the gradient does not depend on d_k.");
  plots::Figure fig(1600, 1000, 1, 1);
  fig.title("Gradient through the softmax, 16 random keys per query");
  plots::LineOptions o;
  o.log_x = o.log_y = true;
  o.markers = true;
  const plots::Color orange{1.0, 0.498, 0.055}, blue{0.122, 0.467, 0.706};
  auto series = [&](const std::string& name, const std::vector<double>& y, plots::Color c, bool dashed) {
    plots::Series s(name, xt::adapt(dks), xt::adapt(y));
    s.color = c;
    s.dashed = dashed;
    return s;
  };
  plots::line_plot(fig.panel(0, 0).xlabel("d_k").ylabel("norm of dL/d scores, over queries"),
                   {series("no scale: median", med_s[0], orange, false), series("no scale: mean", mean_s[0], orange, true),
                    series("1/√d_k: median", med_s[1], blue, false), series("1/√d_k: mean", mean_s[1], blue, true)},
                   o);
  save_figure(L, fig, "softmax_gradient",
              "Gradient norm through the softmax for a random upstream gradient: median (solid) and mean (dashed) over "
              "queries, with and without 1/sqrt(d_k)");
  L.metric("softmax_grad_median_ratio_dk1024", ratio);
  L.metric("query_grad_median_ratio_dk1024", ratio_q);
}

// ---------------------------------------------------------------------------------------------
// 4. Masks.

void masks(Lesson& L, Generator& gen) {
  const std::size_t n = 5, d = 8;
  const std::vector<std::string> padded_right = {"the", "cat", "sat", "<pad>", "<pad>"};
  const std::vector<std::string> sentence = {"the", "cat", "sat", "on", "it"};
  const std::vector<std::string> padded_left = {"<pad>", "<pad>", "the", "cat", "sat"};
  L.say("A mask says which keys a query may look at. Padding: a batch of sentences of different lengths is "
        "padded to one length, and no query should attend to a <pad> key. Causal: when predicting the next "
        "word, position i may only see positions j <= i. Our attention gives a masked key exactly zero "
        "weight (it is left out of the softmax, not filled with -1e9). Third case: a left-padded sentence "
        "under a causal mask: the two <pad> queries may only see <pad> keys, so their rows have no allowed "
        "key at all. Q, K, V are random (5 x 8) here; only the masks differ between the panels.");
  const auto q = Tensor<double>::randn({n, d}, gen), k = Tensor<double>::randn({n, d}, gen),
             v = Tensor<double>::randn({n, d}, gen);
  Mask pad_right = xt::ones<bool>(Shape{1, n}), pad_left = xt::ones<bool>(Shape{1, n});
  pad_right(0, 3) = pad_right(0, 4) = false;
  pad_left(0, 0) = pad_left(0, 1) = false;

  struct Case {
    std::string title;
    std::vector<std::string> tokens;
    std::optional<Mask> mask;
    bool causal;
  };
  const std::vector<Case> cases = {{"Padding", padded_right, pad_right, false},
                                   {"Causal", sentence, std::nullopt, true},
                                   {"Causal + left padding", padded_left, pad_left, true}};
  plots::Figure fig(2400, 1000, 1, 3);
  fig.title("Attention weights under three masks (masked keys get exactly 0)");
  fig.shared_colorbar({plots::Colormap::viridis(), 0.0, 1.0, "attention weight"});
  double masked_max = 0, nan_count = 0, empty_row_max = 0;
  for (std::size_t c = 0; c < cases.size(); ++c) {
    // Fresh leaves per case, so each gradient below belongs to this case alone.
    const Tensor<double> qc(q.value(), true), kc(k.value(), true), vc(v.value(), true);
    AttentionOptions<double> o;
    if (cases[c].mask) o.allowed = Allowed::where(*cases[c].mask);
    o.causal = cases[c].causal;
    const auto r = scaled_dot_product_attention(qc, kc, vc, o);
    r.output.backward(random_normal<double>({n, d}, gen));
    const Array<double>& w = r.weights.value();
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j) {
        const bool allowed = (!cases[c].mask || (*cases[c].mask)(0, j)) && (!o.causal || j <= i);
        if (!allowed) masked_max = std::max(masked_max, std::abs(w(i, j)));
      }
    for (const Array<double>* a : {&w, &r.output.value(), &qc.grad(), &kc.grad(), &vc.grad()})
      for (double x : *a) nan_count += std::isnan(x) ? 1 : 0;
    if (c == 2) {
      // Queries 0 and 1 see only <pad> keys: weights, output and dL/dq must be exactly 0 there.
      for (std::size_t i = 0; i < 2; ++i) {
        for (std::size_t j = 0; j < n; ++j) empty_row_max = std::max(empty_row_max, std::abs(w(i, j)));
        for (std::size_t j = 0; j < d; ++j)
          empty_row_max = std::max({empty_row_max, std::abs(r.output.value()(i, j)), std::abs(qc.grad()(i, j))});
      }
      L.matrix("output O of the causal + left padding case", rows_of(r.output.value()), padded_left, {}, 3);
    }
    auto hm = weight_map(cases[c].tokens, cases[c].tokens, true);
    hm.colorbar = false;
    plots::heatmap(fig.panel(0, int(c)).title(cases[c].title).xlabel("Keys").ylabel(c == 0 ? "Queries" : ""),
                   w, hm);
  }
  save_figure(L, fig, "masks", "Padding mask, causal mask, and causal + left padding (the <pad> queries have no key left: their rows are all 0)");
  L.say("In the third panel the rows of the two <pad> queries are all zeros, and so are their outputs (printed "
        "above) and their gradients dL/dq: largest absolute value over all three, " + sci(empty_row_max, 1) +
        ". Zeros, not NaN: a -inf fill would compute exp(-inf - (-inf)) = NaN there, and a -1e9 fill would "
        "give uniform weights over the <pad> keys. Largest weight on any masked key in the three cases: " +
        sci(masked_max, 1) + "; NaNs in weights, outputs and gradients: " + std::to_string(int(nan_count)) + ".");
  L.metric("masked_weight_max", masked_max);
  L.metric("mask_nan_count", nan_count);
  L.metric("fully_masked_row_max", empty_row_max);
}

// ---------------------------------------------------------------------------------------------
// 5. Training with and without the scale: "the maximum so far".

constexpr std::size_t kDigits = 10, kLen = 8;

struct MaxSoFarData {
  IndexArray tokens, targets;  // (N, kLen): digits, and the running maximum at each position
};

// n sequences of kLen random digits, none of which is in `taken` (then added to it).
MaxSoFarData make_max_so_far(std::size_t n, Generator& gen, std::set<std::string>& taken) {
  MaxSoFarData d{IndexArray::from_shape({n, kLen}), IndexArray::from_shape({n, kLen})};
  for (std::size_t s = 0; s < n;) {
    std::string key(kLen, '0');
    for (auto& c : key) c = char('0' + gen.below(kDigits));
    if (!taken.insert(key).second) continue;
    Index run = 0;
    for (std::size_t i = 0; i < kLen; ++i) {
      d.tokens(s, i) = key[i] - '0';
      run = std::max(run, d.tokens(s, i));
      d.targets(s, i) = run;
    }
    ++s;
  }
  return d;
}

// Embedding -> one single-head causal self-attention layer -> a linear read-out per position.
// No residual connection and no MLP: the answer has to come through the attention weights.
class MaxSoFarModel : public nn::Module<float> {
 public:
  MaxSoFarModel(std::size_t d, bool scaled, Generator& gen)
      : embed(kDigits, d, gen), w_q(d, d, gen, false), w_k(d, d, gen, false), w_v(d, d, gen, false),
        out(d, kDigits, gen), scaled_(scaled) {
    // Embeddings are N(0, 1) and W_Q, W_K are N(0, 1/d) (LeCun normal), so q and k start with
    // unit-variance entries: exactly the setting of section 2, where Var(q.k) = d_k.
    nn::normal(w_q.weight, gen, 0.0, 1.0 / std::sqrt(double(d)));
    nn::normal(w_k.weight, gen, 0.0, 1.0 / std::sqrt(double(d)));
    register_module("embed", embed);
    register_module("w_q", w_q);
    register_module("w_k", w_k);
    register_module("w_v", w_v);
    register_module("out", out);
  }
  // tokens (B, L) -> logits (B, L, 10) and weights (B, L, L).
  AttentionResult<float> forward(const IndexArray& tokens) const {
    const Tensor<float> x = embed(tokens);
    AttentionOptions<float> o;
    o.causal = true;
    if (!scaled_) o.scale = 1.0;  // else the default, 1/sqrt(d_k)
    const auto a = scaled_dot_product_attention(w_q(x), w_k(x), w_v(x), o);
    return {out(a.output), a.weights};
  }

  nn::Embedding<float> embed;
  nn::Linear<float> w_q, w_k, w_v, out;

 private:
  bool scaled_;
};

IndexArray rows_at(const IndexArray& a, const std::vector<std::size_t>& idx, std::size_t from, std::size_t count) {
  IndexArray b = IndexArray::from_shape({count, a.shape()[1]});
  for (std::size_t r = 0; r < count; ++r)
    for (std::size_t c = 0; c < a.shape()[1]; ++c) b(r, c) = a(idx[from + r], c);
  return b;
}

struct Evaluation {
  double accuracy;      // per position
  double attends_max;   // fraction of queries whose largest weight sits on a key holding the running max
};

Evaluation evaluate(const MaxSoFarModel& model, const MaxSoFarData& test) {
  NoGrad no_grad;
  const auto r = model.forward(test.tokens);
  const IndexArray pred = nn::argmax_last(r.output.value());
  const IndexArray top = nn::argmax_last(r.weights.value());
  std::size_t hits = 0;
  for (std::size_t s = 0; s < test.tokens.shape()[0]; ++s)
    for (std::size_t i = 0; i < kLen; ++i) hits += test.tokens(s, std::size_t(top(s, i))) == test.targets(s, i);
  return {nn::accuracy(pred, test.targets), double(hits) / double(test.tokens.size())};
}

struct Run {
  std::vector<double> loss;  // per step
  Evaluation before, after;
  double ms_per_step;
};

Run train(MaxSoFarModel& model, const MaxSoFarData& train_set, const MaxSoFarData& test,
          int epochs, std::size_t batch, double lr, std::uint64_t seed, const std::string& label) {
  Run run;
  run.before = evaluate(model, test);
  nn::Adam<float> opt(model.parameters(), lr);
  Generator order(seed);  // the same batches, in the same order, for both models
  std::vector<std::size_t> idx(train_set.tokens.shape()[0]);
  for (std::size_t i = 0; i < idx.size(); ++i) idx[i] = i;
  const std::size_t steps = idx.size() / batch;
  const auto t0 = std::chrono::steady_clock::now();
  lessons::Progress bar(steps * std::size_t(epochs), label + ", " + std::to_string(epochs) + " epochs");
  for (int e = 0; e < epochs; ++e) {
    shuffle(idx, order);
    for (std::size_t s = 0; s < steps; ++s) {
      const auto logits = model.forward(rows_at(train_set.tokens, idx, s * batch, batch)).output;
      const auto loss = cross_entropy(logits, rows_at(train_set.targets, idx, s * batch, batch));
      opt.zero_grad();
      loss.backward();
      opt.step();
      run.loss.push_back(loss.item());
      bar.step(loss.item());
    }
  }
  bar.finish();
  run.ms_per_step = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() /
                    double(run.loss.size());
  run.after = evaluate(model, test);
  return run;
}

// Mean of each window of `w` steps: a readable loss curve.
std::pair<xt::xarray<double>, xt::xarray<double>> smoothed(const std::vector<double>& loss, std::size_t w) {
  std::vector<double> x, y;
  for (std::size_t s = 0; s + w <= loss.size(); s += w) {
    double m = 0;
    for (std::size_t i = s; i < s + w; ++i) m += loss[i] / double(w);
    x.push_back(double(s + w));
    y.push_back(m);
  }
  return {xt::adapt(x), xt::adapt(y)};
}

void train_with_and_without(Lesson& L, Generator& gen) {
  const std::size_t d = 512, batch = 64;
  const std::size_t n_train = L.quick() ? 2048 : 8192, n_test = L.quick() ? 500 : 2000;
  const int epochs = L.epochs(8, 2);
  const double lr = 3e-4;
  L.config("task", "max_so_far");
  L.config("d_k", double(d));
  L.config("train_sequences", double(n_train));
  L.config("test_sequences", double(n_test));
  L.config("epochs", double(epochs));
  L.config("batch", double(batch));
  L.config("lr", lr);
  std::set<std::string> taken;
  const MaxSoFarData train_set = make_max_so_far(n_train, gen, taken);
  const MaxSoFarData test = make_max_so_far(n_test, gen, taken);  // held out: no sequence in both
  L.say("Task: read " + std::to_string(kLen) + " random digits and, at every position, output the largest "
        "digit seen so far (\"3 1 4 1 5 9 2 6\" -> \"3 3 4 4 5 9 9 9\"): 10-way classification per position. "
        "Model: an embedding of size d_k = " + std::to_string(d) + ", one causal self-attention layer "
        "(W_Q, W_K, W_V, no residual path), and a linear read-out. The right attention pattern is sharp: each "
        "query should look at the key holding the largest digit so far. " + std::to_string(n_train) +
        " training sequences, " + std::to_string(n_test) + " held-out ones, Adam (lr " + sci(lr, 0) +
        "), batch " + std::to_string(batch) + ", " + std::to_string(epochs) + " epochs. Both models start "
        "from the same weights (one seed) and see the same batches; the only difference is the factor "
        "1/sqrt(d_k) = " + fmt(1.0 / std::sqrt(double(d)), 4) + " on the scores.");
  const std::uint64_t model_seed = gen.next_u64(), order_seed = gen.next_u64();
  Generator g1(model_seed), g2(model_seed);
  MaxSoFarModel scaled(d, true, g1), unscaled(d, false, g2);
  L.say("Parameters per model: " + std::to_string(scaled.parameter_count()) + ".");
  const Run rs = train(scaled, train_set, test, epochs, batch, lr, order_seed, "with 1/sqrt(d_k)");
  const Run ru = train(unscaled, train_set, test, epochs, batch, lr, order_seed, "without scale");

  L.table({"model", "held-out accuracy before", "after", "queries attending to the max, after"},
          {{"with 1/sqrt(d_k)", fmt(rs.before.accuracy, 3), fmt(rs.after.accuracy, 3), fmt(rs.after.attends_max, 3)},
           {"without scale", fmt(ru.before.accuracy, 3), fmt(ru.after.accuracy, 3), fmt(ru.after.attends_max, 3)}});
  std::string story;
  const double gap = rs.after.accuracy - ru.after.accuracy;
  if (gap > 0.02)
    story = "With the same budget the scaled model reaches " + fmt(rs.after.accuracy, 3) + " held-out accuracy, the "
            "unscaled one " + fmt(ru.after.accuracy, 3) + ". At initialization the unscaled scores have a standard "
            "deviation of about sqrt(" + std::to_string(d) + ") = " + fmt(std::sqrt(double(d)), 1) + ": every "
            "query puts almost all its weight on one essentially random key, the softmax gradient is nearly "
            "zero (section 3), and W_Q, W_K receive almost no signal to move the weight onto the right key.";
  else if (gap < -0.02)
    story = "Here the unscaled model ends ahead (" + fmt(ru.after.accuracy, 3) + " against " +
            fmt(rs.after.accuracy, 3) + "): this task wants a hard arg-max, which large scores give for free.";
  else
    story = "At this size both models end within 2 points of each other (" + fmt(rs.after.accuracy, 3) + " and " +
            fmt(ru.after.accuracy, 3) + "): Adam divides each update by the running gradient size, which "
            "partly undoes the vanishing softmax gradient.";
  L.say(story + " The loss curves show the whole history.");
  L.metric("test_acc_scaled", rs.after.accuracy);
  L.metric("test_acc_unscaled", ru.after.accuracy);
  L.metric("test_acc_untrained", rs.before.accuracy);
  L.metric("test_acc_gain_from_scale", gap);
  L.metric("attends_max_scaled", rs.after.attends_max);
  L.metric("attends_max_unscaled", ru.after.attends_max);
  L.timing("train_ms_per_step_scaled", rs.ms_per_step);
  L.timing("train_ms_per_step_unscaled", ru.ms_per_step);

  const std::size_t window = std::max<std::size_t>(1, rs.loss.size() / 50);
  const auto [xs, ys] = smoothed(rs.loss, window);
  const auto [xu, yu] = smoothed(ru.loss, window);
  plots::Figure fig(1600, 1000, 1, 1);
  fig.title("Training loss, d_k = " + std::to_string(d) + ", same seed and batches");
  plots::LineOptions lo;
  lo.log_y = true;
  const std::string ylabel = window > 1 ? "cross-entropy (mean of " + std::to_string(window) + " steps)" : "cross-entropy";
  plots::line_plot(fig.panel(0, 0).xlabel("training step").ylabel(ylabel),
                   {plots::Series("with 1/√d_k", xs, ys), plots::Series("without scale", xu, yu)}, lo);
  save_figure(L, fig, "loss_curves", "Training loss of the two models: identical start, data and optimizer; only the score scale differs");

  // Attention of both trained models on two held-out sequences.
  plots::Figure hm(2000, 1800, 2, 2);
  hm.title("Trained attention on held-out sequences (target: the running maximum)");
  hm.shared_colorbar({plots::Colormap::viridis(), 0.0, 1.0, "attention weight"});
  NoGrad no_grad;
  for (std::size_t e = 0; e < 2; ++e) {
    const std::size_t row = e * 7;  // two arbitrary held-out sequences
    IndexArray one = xt::view(test.tokens, xt::range(row, row + 1), xt::all());
    std::vector<std::string> keys, queries;
    for (std::size_t i = 0; i < kLen; ++i) {
      keys.push_back(std::to_string(one(0, i)));
      queries.push_back(std::to_string(one(0, i)) + " → " + std::to_string(test.targets(row, i)));
    }
    int r = 0;
    for (const MaxSoFarModel* m : {&scaled, &unscaled}) {
      const Array<float> w = xt::view(m->forward(one).weights.value(), 0, xt::all(), xt::all());
      auto o = weight_map(keys, queries, false);
      o.colorbar = false;
      plots::heatmap(hm.panel(r, int(e))
                         .title(std::string(r == 0 ? "with 1/√d_k" : "without scale") + ", sequence " + std::to_string(e + 1))
                         .xlabel("Keys (input digit)")
                         .ylabel(e == 0 ? "Queries (digit → running max)" : ""),
                     w, o);
      ++r;
    }
  }
  save_figure(L, hm, "trained_attention", "Attention weights of the trained models on held-out sequences; rows are queries (labelled digit -> target), columns keys");
}

}  // namespace

int main(int argc, char** argv) {
  Lesson L({"04_scaled_dot_product", "Scaled dot-product attention",
            "Self-attention by hand, why scores are divided by sqrt(d_k), masks, and training with and without the scale"},
           argc, argv);
  Generator gen(L.seed());

  L.section("1. Self-attention by hand: \"The cat sat\"");
  toy_self_attention(L);

  L.section("2. Why sqrt(d_k): the variance of a dot product");
  variance_experiment(L, gen);

  L.section("3. Large scores saturate the softmax");
  softmax_saturation(L, gen);

  L.section("4. Masks: padding, causal, and a row with nothing left");
  masks(L, gen);

  L.section("5. Training with and without the scale");
  train_with_and_without(L, gen);
  return L.finish();
}
