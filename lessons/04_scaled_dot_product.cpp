// Lesson 04: scaled dot-product attention, softmax(Q K^T / sqrt(d_k)) V.
//
// Self-attention lets every token look at every other: a query q_i is compared with each key k_j
// by a dot product, the scores are turned into weights by a softmax, and the output is the
// weighted mean of the values. Why divide by sqrt(d_k)? If q and k have unit-variance entries,
// q.k is a sum of d_k unit-variance terms, so Var(q.k) = d_k: at d_k = 512 a typical score is
// +-23, a softmax over such numbers is nearly one-hot, and little gradient flows back through it.
// Dividing by sqrt(d_k) brings the variance back to 1. We compute a toy example by hand, measure
// the variance and the gradient, look at masks, then train one small model with and without the
// scale.
#include <algorithm>
#include <cmath>
#include <optional>

#include <xtensor/xnorm.hpp>
#include <xtensor/xview.hpp>

#include "lessons/kit/kit.hpp"
#include "lessons/kit/scored_heads.hpp"
#include "nn/data/tagged.hpp"
#include "nn/init.hpp"
#include "nn/layers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

namespace {

// ---------------------------------------------------------------------------------------------
// 1. "The cat sat", by hand.

void toy_self_attention() {
  const std::vector<std::string> words = {"The", "cat", "sat"}, dims = {"d1", "d2", "d3", "d4"};
  const Tensor<double> X(Array<double>{{0.2, 0.1, 0.3, 0.1}, {0.5, 0.3, 0.2, 0.4}, {0.3, 0.2, 0.4, 0.3}});
  const Tensor<double> W(Array<double>(0.5 * xt::eye<double>(4)));
  say("Three words, each a 4-dimensional embedding (one row of $X$). The projections are $W_Q = W_K = W_V = "
      "\\tfrac{1}{2} I$, so every query, key and value is half its embedding. We compute each step with the engine's "
      "ops, the softmax taken along each row (one row per query):");
  say("$$Q = XW_Q,\\quad K = XW_K,\\quad V = XW_V,\\qquad S = \\frac{QK^\\top}{\\sqrt{4}},\\quad A = "
      "\\mathrm{softmax}(S),\\quad O = AV.$$");
  const Tensor<double> Q = matmul(X, W), K = matmul(X, W), V = matmul(X, W);
  const Tensor<double> S = matmul(Q, K, false, true) / std::sqrt(4.0);
  const Tensor<double> A = softmax(S, -1);
  const Tensor<double> O = matmul(A, V);
  matrix("Q = X W_Q", Q.value(), words, dims);
  matrix("K = X W_K", K.value(), words, dims);
  matrix("V = X W_V", V.value(), words, dims);
  matrix("S = Q Kᵀ / √4   (rows: queries, columns: keys)", S.value(), words, words, 6);
  matrix("A = softmax(S)   (each row sums to 1)", A.value(), words, words, 6);
  matrix("O = A V", O.value(), words, dims, 6);

  // The course's golden values (printed to 6 decimals, so agreement is within 5e-7).
  const Array<double> gold_S{{.01875, .02875, .02875}, {.02875, .0675, .05125}, {.02875, .05125, .0475}};
  const Array<double> gold_A{{.331115, .334443, .334443}, {.326556, .339458, .333986}, {.328765, .336247, .334988}};
  const Array<double> gold_O{{.166889, .100166, .15, .133611}, {.167618, .100645, .149726, .134317},
                             {.167186, .100374, .149937, .133936}};
  const double dS = max_abs_diff(S.value(), gold_S), dA = max_abs_diff(A.value(), gold_A),
               dO = max_abs_diff(O.value(), gold_O);
  const auto fused = scaled_dot_product_attention(Q, K, V);  // default scale 1/sqrt(d_k) = 1/2
  const double dF = std::max(max_abs_diff(fused.output.value(), O.value()), max_abs_diff(fused.weights.value(), A.value()));
  table({"quantity", "max abs(ours − golden)"}, {row("scores $S$", sci(dS, 3)), row("weights $A$", sci(dA, 3)),
                                                 row("output $O$", sci(dO, 3))});
  metric("golden_max_diff", std::max({dS, dA, dO}));
  metric("fused_vs_stepwise_max_diff", dF);
  claim({"golden_values", "golden_max_diff <= 5e-7",
         text("Every entry agrees with the course's values to their printed precision (largest difference ",
              sci(std::max({dS, dA, dO}), 1), ", within the rounding of 6 decimals)."),
         text("Some entry differs from the course's values by ", sci(std::max({dS, dA, dO}), 1),
              ", more than the rounding of their 6 decimals (5e-7).")});
  claim({"fused_matches_stepwise", "fused_vs_stepwise_max_diff <= 1e-12",
         text("The fused op the models use, scaled_dot_product_attention, gives the same weights and output as the "
              "step-by-step computation (largest difference ", sci(dF, 1), ")."),
         text("The fused op scaled_dot_product_attention differs from the step-by-step computation by ", sci(dF, 1),
              ", more than double-precision rounding.")});
  const double spread = double(xt::amax(A.value())() - xt::amin(A.value())());
  metric("toy_weight_range", spread);
  claim({"toy_weights_near_uniform", "toy_weight_range < 0.02",
         text("The weights are almost uniform: every one lies within ", fixed(spread, 4), " of the others, around 1/3."),
         text("The weights are not uniform: they span ", fixed(spread, 4), ".")});
  say("The scores differ by at most 0.05, and a softmax of nearly equal numbers is nearly flat, so each output row is "
      "close to the mean of the three values. Small embeddings make gentle attention; the rest of the lesson is about "
      "the opposite problem, scores that are too large.");
  AttentionFigureOptions style{"\"The cat sat\": self-attention weights", 1, 900, 800};
  style.annotate = true;
  style.decimals = 3;
  save_figure(attention_figure({{A.value(), words, words, ""}}, style), "toy_weights",
              "Weights $A = \\mathrm{softmax}(QK^\\top/2)$ of the toy example: rows are queries, columns keys");
}

// ---------------------------------------------------------------------------------------------
// 2. Var(q.k) against d_k.

const std::vector<double> kDk = {4, 8, 16, 32, 64, 128, 256, 512, 1024};

void variance_experiment(Generator& gen) {
  const std::size_t samples = full_or_quick(20000, 2000), chunk = 1000;
  config("variance_samples_per_dk", samples);
  say("Draw $q$ and $k$ with independent $\\mathcal{N}(0, 1)$ entries. Then $q \\cdot k = \\sum_i q_i k_i$ is a sum of "
      "$d_k$ independent terms, each of mean 0 and variance $\\mathbb{E}[q_i^2]\\,\\mathbb{E}[k_i^2] = 1$, so "
      "$\\mathrm{Var}(q \\cdot k) = d_k$: the typical score grows like $\\sqrt{d_k}$. Dividing by $\\sqrt{d_k}$ "
      "divides the variance by $d_k$. We measure both with ", samples, " random pairs per $d_k$.");
  std::vector<double> raw, scaled;
  std::vector<std::vector<std::string>> rows;
  for (double dk : kDk) {
    std::vector<double> dots;
    for (std::size_t done = 0; done < samples; done += chunk) {
      const auto q = Tensor<double>::randn({chunk, std::size_t(dk)}, gen), k = Tensor<double>::randn({chunk, std::size_t(dk)}, gen);
      const Array<double> d = sum(q * k, {-1}).value();
      dots.insert(dots.end(), d.begin(), d.end());
    }
    const double v = stdev(dots) * stdev(dots);
    raw.push_back(v);
    scaled.push_back(v / dk);  // Var(c X) = c^2 Var(X) with c = 1/sqrt(d_k)
    rows.push_back(row(dk, fixed(v, 1), fixed(v / dk, 3)));
  }
  table({"$d_k$", "$\\mathrm{Var}(q \\cdot k)$", "$\\mathrm{Var}(q \\cdot k / \\sqrt{d_k})$"}, rows);
  const double slope_raw = log_log_slope(kDk, raw), slope_scaled = log_log_slope(kDk, scaled);
  double worst = 0;
  for (double v : scaled) worst = std::max(worst, std::abs(v - 1.0));
  metric("var_slope_unscaled", slope_raw);
  metric("var_slope_scaled", slope_scaled);
  metric("var_scaled_max_dev_from_1", worst);
  claim({"variance_grows_like_dk", "abs(var_slope_unscaled - 1) < 0.05",
         text("On log-log axes $\\mathrm{Var}(q \\cdot k)$ is a line of slope ", fixed(slope_raw, 3),
              ", as the theory's slope 1 says: at $d_k = 512$ a typical score is $\\pm", fixed(std::sqrt(512.0), 1), "$."),
         text("The measured slope of $\\mathrm{Var}(q \\cdot k)$ against $d_k$ is ", fixed(slope_raw, 3),
              ", more than 0.05 from the theory's 1.")});
  claim({"scaled_variance_flat", "abs(var_slope_scaled) < 0.05 and var_scaled_max_dev_from_1 < 0.15",
         text("After dividing by $\\sqrt{d_k}$ the variance stays flat (slope ", fixed(slope_scaled, 3), ", at most ",
              fixed(worst, 3), " away from 1, the size of the sampling noise)."),
         text("After dividing by $\\sqrt{d_k}$ the variance is not flat: slope ", fixed(slope_scaled, 3),
              ", up to ", fixed(worst, 3), " away from 1.")});
  const LineFigureOptions style{"Variance of dot products of random unit-variance vectors", "d_k (log scale)",
                                "variance over random q, k (log scale)", true, true, true};
  save_figure(line_figure({curve("Var(q·k)", kDk, raw), curve("Var(q·k / √d_k)", kDk, scaled),
                           reference("Var = d_k (theory)", kDk, kDk)}, style),
              "variance", "$\\mathrm{Var}(q \\cdot k)$ against the line $\\mathrm{Var} = d_k$, and after dividing by "
                          "$\\sqrt{d_k}$");
}

// ---------------------------------------------------------------------------------------------
// 3. The softmax at large scores, and its gradient.

void softmax_saturation(Generator& gen) {
  const Array<double> ps = softmax(Tensor<double>(Array<double>{2.0, 1.0, 0.5})).value();
  const Array<double> pb = softmax(Tensor<double>(Array<double>{30.0, 10.0, 5.0})).value();
  auto show = [](const Array<double>& p) { return "[" + sci(p(0), 4) + ", " + sci(p(1), 4) + ", " + sci(p(2), 4) + "]"; };
  table({"scores", "softmax"}, {row("[2, 1, 0.5]", show(ps)), row("[30, 10, 5]", show(pb))});
  say("The same ordering, very different weights: a softmax of small scores still mixes the values, one of large "
      "scores is a hard arg-max. The Jacobian of a softmax is $\\partial p / \\partial s = \\mathrm{diag}(p) - pp^\\top$, "
      "which is zero for a one-hot $p$: the gradient through a saturated softmax vanishes, so the queries and keys "
      "that produced the scores stop learning.");
  const std::size_t trials = full_or_quick(2000, 400), keys = 16;
  config("saturation_trials_per_dk", trials);
  say("Measured: for each $d_k$, ", trials, " random queries $q$, each scored against ", keys, " random keys "
      "(unit-variance entries), $s = q \\cdot k$ without the scale or $s = q \\cdot k / \\sqrt{d_k}$ with it. We push a "
      "random upstream gradient $g$ back through $p = \\mathrm{softmax}(s)$ with our backward (the vector-Jacobian "
      "product $g^\\top \\partial p / \\partial s$) and look at the norm of $\\partial L / \\partial s$ per query, and at "
      "what reaches the query itself, $\\partial L / \\partial q = c \\sum_j (\\partial L / \\partial s_j)\\, k_j$ with "
      "$c$ the scale.");
  // Per variant (0: no scale, 1: 1/sqrt(d_k)) and d_k: mean top weight, median and mean |dL/ds|, median |dL/dq|.
  std::vector<double> top_w[2], med_s[2], mean_s[2], med_q[2];
  std::vector<std::vector<std::string>> rows;
  for (double dk : kDk) {
    const std::size_t d = std::size_t(dk);
    const Array<double> q0 = random_normal<double>({trials, 1, d}, gen);
    const auto k = Tensor<double>::randn({trials, keys, d}, gen);
    const Array<double> upstream = random_normal<double>({trials, 1, keys}, gen);
    std::vector<std::string> cells{text(dk)};
    for (int v = 0; v < 2; ++v) {
      const Tensor<double> q(q0, true);
      const Tensor<double> s = matmul(q, k, false, true) * (v ? 1.0 / std::sqrt(dk) : 1.0);
      s.retain_grad();
      const Tensor<double> p = softmax(s, -1);
      p.backward(upstream);
      std::vector<double> ns, nq;
      for (std::size_t t = 0; t < trials; ++t)
        ns.push_back(xt::norm_l2(xt::view(s.grad(), t))()), nq.push_back(xt::norm_l2(xt::view(q.grad(), t))());
      top_w[v].push_back(double(xt::mean(xt::amax(p.value(), {2}))()));
      med_s[v].push_back(median(ns));
      mean_s[v].push_back(mean_of(ns));
      med_q[v].push_back(median(nq));
      cells.insert(cells.end(), {fixed(top_w[v].back(), 3), sci(med_s[v].back()), sci(mean_s[v].back()), sci(med_q[v].back())});
    }
    rows.push_back(cells);
  }
  table({"$d_k$", "max w, none", "med ‖ds‖, none", "mean ‖ds‖, none", "med ‖dq‖, none", "max w, scaled",
         "med ‖ds‖, scaled", "mean ‖ds‖, scaled", "med ‖dq‖, scaled"}, rows);
  say("(\"none\": $s = q \\cdot k$; \"scaled\": $s = q \\cdot k / \\sqrt{d_k}$. max w: the largest softmax weight, "
      "averaged over queries; med and mean: median and mean over queries of the norms $\\lVert \\partial L / \\partial s "
      "\\rVert$ and $\\lVert \\partial L / \\partial q \\rVert$.)");
  const double ratio = med_s[1].back() / med_s[0].back(), ratio_q = med_q[1].back() / med_q[0].back();
  const double mean_ratio = mean_s[1].back() / mean_s[0].back();
  const double flat = *std::max_element(med_s[1].begin(), med_s[1].end()) / *std::min_element(med_s[1].begin(), med_s[1].end());
  metric("softmax_top_weight_dk1024_unscaled", top_w[0].back());
  metric("softmax_top_weight_dk1024_scaled", top_w[1].back());
  metric("softmax_grad_median_ratio_dk1024", ratio);
  metric("query_grad_median_ratio_dk1024", ratio_q);
  metric("softmax_grad_mean_ratio_dk1024", mean_ratio);
  metric("scaled_grad_max_over_min", flat);
  claim({"unscaled_softmax_saturates",
         "softmax_top_weight_dk1024_unscaled > 0.9 and softmax_top_weight_dk1024_scaled < 0.6",
         text("Without the scale the largest weight climbs towards 1 as $d_k$ grows (", fixed(top_w[0].back(), 3),
              " on average at $d_k = 1024$); with it, it stays at ", fixed(top_w[1].back(), 3), "."),
         text("At $d_k = 1024$ the largest weight averages ", fixed(top_w[0].back(), 3), " without the scale and ",
              fixed(top_w[1].back(), 3), " with it: not the saturation the theory predicts.")});
  claim({"unscaled_gradient_vanishes",
         "softmax_grad_median_ratio_dk1024 >= 100 and query_grad_median_ratio_dk1024 >= 30",
         text("The typical (median) query's gradient collapses without the scale: at $d_k = 1024$ its "
              "$\\lVert \\partial L / \\partial s \\rVert$ is ", sci(med_s[0].back()), ", ", fixed(ratio, 0),
              " times smaller than with the scale, and its $\\lVert \\partial L / \\partial q \\rVert$ ",
              fixed(ratio_q, 0), " times smaller."),
         text("At $d_k = 1024$ the median gradient without the scale is only ", fixed(ratio, 0), " times (scores) and ",
              fixed(ratio_q, 0), " times (query) smaller than with it.")});
  claim({"mean_gradient_falls_less", "softmax_grad_mean_ratio_dk1024 * 10 < softmax_grad_median_ratio_dk1024",
         text("The mean falls far less (", fixed(mean_ratio, 0), " times): it is carried by the few queries whose two "
              "best keys happen to score almost the same, the only ones the softmax still lets learn."),
         text("The mean falls about as much as the median (", fixed(mean_ratio, 0), " against ", fixed(ratio, 0),
              " times).")});
  claim({"scaled_gradient_flat", "scaled_grad_max_over_min < 1.5",
         text("With the scale the median gradient does not depend on $d_k$: it varies by a factor ", fixed(flat, 2),
              " from $d_k = 4$ to 1024."),
         text("With the scale the median gradient still varies by a factor ", fixed(flat, 2), " across $d_k$.")});
  std::vector<plots::Series> series;
  for (int v = 0; v < 2; ++v) {
    const std::string name = v ? "1/√d_k" : "no scale";
    series.push_back(curve(name + ": median", kDk, med_s[v]));
    series.push_back(curve(name + ": mean", kDk, mean_s[v]));
    series.back().dashed = true;
    series[series.size() - 2].color = series.back().color = plots::series_color(std::size_t(1 - v));
  }
  const LineFigureOptions style{"Gradient through the softmax, 16 random keys per query", "d_k (log scale)",
                                "norm of dL/ds over queries (log scale)", true, true, true};
  save_figure(line_figure(series, style), "softmax_gradient",
              "Gradient norm through the softmax for a random upstream gradient: median (solid) and mean (dashed) "
              "over queries, with and without $1/\\sqrt{d_k}$");
}

// ---------------------------------------------------------------------------------------------
// 4. Masks.

void masks(Generator& gen) {
  const std::size_t n = 5, d = 8;
  say("A mask says which keys a query may look at. Padding: a batch of sentences of different lengths is padded to "
      "one length, and no query should attend to a <pad> key. Causal: when predicting the next word, position $i$ may "
      "only see positions $j \\le i$. Our attention gives a hidden key exactly zero weight (it is left out of the "
      "softmax, not filled with $-10^9$). Third case: a left-padded sentence under a causal mask: the two <pad> "
      "queries may only see <pad> keys, so their rows have no allowed key at all. $Q$, $K$, $V$ are random "
      "($5 \\times 8$) here; only the masks differ between the panels.");
  const auto q = Tensor<double>::randn({n, d}, gen), k = Tensor<double>::randn({n, d}, gen), v = Tensor<double>::randn({n, d}, gen);
  // real: (1, n), the keys that are not <pad>; causal: no key after the query.
  struct Case { std::string title; std::vector<std::string> tokens; std::optional<Mask> real; bool causal; };
  const std::vector<Case> cases = {
      {"Padding", {"the", "cat", "sat", "<pad>", "<pad>"}, Mask{{true, true, true, false, false}}, false},
      {"Causal", {"the", "cat", "sat", "on", "it"}, std::nullopt, true},
      {"Causal + left padding", {"<pad>", "<pad>", "the", "cat", "sat"}, Mask{{false, false, true, true, true}}, true}};
  double masked_max = 0, nan_count = 0, empty_row_max = 0;
  std::vector<AttentionMap> maps;
  for (std::size_t c = 0; c < cases.size(); ++c) {
    // Fresh leaves per case, so each gradient below belongs to this case alone.
    const Tensor<double> qc(q.value(), true), kc(k.value(), true), vc(v.value(), true);
    AttentionOptions<double> o;
    if (cases[c].real) o.allowed = Allowed::where(*cases[c].real);
    o.causal = cases[c].causal;
    const auto r = scaled_dot_product_attention(qc, kc, vc, o);
    r.output.backward(random_normal<double>({n, d}, gen));
    const Array<double>& w = r.weights.value();
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < n; ++j)
        if ((cases[c].real && !(*cases[c].real)(0, j)) || (o.causal && j > i)) masked_max = std::max(masked_max, std::abs(w(i, j)));
    for (const Array<double>* a : {&w, &r.output.value(), &qc.grad(), &kc.grad(), &vc.grad()})
      for (double x : *a) nan_count += std::isnan(x) ? 1 : 0;
    if (c == 2) {  // queries 0 and 1 see only <pad> keys: weights, output and dL/dq must be exactly 0 there
      for (const Array<double>* a : {&w, &r.output.value(), &qc.grad()})
        empty_row_max = std::max(empty_row_max, double(xt::amax(xt::abs(xt::view(*a, xt::range(0, 2))))()));
      matrix("output O of the causal + left padding case", r.output.value(), cases[c].tokens, {}, 3);
    }
    maps.push_back({w, cases[c].tokens, cases[c].tokens, cases[c].title});
  }
  AttentionFigureOptions style{"Attention weights under three masks", 3, 2000, 860};
  style.annotate = true;
  save_figure(attention_figure(maps, style), "masks",
              "Padding mask, causal mask, and causal + left padding, on the same random $Q$, $K$, $V$");
  metric("masked_weight_max", masked_max);
  metric("mask_nan_count", nan_count);
  metric("fully_masked_row_max", empty_row_max);
  claim({"masked_keys_get_zero", "masked_weight_max == 0",
         "Every hidden key gets weight exactly 0 in all three cases.",
         text("A hidden key gets weight ", sci(masked_max), ", not exactly 0.")});
  claim({"empty_rows_are_zero", "fully_masked_row_max == 0 and mask_nan_count == 0",
         "In the third panel the rows of the two <pad> queries are all zeros, and so are their outputs (printed above) "
         "and their gradients $\\partial L / \\partial q$; no weight, output or gradient of the three cases is NaN.",
         text("The rows with no allowed key are not clean: largest absolute weight, output or gradient there ",
              sci(empty_row_max), ", and ", int(nan_count), " NaNs over the three cases.")});
  say("Zeros, not NaN: a $-\\infty$ fill would compute $\\exp(-\\infty - (-\\infty))$ = NaN there, and a $-10^9$ fill "
      "would give uniform weights over the <pad> keys.");
}

