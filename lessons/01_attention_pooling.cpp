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

#include "lessons/kit/kit.hpp"

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
  say("We draw ", d.x_train.size(), " training inputs x uniformly in [0, 5], sorted, with y = 2 sin x + x^0.8 + "
      "Gaussian noise of standard deviation ", fixed(kNoiseStd, 1), ", and ", d.x_val.size(), " validation points "
      "the same way, never used in fitting: every score is measured on them. 'val MSE' compares with the NOISY "
      "validation targets (even the true function scores about the noise variance, ", fixed(kNoiseStd * kNoiseStd, 2),
      ": the floor), 'true MSE' with the noise-free function at 201 points over [0, 5] (floor 0).");
  const Errors mean = mean_baseline(d), truth = errors_of(truth_on, d);
  say("The training mean (", fixed(xt::mean(d.y_train)(), 3), "), predicted everywhere, gives val MSE ",
      fixed(mean.val, 4), " (true MSE ", fixed(mean.truth, 4), "); the true function ", fixed(truth.val, 4),
      " (this sample's noise). A useful model lands between, near the second.");
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

// Fits on the grid, each in its legend place's color, over the training points (+) and the truth (dashed).
struct Fit { std::string name; Array<double> y; std::size_t color; };
void fit_panel(plots::Panel& panel, const Data& d, const std::vector<Fit>& fits) {
  plots::Series truth = dashed({"", d.x_grid, d.y_grid});
  truth.color = plots::Color::hex("#222222");
  std::vector<plots::Series> series{plus_marks(d.x_train, d.y_train, 0.06, 0.11), truth};
  for (const Fit& f : fits) series.emplace_back(f.name, d.x_grid, f.y).color = plots::series_color(f.color);
  plots::line_plot(panel.xlabel("x (query)").ylabel("y"), series, y_range(-3.5, 6.0));
}

