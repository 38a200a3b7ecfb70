// Lesson 01: attention pooling, through Nadaraya-Watson kernel regression.
//
// Attention is a soft lookup. A query q is compared with every key k_i; the comparisons become
// non-negative weights a(q, k_i) that sum to 1 (an attention distribution); the answer is the
// weighted average of the values v_i:  f(q) = sum_i a(q, k_i) v_i.
// Nadaraya and Watson (1964) did exactly this for regression: the keys are the training inputs,
// the values their targets, and the weights a normalized kernel K(q - k_i) / sum_j K(q - k_j).
// We fit y = 2 sin x + x^0.8 + noise with three fixed kernels at three widths, then make the
// Gaussian's width a parameter w, a(q, k_i) = softmax_i(-((q - k_i) w)^2 / 2), and learn it with
// our autograd, each training point predicted from the OTHER points (itself hidden from its softmax).
#include <algorithm>
#include <cmath>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

#include "lessons/kit/explorer.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/late_change.hpp"
#include "lessons/kit/point_attention.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

namespace {

constexpr double kNoiseStd = 0.5, kXMax = 5.0;

// ---------------------------------------------------------------------------------------------
// 1. Data
Array<double> truth_on(const Array<double>& x) { return 2.0 * xt::sin(x) + xt::pow(x, 0.8); }  // the data's truth

struct Data {
  Array<double> x_train, y_train;  // sorted training inputs (the keys) and targets (the values)
  Tensor<float> values;            // y_train as a (n, 1) float column, for the learned model
  Array<double> x_val, y_val;      // held-out noisy validation set (the metric)
  Array<double> x_grid, y_grid;    // fine grid over [0, 5] and the noise-free function on it
  Array<double> x_queries;         // coarse grid: the rows of the attention heatmaps
};

Data make_data(std::size_t n_train, std::size_t n_val) {
  Generator gen(seed());
  auto draw = [&](std::size_t n, bool sorted, Array<double>& x, Array<double>& y) {  // inputs, then noisy targets
    x = xt::zeros<double>({n});
    for (double& v : x) v = gen.uniform(0.0, kXMax);
    if (sorted) std::sort(x.begin(), x.end());
    y = truth_on(x);
    for (double& v : y) v += gen.normal(0.0, kNoiseStd);
  };
  Data d;
  draw(n_train, true, d.x_train, d.y_train);
  d.values = Tensor<float>(Array<float>(xt::cast<float>(xt::view(d.y_train, xt::all(), xt::newaxis()))));
  draw(n_val, false, d.x_val, d.y_val);
  d.x_grid = xt::linspace<double>(0.0, kXMax, 201);
  d.y_grid = truth_on(d.x_grid);
  d.x_queries = xt::arange<double>(0.05, kXMax, 0.1);  // 50 cell centres 0.05 ... 4.95
  return d;
}

double mse_of(const Array<double>& pred, const Array<double>& y) { return xt::mean(xt::square(pred - y))(); }

// The two errors of every model here, `predict` mapping queries to predictions: the MSE against the noisy
// validation targets, and against the noise-free function on the grid.
struct Errors { double val, truth; };
template <class Predict>
Errors errors_of(const Predict& predict, const Data& d) {
  return {mse_of(predict(d.x_val), d.y_val), mse_of(predict(d.x_grid), d.y_grid)};
}

Errors mean_baseline(const Data& d) {  // the simplest model: the mean training target, predicted everywhere
  return errors_of([&](const Array<double>& x) -> Array<double> { return xt::full_like(x, xt::mean(d.y_train)()); }, d);
}

// The value of the training key nearest to each query (the first of equally near ones): what a window widening
// around the query catches first, and what attention becomes as its width goes to 0.
Array<double> nearest_values(const Array<double>& queries, const Data& d) {
  Array<double> out = xt::zeros<double>({queries.size()});
  for (std::size_t i = 0; i < queries.size(); ++i) out(i) = d.y_train(xt::argmin(xt::abs(d.x_train - queries(i)))());
  return out;
}

void the_data(const Data& d) {
  say("We draw ", d.x_train.size(), " training inputs $x$ uniformly in $[0, 5]$, sorted, with targets "
      "$y = 2 \\sin x + x^{0.8} + \\epsilon$, the noise $\\epsilon$ Gaussian with standard deviation ",
      fixed(kNoiseStd, 1), ", and ", d.x_val.size(), " validation points the same way, never used in fitting: every "
      "score is measured on them. The validation MSE compares predictions with the noisy validation targets, so even "
      "the true function scores about the noise variance, ", fixed(kNoiseStd * kNoiseStd, 2), " (the floor); the "
      "true MSE compares them with the noise-free function at 201 points over $[0, 5]$ (floor 0).");
  const Errors mean = mean_baseline(d), truth = errors_of(truth_on, d);
  table({"model", "validation MSE", "true MSE"},
        {row(text("the training mean, ", fixed(xt::mean(d.y_train)(), 3), ", everywhere"), fixed(mean.val, 4),
             fixed(mean.truth, 4)),
         row("the true function (this sample's noise)", fixed(truth.val, 4), "0")});
  say("A model that learned nothing of $x$ scores like the first row, a perfect one like the second.");
  metric("val_mse_mean_baseline", mean.val);
  metric("val_mse_true_function", truth.val);
}

// ---------------------------------------------------------------------------------------------
// 2. Non-parametric attention pooling: fixed kernels
enum class Kernel { Gaussian, Boxcar, Epanechnikov };
const Kernel kKernels[] = {Kernel::Gaussian, Kernel::Boxcar, Kernel::Epanechnikov};
const char* const kKernelNames[] = {"Gaussian", "boxcar", "Epanechnikov"};

// The (m, n) differences q_i - k_j of the queries and the training keys, by broadcasting.
Array<double> differences(const Array<double>& q, const Data& d) {
  return xt::view(q, xt::all(), xt::newaxis()) - d.x_train;
}

// K(u) of every distance u = q - k at width h, unnormalized (the constants cancel in the weights). Gaussian: h is the
// standard deviation; boxcar and Epanechnikov: the half-width of the window, outside which a key has zero weight.
Array<double> kernel_of(Kernel k, const Array<double>& u, double h) {
  const Array<double> t = u / h;
  switch (k) {
    case Kernel::Gaussian: return xt::exp(-0.5 * t * t);
    case Kernel::Boxcar: return xt::where(xt::abs(t) <= 1.0, 1.0, 0.0);
    case Kernel::Epanechnikov: return xt::maximum(0.0, 1.0 - t * t);
  }
  return xt::zeros_like(t);
}

// Nadaraya-Watson: a_ij = K(q_i - k_j) / sum_j K(q_i - k_j) and f(q_i) = sum_j a_ij v_j. A row whose kernel sum is 0
// (a window holding no key) has no weights: it stays all zero, its prediction is NaN for the curves (an honest gap)
// and, for the score (`scored`), the nearest key's value. row_sum_error: max |sum_j a_ij - 1| over rows with weights.
struct Pooled { Array<double> weights, shown, scored; std::size_t empty_rows; double row_sum_error; };

Pooled kernel_pooling(Kernel k, double h, const Array<double>& queries, const Data& d) {
  const Array<double> kernel = kernel_of(k, differences(queries, d), h);
  const Array<double> total = xt::sum(kernel, {1});  // sum_j K(q_i - k_j)
  const Array<bool> empty = xt::equal(total, 0.0);   // 0/0
  const auto totals = xt::view(total, xt::all(), xt::newaxis());
  const Array<double> weights = xt::where(totals > 0.0, kernel / totals, 0.0);
  const Array<double> f = xt::sum(weights * d.y_train, {1});
  return {weights, xt::where(empty, std::nan(""), f), xt::where(empty, nearest_values(queries, d), f),
          xt::count_nonzero(empty)(), xt::amax(xt::where(empty, 0.0, xt::abs(xt::sum(weights, {1}) - 1.0)))()};
}

plots::LineOptions y_range(double lo, double hi) { plots::LineOptions o; o.ymin = lo, o.ymax = hi; return o; }
plots::Series dashed(plots::Series s) { s.dashed = true; return s; }

// A model's predictions on the grid, drawn as one line in the color of its place in the legend.
struct PredictionCurve { std::string name; Array<double> y; std::size_t color; };

// Prediction curves over the training points (+) and the truth (dashed).
void prediction_panel(plots::Panel& panel, const Data& d, const std::vector<PredictionCurve>& curves) {
  plots::Series truth = dashed({"", d.x_grid, d.y_grid});
  truth.color = plots::Color::hex("#222222");
  std::vector<plots::Series> series{plus_marks(d.x_train, d.y_train, 0.06, 0.11), truth};
  for (const PredictionCurve& c : curves) series.emplace_back(c.name, d.x_grid, c.y).color = plots::series_color(c.color);
  plots::line_plot(panel.xlabel("x (query)").ylabel("y"), series, y_range(-3.5, 6.0));
}

// Each kernel at each width: the table, the figure, and the validation MSE of the Gaussian at each width (returned).
std::vector<double> fixed_kernels(const Data& d, const std::vector<double>& widths, double& worst_row_error) {
  say("Attention is a soft lookup in a table of (key, value) pairs, here the training set: key $x_i$, value $y_i$. A "
      "hard lookup returns the value of the key matching the query $x$ (an input to predict at); attention weighs every "
      "key, with weights $\\alpha(x, x_i) \\ge 0$ that sum to 1 over the keys (the attention distribution), and returns "
      "their average. This is Nadaraya-Watson kernel regression:");
  say("$$f(x) = \\sum_{i=1}^{n} \\alpha(x, x_i)\\, y_i, \\qquad \\alpha(x, x_i) = \\frac{K(x - x_i)}{\\sum_{j=1}^{n} K(x - x_j)},$$");
  say("for a kernel $K$ that is large when the query is near the key. Three kernels, each at widths $h$ = ",
      listing({fixed(widths[0], 1), fixed(widths[1], 1), fixed(widths[2], 1)}), ": Gaussian "
      "$K(u) = \\exp(-u^2 / (2h^2))$ (every key keeps some weight), boxcar $K(u) = \\mathbf{1}[\\,|u| \\le h\\,]$ (a "
      "plain average of the keys within $h$), Epanechnikov $K(u) = \\max(0,\\, 1 - (u/h)^2)$ (a fading window). The last "
      "two can hold no key: 50 points on $[0, 5]$ lie 0.1 apart on average, so a window of half-width 0.1 often falls "
      "into a hole, its weights $0/0$. We show it: a gap in the curve, the empty windows among the validation queries "
      "counted, and for the score the nearest key's value (the first a widening window catches).");
  plots::Figure fig(1800, 1300, 2, 2);
  fig.title("Nadaraya-Watson attention pooling with fixed kernels (dashed: truth, +: training points)");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> best;
  std::vector<double> gaussian, best_of_kernel;
  double width_cost = 1e9;  // the smallest, over kernels, of (worst width's MSE - best width's MSE)
  for (Kernel k : kKernels) {
    const char* name = kKernelNames[int(k)];
    std::vector<double> val;
    std::vector<PredictionCurve> curves;  // on the grid, NaN in empty windows
    for (double h : widths) {
      const Pooled pv = kernel_pooling(k, h, d.x_val, d), pg = kernel_pooling(k, h, d.x_grid, d);
      const double vm = mse_of(pv.scored, d.y_val), tm = mse_of(pg.scored, d.y_grid);
      worst_row_error = std::max({worst_row_error, pv.row_sum_error, pg.row_sum_error});
      curves.push_back({"h = " + fixed(h, 1), pg.shown, curves.size()});
      std::string tag = text(name, "_", fixed(h, 1));  // "gaussian_0p1"
      for (char& c : tag) c = c == '.' ? 'p' : char(std::tolower(c));
      metric("val_mse_" + tag, vm);
      metric("true_mse_" + tag, tm);
      val.push_back(vm);
      rows.push_back(row(name, fixed(h, 1), fixed(vm, 4), fixed(tm, 4), text(pv.empty_rows, " / ", d.x_val.size())));
    }
    const auto [lo, hi] = std::minmax_element(val.begin(), val.end());
    best.push_back(text(name, " $h$ = ", fixed(widths[std::size_t(lo - val.begin())], 1), " (", fixed(*lo, 4), ")"));
    best_of_kernel.push_back(*lo);
    width_cost = std::min(width_cost, *hi - *lo);
    if (k == Kernel::Gaussian) gaussian = val;
    prediction_panel(fig.panel(int(k) + 1).title(std::string(name) + " kernel"), d, curves);
  }
  table({"kernel", "width $h$", "validation MSE", "true MSE", "empty windows (validation queries)"}, rows);
  const auto [blo, bhi] = std::minmax_element(best_of_kernel.begin(), best_of_kernel.end());
  metric("val_mse_width_cost_min", width_cost);
  metric("val_mse_kernel_gap_at_best", *bhi - *blo);
  claim({"width_matters_more_than_shape", "val_mse_width_cost_min > val_mse_kernel_gap_at_best",
         text("The width matters more than the kernel's shape: at its best width each kernel is within ",
              fixed(*bhi - *blo, 3), " of the others in validation MSE, while the worst of the three widths costs every "
              "kernel at least ", fixed(width_cost, 3), ". Best width of the three, by validation MSE: ", listing(best), "."),
         text("Here the kernel's shape mattered as much as its width: at their best widths the kernels differ by ",
              fixed(*bhi - *blo, 3), " in validation MSE, more than the ", fixed(width_cost, 3), " the worst width costs "
              "the least width-sensitive kernel. Best width of the three: ", listing(best), ".")});
  say("In the figure, a narrow window copies the noise of its one or two nearest keys (the jagged curves); a wide one "
      "averages much of the data set, flattening the peak near $x = 1.9$ and the dip near $x = 4.4$ (bias); between, "
      "the two errors balance. One $h$ is not one spread: a boxcar of half-width $h$ has standard deviation "
      "$h / \\sqrt{3}$, an Epanechnikov window $h / \\sqrt{5}$, the Gaussian $h$, so at one $h$ the Gaussian is the "
      "widest.");
  const Array<double> u = xt::linspace<double>(-3.5, 3.5, 281);
  std::vector<plots::Series> shapes;
  for (Kernel k : kKernels) shapes.emplace_back(kKernelNames[int(k)], u, kernel_of(k, u, 1.0));
  plots::line_plot(fig.panel(0).title("The kernels K(u) at width h = 1").xlabel("u = query - key").ylabel("K(u)"),
                   shapes, y_range(0.0, 1.5));
  save_figure(fig, "kernel_fits", "The three kernels (top left) and their fits at three widths against the truth and "
                                  "the 50 training points; gaps in the boxcar and Epanechnikov curves are windows "
                                  "holding no key");
  return gaussian;
}

// ---------------------------------------------------------------------------------------------
// 3. Parametric attention pooling: a learned Gaussian width
// a(q, k_j) = softmax_j(-((q - k_j) w)^2 / 2): the Gaussian kernel of width 1/w as a softmax over scores.
class GaussianPooling : public nn::Module<float> {
 public:
  explicit GaussianPooling(float w0) : w(register_parameter("w", Tensor<float>::full({1}, w0))) {}
  // queries (m) against the keys and values (n): weights (m, n), predictions (m, 1). hidden_self hides key i from query
  // i: exactly zero weight and zero gradient on its own target (n - 1 keys stay, so no row is ever empty).
  AttentionResult<float> forward(const Array<double>& queries, const Data& d, bool hidden_self) const {
    const Tensor<float> scaled = Tensor<float>(Array<float>(xt::cast<float>(differences(queries, d)))) * w;
    const Tensor<float> scores = -0.5f * (scaled * scaled);  // w of shape (1,) broadcast over (m, n)
    const Tensor<float> weights =
        hidden_self ? masked_softmax(scores, Allowed::except(xt::eye<bool>(d.x_train.size()))) : softmax(scores, -1);
    return {matmul(weights, d.values), weights};
  }
  // Predictions and weights as plain arrays, without the tape, and the errors of the predictions.
  std::pair<Array<double>, Array<double>> predict(const Array<double>& queries, const Data& d) const {
    NoGrad no_grad;
    const auto r = forward(queries, d, false);
    return {xt::cast<double>(xt::view(r.output.value(), xt::all(), 0)), xt::cast<double>(r.weights.value())};
  }
  Errors errors(const Data& d) const { return errors_of([&](const auto& x) { return predict(x, d).first; }, d); }