// ---------------------------------------------------------------------------------------------
// 5. Training with and without the scale: "the largest digit so far".

constexpr std::size_t kDigits = 10, kLen = 8;

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
    for (auto [name, m] : std::vector<std::pair<const char*, nn::Module<float>*>>{
             {"embed", &embed}, {"w_q", &w_q}, {"w_k", &w_k}, {"w_v", &w_v}, {"out", &out}})
      register_module(name, *m);
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
  // One sequence (1, L): its weights with the queries and keys they came from, for the explorer.
  ScoredHead scored(const IndexArray& one, const std::string& name) const {
    NoGrad no_grad;
    const Tensor<float> x = embed(one);
    return first_sequence_head(name, forward(one).weights.value(), w_q(x).value(), w_k(x).value(), scaled_ ? 0.0 : 1.0, true);
  }

  nn::Embedding<float> embed;
  nn::Linear<float> w_q, w_k, w_v, out;

 private:
  bool scaled_;
};

// Held-out per-position accuracy; the share of queries whose top weight sits on a key holding the
// running maximum; and the weight a query puts on its most attended digit (summed over the keys
// holding it: equal digits have equal keys and split their weight), 1 for a hard choice.
struct Scores { double accuracy, attends_max, top_digit_weight; };

Scores evaluate(const MaxSoFarModel& model, const nn::data::Tagged& test) {
  NoGrad no_grad;
  const auto r = model.forward(test.inputs);
  const Array<float>& w = r.weights.value();
  const IndexArray top = nn::argmax_last(w);
  std::size_t hits = 0;
  double top_digit = 0.0;
  for (std::size_t s = 0; s < test.size(); ++s)
    for (std::size_t i = 0; i < kLen; ++i) {
      hits += test.inputs(s, std::size_t(top(s, i))) == test.targets(s, i);
      double per_digit[kDigits] = {};
      for (std::size_t j = 0; j <= i; ++j) per_digit[std::size_t(test.inputs(s, j))] += w(s, i, j);
      top_digit += *std::max_element(per_digit, per_digit + kDigits);
    }
  const double queries = double(test.inputs.size());
  return {score_tags(nn::argmax_last(r.output.value()), test.targets).token, double(hits) / queries, top_digit / queries};
}