double fixed_kernels(const Data& d, const std::vector<double>& widths, std::vector<double>& gaussian_val_mse) {
  say("Attention is a soft lookup in a table of (key, value) pairs, here the training set: key x_i, value y_i. A hard "
      "lookup returns the value of the key matching the query x (an input to predict at); attention weighs every key, "
      "a(x, x_i) >= 0 with sum_i a(x, x_i) = 1 (a probability distribution over the keys, the attention distribution), "
      "and returns f(x) = sum_i a(x, x_i) y_i. This is Nadaraya-Watson kernel regression: a(x, x_i) = K(x - x_i) / "
      "sum_j K(x - x_j), for a kernel K that is large when the query is near the key.");
  say("Three kernels at widths h = 0.1, 0.3 and 1.0: Gaussian exp(-u^2 / (2 h^2)) (every key keeps some weight), "
      "boxcar 1[|u| <= h] (a plain average of the keys within h), Epanechnikov max(0, 1 - (u/h)^2) (a fading window). "
      "The last two can hold no key: 50 points on [0, 5] lie 0.1 apart on average, so a window of half-width 0.1 "
      "often falls into a hole, its weights 0/0. We show it: a gap in the curve, the empty windows among the "
      "validation queries counted, and for the score the nearest key's value (the first a widening window catches).");
  plots::Figure fig(1800, 1300, 2, 2);
  fig.title("Nadaraya-Watson attention pooling with fixed kernels (dashed: truth, +: training points)");
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> best;
  double worst_row_error = 0;
  int widest_is_worst = 0;
  for (Kernel k : kKernels) {
    const char* name = kKernelNames[int(k)];
    std::vector<double> val;
    std::vector<Fit> fits;  // on the grid, NaN in empty windows
    for (double h : widths) {
      const Pooled pv = kernel_pooling(k, h, d.x_val, d), pg = kernel_pooling(k, h, d.x_grid, d);
      const double vm = mse_of(pv.scored, d.y_val), tm = mse_of(pg.scored, d.y_grid);
      worst_row_error = std::max({worst_row_error, pv.row_sum_error, pg.row_sum_error});
      fits.push_back({"h = " + fixed(h, 1), pg.shown, fits.size()});
      std::string tag = text(name, "_", fixed(h, 1));  // "gaussian_0p1"
      for (char& c : tag) c = c == '.' ? 'p' : char(std::tolower(c));
      metric("val_mse_" + tag, vm);
      metric("true_mse_" + tag, tm);
      val.push_back(vm);
      rows.push_back(row(name, fixed(h, 1), fixed(vm, 4), fixed(tm, 4), text(pv.empty_rows, " / ", d.x_val.size())));
    }
    const std::size_t b = std::size_t(std::min_element(val.begin(), val.end()) - val.begin());
    best.push_back(text(name, " h = ", fixed(widths[b], 1), " (", fixed(val[b], 4), ")"));
    widest_is_worst += std::max_element(val.begin(), val.end()) - val.begin() == long(widths.size()) - 1;
    if (k == Kernel::Gaussian) gaussian_val_mse = val;
    fit_panel(fig.panel(int(k) + 1).title(std::string(name) + " kernel"), d, fits);
  }
  table({"kernel", "width h", "val MSE (noisy targets)", "true MSE (noise-free)", "empty windows (val queries)"}, rows);
  say("Width matters far more than the kernel's shape. Best width of the three, by validation MSE: ", listing(best),
      ". The widest, h = ", fixed(widths.back(), 1), ", scores worst for ", widest_is_worst, " of the 3 kernels.");
  say("Why: a narrow window copies the noise of its one or two nearest keys (the jagged curves); a wide one averages "
      "much of the data set, flattening the peak near x = 1.9 and the dip near x = 4.4 (bias); between, the errors "
      "balance. One h is not one spread: a boxcar of half-width h has standard deviation h / sqrt(3), an "
      "Epanechnikov window h / sqrt(5), the Gaussian h; at one h the Gaussian is the widest, so it prefers a smaller h.");
  const Array<double> u = xt::linspace<double>(-3.5, 3.5, 281);
  std::vector<plots::Series> shapes;
  for (Kernel k : kKernels) shapes.emplace_back(kKernelNames[int(k)], u, kernel_of(k, u, 1.0));
  plots::line_plot(fig.panel(0).title("The kernels K(u) at width h = 1").xlabel("u = query - key").ylabel("K(u)"),
                   shapes, y_range(0.0, 1.5));
  save_figure(fig, "kernel_fits", "The three kernels (top left) and their fits at three widths against the truth and "
                                  "the 50 training points; gaps in the boxcar and Epanechnikov curves are windows "
                                  "holding no key");
  return worst_row_error;
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

// Full-batch Adam on w, minimizing the mean squared error of the training targets, each predicted from the others
// (hidden_self) or from all points including itself. Returns w before each step.
std::vector<double> train_width(GaussianPooling& model, const Data& d, int steps, double lr, bool hidden_self,
                                History& history) {
  nn::Adam<float> opt(model.parameters(), lr);
  FitOptions fo;
  fo.label = hidden_self ? "train w (leave-one-out)" : "train w (self visible)";
  fo.epochs = steps, fo.batch = 0;  // full batch: every training point in every step, one step per pass
  std::vector<double> w;
  history = fit(model, opt, d.x_train.size(), [&](const std::vector<std::size_t>&) {
    w.push_back(model.w.item());
    return mse(model.forward(d.x_train, d, hidden_self).output, d.values);
  }, fo);
  return w;
}

// The leave-one-out training: w and the errors at w = 1 and after learning, its history, and w before each step.
struct Learned { double w_before, w_after; Errors before, after; History history; std::vector<double> w; };

Learned learn_the_width(GaussianPooling& model, const Data& d, int steps, double lr, const std::vector<double>& widths,
                        const std::vector<double>& gaussian_val_mse) {
  say("Now the model chooses the width: a(q, k_i) = softmax_i(-((q - k_i) w)^2 / 2) is the Gaussian kernel of width "
      "1/w as a softmax over scores, the form of every later lesson (scores, a softmax over the keys, a weighted sum "
      "of values). Gradient descent (Adam, lr ", fixed(lr, 2), ", full batch, ", steps, " steps) trains w on the "
      "training targets' MSE, our autograd differentiating through the softmax and the matrix product back to w.");
  say("One trap: if a point may attend to itself, the best w is infinite: width 0 puts all weight on its own key and "
      "reproduces its noisy target, training loss 0, a useless model. So each training query attends to the OTHER 49 "
      "points (masked_softmax, Allowed::except on the diagonal: own weight exactly 0); the training loss is then the "
      "leave-one-out error, an honest estimate of the error on new points. We start from w = 1 (section 2's h = 1.0).");
  Learned r{model.w.item(), 0, model.errors(d), {}, {}, {}};
  r.w = train_width(model, d, steps, lr, true, r.history);
  r.w_after = model.w.item(), r.after = model.errors(d);
  auto step_row = [](auto s, double loss, double w) { return row(s, fixed(loss, 4), fixed(w, 3), fixed(1.0 / w, 3)); };
  std::vector<std::vector<std::string>> rows;
  for (std::size_t s = 0; s < std::size_t(steps); s += std::size_t(std::max(1, steps / 8)))
    rows.push_back(step_row(s, r.history.loss[s], r.w[s]));
  const NoGrad no_grad;  // the loss after the last step (the history holds the loss before each step)
  const Tensor<float> final_loss = mse(model.forward(d.x_train, d, true).output, d.values);
  rows.push_back(step_row(text(steps, " (end)"), final_loss.item(), r.w_after));
  table({"step", "training loss (leave-one-out MSE)", "w", "width 1/w"}, rows);
  timing("train_ms_per_step", r.history.median_step_ms());
  const auto g = std::min_element(gaussian_val_mse.begin(), gaussian_val_mse.end()) - gaussian_val_mse.begin();
  say("The leave-one-out loss fell from ", fixed(r.history.loss.front(), 4), " to ", fixed(r.history.loss.back(), 4),
      " as w grew from ", fixed(r.w_before, 2), " to ", fixed(r.w_after, 3), " (width 1.0 to ",
      fixed(1.0 / r.w_after, 3), "). Learning the width is choosing how local each lookup is: a larger w makes scores "
      "fall off faster with distance, concentrating the softmax on the nearest keys; the gradient stops where "
      "narrowing further would copy noise. Val MSE: ", fixed(r.after.val, 4), " learned, ", fixed(r.before.val, 4),
      " before; the best hand-picked Gaussian width, h = ", fixed(widths[g], 1), ", scored ",
      fixed(gaussian_val_mse[g], 4),
      r.after.val <= gaussian_val_mse[g]
          ? ". The learned width does at least as well, without anyone trying widths."
          : ". The learned width is a little behind, but the best of three was picked by its validation score; the "
            "learned w saw only the training data.");
  return r;
}

void without_the_mask(const GaussianPooling& model, const Learned& r, const Data& d, int steps, double lr) {
  GaussianPooling free_model(1.0f);
  History visible;
  const std::vector<double> w_free = train_width(free_model, d, steps, lr, false, visible);
  const double w_visible = free_model.w.item();
  const Errors free_errors = free_model.errors(d);
  const Errors nearest = errors_of([&](const Array<double>& x) { return nearest_values(x, d); }, d);
  const std::size_t late = std::size_t(steps) * 9 / 10;  // drift: w's change over the last tenth / its final value
  const double masked_drift = std::abs(r.w.back() - r.w[late]) / r.w.back();
  const double visible_drift = (w_free.back() - w_free[late]) / w_free.back();
  const std::string masked_moved = masked_drift < 1e-4 ? std::string("less than 0.01") : fixed(100 * masked_drift, 2);
  say("For contrast, the same training without the self-mask. With the mask, w ",
      masked_drift < 0.01 ? text("has settled (it moved ", masked_moved, " % over the last tenth of the steps)")
                          : text("is still moving (", fixed(100 * masked_drift, 1), " % over the last tenth)"),
      ". Without it, w reached ", fixed(w_visible, 2), " (width ", fixed(1.0 / w_visible, 3), ") and ",
      visible_drift > 0.01 ? text("is still climbing (", fixed(100 * visible_drift, 1), " % over the last tenth)")
                           : std::string("has slowed down"),
      ", its training loss down to ", fixed(visible.loss.back(), 4), ". Nothing stops it: the training loss reaches "
      "its minimum, 0, only at w = infinity, all weight on the nearest key: a nearest-neighbour lookup (val MSE ",
      fixed(nearest.val, 4), ", true MSE ", fixed(nearest.truth, 4), "). Its val MSE now, ", fixed(free_errors.val, 4),
      free_errors.val > r.after.val
          ? text(", is already worse than the masked model's ", fixed(r.after.val, 4), "; more steps only carry it "
                 "further towards that limit.")
          : text(", happens to be below the masked model's ", fixed(r.after.val, 4), ": stopped early, the runaway "
                 "passes through good widths on its way to that limit, but when to stop would be our guess; with the "
                 "mask, the data decide the width."));
  metric("val_mse_nearest_neighbour", nearest.val);
  const Errors mean = mean_baseline(d);
  auto model_row = [](const std::string& name, double w, const Errors& e) {
    return row(name, fixed(w, 3), fixed(1.0 / w, 3), fixed(e.val, 4), fixed(e.truth, 4));
  };
  table({"model", "w", "width 1/w", "val MSE (noisy targets)", "true MSE (noise-free)"},
        {row("mean of training y", "-", "-", fixed(mean.val, 4), fixed(mean.truth, 4)),
         model_row("Gaussian, before learning", r.w_before, r.before),
         model_row("Gaussian, learned (self masked)", r.w_after, r.after),
         model_row("Gaussian, learned (self visible)", w_visible, free_errors),
         row("nearest neighbour (w = infinity)", "inf", "0", fixed(nearest.val, 4), fixed(nearest.truth, 4))});
  metric("learned_w", r.w_after);
  metric("learned_width", 1.0 / r.w_after);
  metric("val_mse_before_learning", r.before.val);
  metric("val_mse_learned", r.after.val);
  metric("true_mse_before_learning", r.before.truth);
  metric("true_mse_learned", r.after.truth);
  metric("val_mse_learned_self_visible", free_errors.val);

  plots::Figure fig(2100, 760, 1, 3);
  fig.title("Parametric attention pooling: learning the Gaussian width");
  const Array<double> fit_before = GaussianPooling(float(r.w_before)).predict(d.x_grid, d).first;
  fit_panel(fig.panel(0).title("Fit before and after learning"), d,
            {{"before (w = " + fixed(r.w_before, 2) + ")", fit_before, 0},
             {"after (w = " + fixed(r.w_after, 2) + ")", model.predict(d.x_grid, d).first, 3}});
  plots::line_plot(fig.panel(1).title("Training loss (MSE)").xlabel("step").ylabel("loss"),
                   {curve("self masked", r.history.loss), dashed(curve("self visible", visible.loss))});
  plots::line_plot(fig.panel(2).title("The parameter w").xlabel("step").ylabel("w"),
                   {curve("self masked", r.w), dashed(curve("self visible", w_free))});
  save_figure(fig, "parametric_fit", "Left: the fit before (w = 1) and after learning w with each training point "
                                     "masked from its own lookup. Middle and right: loss and w per step, with and "
                                     "without that mask");
}

// ---------------------------------------------------------------------------------------------
// 4. The attention weights
// The learned model's heatmaps and a slice of its weights; `worst_row_error` is section 2's.
void the_weights(const GaussianPooling& model, const Data& d, const Learned& r, double worst_row_error) {
  say("Each row of the attention matrix is one query's distribution over the 50 sorted training keys. In the "
      "heatmaps, rows (top to bottom) are 50 evenly spaced queries x = 0.05, 0.15, ..., 4.95, columns (left to right) "
      "the sorted training inputs, so the weight sits along the diagonal: a query looks at the keys near it. The band "
      "bends where inputs are dense (many columns per unit of x) or sparse, a row spreading over more keys where they "
      "crowd. Learning w narrows it from much of the data set to a query's few nearest neighbours.");
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
                                   "training inputs (keys), before and after learning w; one color scale for both");
  std::size_t q0 = 18, key0 = 0;  // a slice: queries 1.85 ... 2.25 against the 8 keys nearest to them
  while (key0 + 8 < d.x_train.size() && d.x_train(key0 + 4) < d.x_queries(q0 + 2)) ++key0;
  std::vector<std::string> rl, cl;
  for (std::size_t i = q0; i < q0 + 5; ++i) rl.push_back("q=" + fixed(d.x_queries(i), 2));
  for (std::size_t j = key0; j < key0 + 8; ++j) cl.push_back("k=" + fixed(d.x_train(j), 2));
  say("A slice of the learned matrix: 5 queries near x = 2 (rows), their 8 nearest training keys (columns). A full "
      "row (all 50 keys) sums to 1; the slice holds most of each row's weight, the largest on the closest keys.");
  matrix("attention weights (after learning)", xt::view(after, xt::range(q0, q0 + 5), xt::range(key0, key0 + 8)), rl,
         cl, 3);
  for (const Array<double>* w : {&before, &after})
    worst_row_error = std::max(worst_row_error, double(xt::amax(xt::abs(xt::sum(*w, {1}) - 1.0))()));
  say("Every row of every attention matrix here sums to 1, to within ", sci(worst_row_error), " (float rounding in "
      "the learned softmax), except the empty boxcar and Epanechnikov windows, which have no weights at all.");
  metric("max_row_sum_error", worst_row_error);
}

}  // namespace