  Tensor<float> w;  // a handle to the registered parameter
};

// Trains w on the mean squared error of the training targets, each predicted from the others (hidden_self) or
// from all points including itself. Returns w before each step.
std::vector<double> train_width(GaussianPooling& model, const Data& d, Recipe recipe, bool hidden_self, History& history) {
  recipe.label = hidden_self ? "train w (leave-one-out)" : "train w (self visible)";
  std::vector<double> w;
  history = train(model, d.x_train.size(), [&](const std::vector<std::size_t>&) {  // every point in every step
    w.push_back(model.w.item());
    return mse(model.forward(d.x_train, d, hidden_self).output, d.values);
  }, recipe);
  return w;
}

// The leave-one-out training: w and the errors at w = 1 and after learning, its history, and w before each step.
struct Learned { double w_before, w_after; Errors before, after; History history; std::vector<double> w; };

Learned learn_the_width(GaussianPooling& model, const Data& d, const Recipe& recipe, const std::vector<double>& widths,
                        const std::vector<double>& gaussian_val_mse) {
  say("Now the model chooses the width. The Gaussian kernel of width $1/w$, normalized, is a softmax over scores:");
  say("$$\\alpha(x, x_i) = \\mathrm{softmax}_i\\left(-\\tfrac{1}{2}\\,((x - x_i)\\, w)^2\\right),$$");
  say("the form of every later lesson: scores, a softmax over the keys, a weighted sum of values. Gradient descent "
      "trains $w$ on the training targets' MSE, our autograd differentiating through the softmax and the matrix product "
      "back to $w$: ", describe(recipe, fit_steps(d.x_train.size(), recipe)), ".");
  say("One trap: if a point may attend to itself, the best $w$ is infinite: width 0 puts all weight on its own key and "
      "reproduces its noisy target, training loss 0, a useless model. So each training query attends to the other 49 "
      "points (masked_softmax with Allowed::except on the diagonal: its own weight is exactly 0); the training loss is "
      "then the leave-one-out error, an estimate of the error on new points. We start from $w = 1$ (section 2's "
      "$h = 1$).");
  Learned r{model.w.item(), 0, model.errors(d), {}, {}, {}};
  r.w = train_width(model, d, recipe, true, r.history);
  r.w_after = model.w.item(), r.after = model.errors(d);
  auto step_row = [](auto s, double loss, double w) { return row(s, fixed(loss, 4), fixed(w, 3), fixed(1.0 / w, 3)); };
  std::vector<std::vector<std::string>> rows;
  const std::size_t steps = r.w.size();
  for (std::size_t s = 0; s < steps; s += std::max<std::size_t>(1, steps / 8)) rows.push_back(step_row(s, r.history.loss[s], r.w[s]));
  const NoGrad no_grad;  // the loss after the last step (the history holds the loss before each step)
  const Tensor<float> final_loss = mse(model.forward(d.x_train, d, true).output, d.values);
  rows.push_back(step_row(text(steps, " (end)"), final_loss.item(), r.w_after));
  table({"step", "training loss (leave-one-out MSE)", "$w$", "width $1/w$"}, rows);
  timing("train_ms_per_step", r.history.median_step_ms());
  metric("learned_w", r.w_after);
  metric("learned_width", 1.0 / r.w_after);
  metric("val_mse_before_learning", r.before.val);
  metric("val_mse_learned", r.after.val);
  metric("true_mse_before_learning", r.before.truth);
  metric("true_mse_learned", r.after.truth);
  claim({"learning_lowers_val_mse", "val_mse_learned < val_mse_before_learning and true_mse_learned < true_mse_before_learning",
         text("Learning the width helps on held-out data: $w$ went from ", fixed(r.w_before, 2), " to ",
              fixed(r.w_after, 2), " (width ", fixed(1.0 / r.w_after, 3), "), and the validation MSE fell from ",
              fixed(r.before.val, 4), " to ", fixed(r.after.val, 4), ", the true MSE from ", fixed(r.before.truth, 4),
              " to ", fixed(r.after.truth, 4), ". A larger $w$ makes the scores fall off faster with distance, "
              "concentrating each softmax on the nearest keys."),
         text("Learning the width did not help on held-out data here: validation MSE ", fixed(r.before.val, 4),
              " before and ", fixed(r.after.val, 4), " after, true MSE ", fixed(r.before.truth, 4), " and ",
              fixed(r.after.truth, 4), ", with $w$ from ", fixed(r.w_before, 2), " to ", fixed(r.w_after, 2), ".")});
  const auto g = std::size_t(std::min_element(gaussian_val_mse.begin(), gaussian_val_mse.end()) - gaussian_val_mse.begin());
  metric("val_mse_best_fixed_gaussian", gaussian_val_mse[g]);
  claim({"learned_vs_best_fixed_width", "val_mse_learned <= val_mse_best_fixed_gaussian",
         text("The learned width does at least as well as the best of the three fixed Gaussian widths ($h$ = ",
              fixed(widths[g], 1), ", validation MSE ", fixed(gaussian_val_mse[g], 4), ") without anyone trying widths."),
         text("The learned width is ", fixed(r.after.val - gaussian_val_mse[g], 4), " behind the best of the three "
              "fixed Gaussian widths ($h$ = ", fixed(widths[g], 1), ", validation MSE ", fixed(gaussian_val_mse[g], 4),
              "), but that one was picked by its validation score; the learned $w$ saw only the training data."),
         Expect::either_way});
  return r;
}

// Returns the width parameter w the unmasked training reached.
double without_the_mask(const GaussianPooling& model, const Learned& r, const Data& d, const Recipe& recipe) {
  say("For contrast, the same training without the self-mask: each training point may now look up its own target.");
  GaussianPooling free_model(1.0f);
  History visible;
  const std::vector<double> w_free = train_width(free_model, d, recipe, false, visible);
  const double w_visible = free_model.w.item();
  const Errors free_errors = free_model.errors(d);
  const Errors nearest = errors_of([&](const Array<double>& x) { return nearest_values(x, d); }, d);
  // How far w moved and how much the loss fell over the last tenth of the steps (lessons/kit/late_change.hpp).
  const double masked_drift = std::abs(late_change(r.w, r.w_after)), visible_drift = std::abs(late_change(w_free, w_visible));
  const double masked_fall = late_change(r.history.loss, r.history.loss.back()), visible_fall = late_change(visible.loss, visible.loss.back());
  metric("w_drift_masked", masked_drift);
  metric("loss_drop_masked", masked_fall);
  metric("loss_drop_self_visible", visible_fall);
  metric("w_drift_self_visible", visible_drift);
  metric("learned_w_self_visible", w_visible);
  metric("val_mse_learned_self_visible", free_errors.val);
  metric("val_mse_nearest_neighbour", nearest.val);
  claim({"masked_loss_levels_off", "loss_drop_masked < loss_drop_self_visible / 10",
         text("With the mask, the training loss levels off: over the last tenth of the steps it fell by ",
              small_percent(masked_fall), " ($w$ moved ", small_percent(masked_drift), "), against ", percent(visible_fall, 1),
              " without the mask. The leave-one-out loss has a minimum at a finite width, and the gradient finds it."),
         text("With the mask, the training loss still fell by ", percent(masked_fall, 2), " over the last tenth of the "
              "steps, not much less than the ", percent(visible_fall, 2), " without it: ", r.w.size(), " steps are too "
              "few here to tell a finite minimum from a runaway.")});
  claim({"visible_w_keeps_growing",
         "w_drift_self_visible > 0.01 and loss_drop_self_visible > 0.01 and learned_w_self_visible > learned_w",
         text("Without the mask, $w$ reached ", fixed(w_visible, 2), " (against ", fixed(r.w_after, 2), " with it) and "
              "is still climbing, ", percent(visible_drift, 1), " over the last tenth of the steps, while its training "
              "loss fell another ", percent(visible_fall, 1), ", to ", fixed(visible.loss.back(), 4), ". Nothing stops it: that loss reaches its minimum, 0, only at "
              "$w = \\infty$, all weight on the nearest key."),
         text("Without the mask, $w$ reached ", fixed(w_visible, 2), " (against ", fixed(r.w_after, 2), " with it) and "
              "moved ", percent(visible_drift, 1), " over the last tenth of the steps, its loss ", percent(visible_fall, 1),
              ": in this run it did not run away.")});
  claim({"runaway_limit_is_worse", "val_mse_nearest_neighbour > val_mse_learned",
         text("Where that runaway ends, a nearest-neighbour lookup, is worse than the masked model: validation MSE ",
              fixed(nearest.val, 4), " (true MSE ", fixed(nearest.truth, 4), ") against ", fixed(r.after.val, 4), "."),
         text("Here the runaway's limit, a nearest-neighbour lookup, scores ", fixed(nearest.val, 4),
              ", no worse than the masked model's ", fixed(r.after.val, 4), ".")});
  claim({"stopped_runaway_vs_masked", "val_mse_learned_self_visible > val_mse_learned",
         text("Stopped where it is, the unmasked model's validation MSE, ", fixed(free_errors.val, 4), ", is already "
              "worse than the masked model's ", fixed(r.after.val, 4), "; more steps only carry it further towards "
              "that limit."),
         text("Stopped where it is, the unmasked model's validation MSE, ", fixed(free_errors.val, 4), ", happens to be "
              "below the masked model's ", fixed(r.after.val, 4), ": on its way to the limit the runaway passes through "
              "good widths, but when to stop would be our guess; with the mask, the data decide the width."),
         Expect::either_way});
  const Errors mean = mean_baseline(d);
  auto model_row = [](const std::string& name, double w, const Errors& e) {
    return row(name, fixed(w, 3), fixed(1.0 / w, 3), fixed(e.val, 4), fixed(e.truth, 4));
  };
  table({"model", "$w$", "width $1/w$", "validation MSE", "true MSE"},
        {row("mean of training $y$", "-", "-", fixed(mean.val, 4), fixed(mean.truth, 4)),
         model_row("Gaussian, before learning", r.w_before, r.before),
         model_row("Gaussian, learned (self masked)", r.w_after, r.after),
         model_row("Gaussian, learned (self visible)", w_visible, free_errors),
         row("nearest neighbour ($w = \\infty$)", "$\\infty$", "0", fixed(nearest.val, 4), fixed(nearest.truth, 4))});

  plots::Figure fig(2100, 760, 1, 3);
  fig.title("Parametric attention pooling: learning the Gaussian width");
  const Array<double> fit_before = GaussianPooling(float(r.w_before)).predict(d.x_grid, d).first;
  prediction_panel(fig.panel(0).title("Fit before and after learning"), d,
                   {{"before (w = " + fixed(r.w_before, 2) + ")", fit_before, 0},
                    {"after (w = " + fixed(r.w_after, 2) + ")", model.predict(d.x_grid, d).first, 3}});
  plots::line_plot(fig.panel(1).title("Training loss (MSE)").xlabel("step").ylabel("loss"),
                   {curve("self masked", r.history.loss), dashed(curve("self visible", visible.loss))});
  plots::line_plot(fig.panel(2).title("The parameter w").xlabel("step").ylabel("w"),
                   {curve("self masked", r.w), dashed(curve("self visible", w_free))});
  save_figure(fig, "parametric_fit", "Left: the fit before ($w = 1$) and after learning $w$ with each training point "
                                     "masked from its own lookup. Middle and right: loss and $w$ per step, with and "
                                     "without that mask");
  return w_visible;
}

// ---------------------------------------------------------------------------------------------
// 4. The attention weights

// The learned model's heatmaps and a slice of its weights; `worst_row_error` is section 2's.
void the_weights(const GaussianPooling& model, const Data& d, const Learned& r, double worst_row_error) {
  say("Each row of the attention matrix is one query's distribution over the 50 sorted training keys. In the "
      "heatmaps, rows (top to bottom) are 50 evenly spaced queries $x$ = 0.05, 0.15, ..., 4.95, columns (left to right) "
      "the sorted training inputs, so the weight sits along the diagonal: a query looks at the keys near it. The band "
      "bends where inputs are dense (many columns per unit of $x$) or sparse. How many keys a query uses, in effect, "
      "is $1 / \\sum_i \\alpha_i^2$: $n$ for uniform weights, 1 when all weight sits on one key.");
  const Array<double> before = GaussianPooling(float(r.w_before)).predict(d.x_queries, d).second;
  const Array<double> after = model.predict(d.x_queries, d).second;
  const std::vector<std::string> keys = value_labels(d.x_train, 10), queries = value_labels(d.x_queries, 10);
  AttentionFigureOptions style{"Attention weights of the Gaussian kernel, before and after learning w", 2, 1900, 1000,
                               "Sorted training inputs (keys)", "Queries x"};
  style.colormap = plots::Colormap::reds();
  style.vmax = std::max(xt::amax(before)(), xt::amax(after)());  // 0.3 to 0.7: on 0..1 the spread rows would be pale
  save_figure(attention_figure({{before, keys, queries, "Before learning (w = " + fixed(r.w_before, 2) + ")"},
                                {after, keys, queries, "After learning (w = " + fixed(r.w_after, 2) + ")"}}, style),
              "attention_weights", "Attention weights, rows = queries on a grid over [0, 5], columns = the sorted "
                                   "training inputs (keys), before and after learning $w$; one color scale for both");
  const double k_before = keys_per_query(before), k_after = keys_per_query(after);
  metric("keys_per_query_before", k_before);
  metric("keys_per_query_after", k_after);
  claim({"learning_narrows_rows", "keys_per_query_after < keys_per_query_before / 2",
         text("Learning $w$ narrows each row: a query attends to ", fixed(k_before, 1), " keys in effect before "
              "learning and ", fixed(k_after, 1), " after, from much of the data set to its few nearest neighbours."),
         text("Learning $w$ narrowed the rows less than twofold here: ", fixed(k_before, 1), " keys per query in "
              "effect before learning, ", fixed(k_after, 1), " after.")});
  std::size_t q0 = 18, key0 = 0;  // a slice: queries 1.85 ... 2.25 against the 8 keys nearest to them
  while (key0 + 8 < d.x_train.size() && d.x_train(key0 + 4) < d.x_queries(q0 + 2)) ++key0;
  std::vector<std::string> rl, cl;
  for (std::size_t i = q0; i < q0 + 5; ++i) rl.push_back("q=" + fixed(d.x_queries(i), 2));
  for (std::size_t j = key0; j < key0 + 8; ++j) cl.push_back("k=" + fixed(d.x_train(j), 2));
  say("A slice of the learned matrix: 5 queries near $x = 2$ (rows) against the 8 training keys nearest to them "
      "(columns). A full row, over all 50 keys, sums to 1.");
  matrix("attention weights (after learning)", xt::view(after, xt::range(q0, q0 + 5), xt::range(key0, key0 + 8)), rl,
         cl, 3);
  for (const Array<double>* w : {&before, &after})
    worst_row_error = std::max(worst_row_error, double(xt::amax(xt::abs(xt::sum(*w, {1}) - 1.0))()));
  metric("max_row_sum_error", worst_row_error);
  claim({"rows_sum_to_one", "max_row_sum_error <= 1e-5",
         text("Every row of every attention matrix here sums to 1, to within ", sci(worst_row_error), " (float rounding "
              "in the learned softmax), except the empty boxcar and Epanechnikov windows, which have no weights at all."),
         text("Some row of the attention matrices is off from 1 by ", sci(worst_row_error), ": more than rounding.")});
}

// The attention explorer (lessons/kit/explorer.hpp) on held-out points: each kernel of section 2 a "layer" with its
// three widths as its heads, and the Gaussian of section 3 at w before learning, learned, and learned self visible.
void explore(const Data& d, const std::vector<double>& widths, const std::vector<double>& w) {
  ExplorerPage page{"Lesson 01: attention pooling on held-out points", "held-out queries x", "training keys x",
                    text("Each held-out query (right) averages the training targets of the keys (left) it weighs. Layers "
                         "are the kernels, their heads the widths h = ", listing({fixed(widths[0], 1), fixed(widths[1], 1),
                         fixed(widths[2], 1)}), "; the last layer is the learned Gaussian at w = ", fixed(w[0], 2), " (before "
                         "learning), ", fixed(w[1], 2), " (learned with the self-mask) and ", fixed(w[2], 2), " (learned "
                         "without it). The scores are distances, not dot products: there is no neuron view."), {}};
  const auto weights_of = [&](std::size_t layer, std::size_t head, const Array<double>& x) {  // layer 3: learned
    return layer < 3 ? kernel_pooling(kKernels[layer], widths[head], x, d).weights : GaussianPooling(float(w[head])).predict(x, d).second;
  };
  for (std::size_t from : {0, 20}) {  // two sets of 20 validation points, sorted (lessons/kit/point_attention.hpp)
    Array<double> x = xt::view(d.x_val, xt::range(from, from + 20));
    std::sort(x.begin(), x.end());
    page.inputs.push_back(points_input(text("validation points ", from + 1, " to ", from + 20), x, d.x_train,
                                       {kKernelNames[0], kKernelNames[1], kKernelNames[2], "learned Gaussian"}, 3, weights_of));
  }
  show_explorer(page, "explorer", "The attention explorer on held-out points: every kernel at every width, and the "
                                  "learned Gaussian; hover a query to read its weights over the training keys");
}

}  // namespace