// A model trained by the recipe, with its held-out accuracy every `every` steps (step 0: untrained).
struct Trained { Scores before, after; History history; std::vector<double> steps, accuracy; };

Trained train_one(MaxSoFarModel& model, const nn::data::Tagged& train_set, const nn::data::Tagged& test,
                  Recipe recipe, const std::string& label, std::size_t every) {
  Trained t{evaluate(model, test), {}, {}, {0.0}, {}};
  t.accuracy.push_back(t.before.accuracy);
  recipe.label = label;
  recipe.after_step = [&](std::size_t step) {
    if (step % every == 0) t.steps.push_back(double(step)), t.accuracy.push_back(evaluate(model, test).accuracy);
  };
  t.history = train(model, train_set.size(), [&](const std::vector<std::size_t>& rows) {
    const nn::data::Tagged b = train_set.rows(rows);
    return cross_entropy(model.forward(b.inputs).output, b.targets);
  }, recipe);
  t.after = evaluate(model, test);
  return t;
}

void train_with_and_without(Generator& gen) {
  const std::size_t d = 512, n_train = full_or_quick(8192, 2048), n_test = full_or_quick(2000, 500);
  Recipe recipe;  // plain Adam at a constant rate: nothing in the optimizer to soften the comparison
  recipe.epochs = epochs(8, 2), recipe.batch = 64, recipe.lr = 3e-4;
  recipe.decay = Decay::constant, recipe.clip = 0.0;
  const nn::data::Tagged all = nn::data::running_max_digits(n_train + n_test, kLen, gen);
  const nn::data::Tagged train_set = all.slice(0, n_train), test = all.slice(n_train, n_train + n_test);  // no string in both
  const long steps = fit_steps(train_set.size(), recipe);
  config({{"task", "max_so_far"}, {"d_k", d}, {"train_sequences", n_train}, {"test_sequences", n_test},
          {"epochs", recipe.epochs}, {"batch", recipe.batch}, {"lr", recipe.lr}});
  say("Task: read ", kLen, " random digits and, at every position, output the largest digit seen so far "
      "(3 1 4 1 5 9 2 6 → 3 3 4 4 5 9 9 9): 10-way classification per position. Model: an embedding of size "
      "$d_k = ", d, "$, one causal self-attention layer ($W_Q$, $W_K$, $W_V$, no residual path), and a linear "
      "read-out. The right attention pattern is sharp: each query should look at the key holding the largest digit so "
      "far. ", n_train, " training sequences, ", n_test, " held-out ones (no sequence in both). Training: ",
      describe(recipe, steps), ". Both models start from the same weights and see the same batches; the only "
      "difference is the factor $1/\\sqrt{d_k} = ", fixed(1.0 / std::sqrt(double(d)), 4), "$ on the scores.");
  const std::uint64_t model_seed = gen.next_u64();
  recipe.seed = gen.next_u64();  // the same batches, in the same order, for both models
  Generator g1(model_seed), g2(model_seed);
  MaxSoFarModel scaled(d, true, g1), unscaled(d, false, g2);
  say("Parameters per model: ", scaled.parameter_count(), ".");
  const std::size_t every = std::size_t(std::max(1L, steps / 16));
  const Trained rs = train_one(scaled, train_set, test, recipe, "with 1/sqrt(d_k)", every);
  const Trained ru = train_one(unscaled, train_set, test, recipe, "without scale", every);
  table({"model", "held-out accuracy before", "after", "weight on the top digit, before",
         "queries attending to the max, after"},
        {row("with $1/\\sqrt{d_k}$", fixed(rs.before.accuracy, 3), fixed(rs.after.accuracy, 3),
             fixed(rs.before.top_digit_weight, 3), fixed(rs.after.attends_max, 3)),
         row("without scale", fixed(ru.before.accuracy, 3), fixed(ru.after.accuracy, 3),
             fixed(ru.before.top_digit_weight, 3), fixed(ru.after.attends_max, 3))});
  const double gap = rs.after.accuracy - ru.after.accuracy;
  metric("test_acc_scaled", rs.after.accuracy);
  metric("test_acc_unscaled", ru.after.accuracy);
  metric("test_acc_untrained", rs.before.accuracy);
  metric("test_acc_gain_from_scale", gap);
  metric("attends_max_scaled", rs.after.attends_max);
  metric("attends_max_unscaled", ru.after.attends_max);
  metric("init_top_digit_weight_scaled", rs.before.top_digit_weight);
  metric("init_top_digit_weight_unscaled", ru.before.top_digit_weight);
  timing("train_ms_per_step_scaled", rs.history.median_step_ms());
  timing("train_ms_per_step_unscaled", ru.history.median_step_ms());
  claim({"unscaled_starts_one_hot", "init_top_digit_weight_unscaled > 0.95 and init_top_digit_weight_scaled < 0.8",
         text("At initialization the unscaled scores have a standard deviation of about $\\sqrt{", d, "} \\approx ",
              fixed(std::sqrt(double(d)), 1), "$: a query puts ", fixed(ru.before.top_digit_weight, 3), " of its weight, "
              "on average, on one digit (equal digits have equal keys), an essentially random one; the scaled "
              "model's queries put ", fixed(rs.before.top_digit_weight, 3), " on their most attended digit."),
         text("At initialization a query puts ", fixed(ru.before.top_digit_weight, 3), " of its weight on its most "
              "attended digit without the scale and ", fixed(rs.before.top_digit_weight, 3), " with it: the unscaled "
              "rows are not one-hot.")});
  claim({"scale_rescues_training", "test_acc_scaled >= 0.9 and test_acc_gain_from_scale >= 0.05",
         text("With the same budget the scaled model reaches ", fixed(rs.after.accuracy, 3), " held-out accuracy, the "
              "unscaled one ", fixed(ru.after.accuracy, 3), " (", fixed(gap, 3), " less): the saturated softmax passes "
              "almost no gradient to $W_Q$ and $W_K$ (section 3), so they get little signal to move the weight onto the "
              "right key."),
         text("With the same budget the scaled model reaches ", fixed(rs.after.accuracy, 3), " held-out accuracy and "
              "the unscaled one ", fixed(ru.after.accuracy, 3), ": a gap of ", fixed(gap, 3), ", below 0.05 (or the "
              "scaled model below 0.9). Adam divides each update by the running gradient size, which partly undoes "
              "the vanishing softmax gradient.")});
  claim({"scaled_attends_to_max", "attends_max_scaled >= 0.9 and attends_max_unscaled < attends_max_scaled",
         text("The scaled model has learnt the sharp pattern: ", fixed(rs.after.attends_max, 3), " of its queries put "
              "their largest weight on a key holding the running maximum, against ", fixed(ru.after.attends_max, 3),
              " for the unscaled one."),
         text(fixed(rs.after.attends_max, 3), " of the scaled model's queries and ", fixed(ru.after.attends_max, 3),
              " of the unscaled one's put their largest weight on a key holding the running maximum.")});

  const LineFigureOptions acc{text("Held-out accuracy during training, d_k = ", d, ", same start and batches"),
                              "training step", "held-out per-position accuracy", false, false, true, 0.0, 1.02, 1600, 1000};
  save_figure(line_figure({curve("with 1/√d_k", rs.steps, rs.accuracy), curve("without scale", ru.steps, ru.accuracy)}, acc),
              "scale_training", text("Held-out accuracy of the two models every ", every, " steps: identical start, "
                                     "data and optimizer; only the score scale $1/\\sqrt{d_k}$ differs"));
  CurvesFigureOptions curves{text("Training loss, d_k = ", d, ", same seed and batches")};
  curves.epochs = false, curves.width = 1600, curves.height = 1000, curves.ylabel = "cross-entropy (log scale)";
  save_figure(loss_curves({{"with 1/√d_k", &rs.history}, {"without scale", &ru.history}}, curves), "loss_curves",
              "Training loss of the two models: identical start, data and optimizer; only the score scale differs");

  // Both trained models on three arbitrary held-out sequences, each a "layer" at its own scale (lessons/kit/
  // scored_heads.hpp; keys the digits, queries "digit → running max"): two in a figure, all three in the explorer.
  const std::vector<AttentionInput> held_out = tagged_inputs(test, {0, 7, 14}, "held-out sequence", [&](const IndexArray& one) {
    return std::vector<ScoredHead>{scaled.scored(one, "with 1/√d_k"), unscaled.scored(one, "without scale")};
  });
  AttentionFigureOptions style{"Trained attention on held-out sequences (target: the running maximum)", 2, 1700, 1500};
  style.keys_label = "Keys (input digit)";
  style.queries_label = "Queries (digit → running max)";
  save_figure(attention_figure(first_head_maps(held_out, 2, "sequence"), style), "trained_attention",
              "Attention weights of the trained models on held-out sequences; rows are queries (labelled digit → "
              "target), columns keys");
  show_explorer({"Lesson 04: the largest digit so far, with and without 1/√d_k", "digit → running max", "digits",
                 "Both trained models on held-out sequences, each a layer: hover a query to see which digits it reads "
                 "(the right one holds the running maximum); click it for the neuron view: the scaled model's score "
                 "is q·k / √512, the unscaled one's the whole q·k.", held_out},
                "explorer", "The attention explorer: both trained models on three held-out sequences; hover a query "
                            "for its weights, click it for its query-key products");
}

}  // namespace

int main(int argc, char** argv) {
  LessonInfo info{"04_scaled_dot_product", "Scaled dot-product attention",
                  "Self-attention by hand, why scores are divided by √d_k, masks, and training with and without the "
                  "scale",
                  "test_acc_scaled"};
  info.lead_figure = "scale_training";
  return run_lesson(info, argc, argv, [] {
    Generator gen(seed());
    section("1. Self-attention by hand: \"The cat sat\"");
    toy_self_attention();
    section("2. The variance of a dot product");
    variance_experiment(gen);
    section("3. The softmax at large scores");
    softmax_saturation(gen);
    section("4. Masks: padding, causal, and a row with nothing left");
    masks(gen);
    section("5. Training with and without the scale");
    train_with_and_without(gen);
  });
}