int main(int argc, char** argv) {
  const LessonInfo info{"01_attention_pooling", "Attention pooling: Nadaraya-Watson kernel regression",
                        "Attention as a soft lookup: kernels as attention weights, then a learned Gaussian width",
                        "val_mse_learned"};
  return run_lesson(info, argc, argv, [] {
    const std::size_t n_train = 50, n_val = full_or_quick<std::size_t>(1000, 200);
    const int steps = epochs(400, 150);
    const double lr = 0.2;
    const std::vector<double> widths = {0.1, 0.3, 1.0};
    config({{"n_train", n_train}, {"n_val", n_val}, {"noise_std", kNoiseStd}, {"steps", steps}, {"lr", lr}});
    const Data d = make_data(n_train, n_val);
    section("1. Data: a noisy curve");
    the_data(d);
    section("2. Attention pooling with fixed kernels");
    std::vector<double> gaussian_val_mse;
    const double worst_row_error = fixed_kernels(d, widths, gaussian_val_mse);
    section("3. Learning the width: parametric attention pooling");
    GaussianPooling model(1.0f);
    const Learned learned = learn_the_width(model, d, steps, lr, widths, gaussian_val_mse);
    without_the_mask(model, learned, d, steps, lr);
    section("4. The attention weights");
    the_weights(model, d, learned, worst_row_error);
    section("5. What to take away");
    say("Attention pooling: score each key against the query, turn the scores into a distribution (normalized kernel, "
        "or softmax of scores), average the values under it. The width, how sharply scores separate near keys from "
        "far ones, trades copying noise against blurring the signal; gradient descent can learn it if the objective "
        "cannot cheat by letting a point look up its own answer. Later lessons keep the pipeline, learning richer "
        "scores: dot products of learned query and key vectors.");
  });
}