int main(int argc, char** argv) {
  const LessonInfo info{"01_attention_pooling", "Attention pooling: Nadaraya-Watson kernel regression",
                        "Attention as a soft lookup: kernels as attention weights, then a learned Gaussian width",
                        "val_mse_learned", "parametric_fit"};
  return run_lesson(info, argc, argv, [] {
    const std::size_t n_train = 50, n_val = full_or_quick<std::size_t>(1000, 200);
    Recipe recipe;  // full-batch Adam at a constant rate: one parameter, no noise to average
    recipe.epochs = epochs(400, 150), recipe.batch = 0, recipe.lr = 0.2;
    recipe.decay = Decay::constant, recipe.clip = 0.0;
    const std::vector<double> widths = {0.1, 0.3, 1.0};
    config({{"n_train", n_train}, {"n_val", n_val}, {"noise_std", kNoiseStd}, {"steps", recipe.epochs},
            {"lr", recipe.lr}});
    const Data d = make_data(n_train, n_val);
    section("1. Data: a noisy curve");
    the_data(d);
    section("2. Attention pooling with fixed kernels");
    double worst_row_error = 0;
    const std::vector<double> gaussian_val_mse = fixed_kernels(d, widths, worst_row_error);
    section("3. Learning the width: parametric attention pooling");
    GaussianPooling model(1.0f);
    const Learned learned = learn_the_width(model, d, recipe, widths, gaussian_val_mse);
    const double w_visible = without_the_mask(model, learned, d, recipe);
    section("4. The attention weights");
    the_weights(model, d, learned, worst_row_error);
    explore(d, widths, {learned.w_before, learned.w_after, w_visible});
    section("5. The pattern of every later lesson");
    say("Attention pooling: score each key against the query, turn the scores into a distribution (a normalized kernel, "
        "or a softmax of scores), average the values under it. The width, how sharply scores separate near keys from "
        "far ones, trades copying noise against blurring the signal; gradient descent can choose it when the objective "
        "cannot cheat by letting a point look up its own answer. Later lessons keep the pipeline and learn richer "
        "scores: dot products of learned query and key vectors.");
  });
}
