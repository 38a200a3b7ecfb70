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

// The function the data come from.
Array<double> truth_on(const Array<double>& x) { return 2.0 * xt::sin(x) + xt::pow(x, 0.8); }

struct Data {
  Array<double> x_train, y_train;  // sorted training inputs (the keys) and targets (the values)
  Tensor<float> values;            // y_train as a (n, 1) float column, for the learned model
  Array<double> x_val, y_val;      // held-out noisy validation set (the metric)
  Array<double> x_grid, y_grid;    // fine grid over [0, 5] and the noise-free function on it
  Array<double> x_queries;         // coarse grid: the rows of the attention heatmaps
};

Data make_data(std::size_t n_train, std::size_t n_val) {
  Generator gen(seed());
  auto inputs = [&](std::size_t n, bool sorted) {
    Array<double> x = xt::zeros<double>({n});
    for (double& v : x) v = gen.uniform(0.0, kXMax);
    if (sorted) std::sort(x.begin(), x.end());
    return x;
  };
  auto noisy = [&](const Array<double>& x) {
    Array<double> y = truth_on(x);
    for (double& v : y) v += gen.normal(0.0, kNoiseStd);
    return y;
  };
  Data d;
  d.x_train = inputs(n_train, true);
  d.y_train = noisy(d.x_train);
  Array<float> values = xt::cast<float>(d.y_train);
  values.reshape({n_train, std::size_t(1)});
  d.values = Tensor<float>(std::move(values));
  d.x_val = inputs(n_val, false);
  d.y_val = noisy(d.x_val);
  d.x_grid = xt::linspace<double>(0.0, kXMax, 201);
  d.y_grid = truth_on(d.x_grid);
  d.x_queries = xt::arange<double>(0.05, kXMax, 0.1);  // 50 cell centres 0.05 ... 4.95
  return d;
}

double mse_of(const Array<double>& pred, const Array<double>& target) { return xt::mean(xt::square(pred - target))(); }

// The two errors of every model here, `predict` mapping queries to predictions: the MSE against the
// noisy validation targets, and against the noise-free function on the grid.
struct Errors { double val, truth; };
template <class Predict>
Errors errors_of(const Predict& predict, const Data& d) {
  return {mse_of(predict(d.x_val), d.y_val), mse_of(predict(d.x_grid), d.y_grid)};
}

// The simplest model: the mean of the training targets, predicted everywhere.
Errors mean_baseline(const Data& d) {
  const double mean_y = xt::mean(d.y_train)();
  return errors_of([&](const Array<double>& x) -> Array<double> { return xt::full_like(x, mean_y); }, d);
}

// The value of the training key nearest to each query (the first of equally near ones): what a
// window widening around the query catches first, and what attention becomes as its width goes to 0.
Array<double> nearest_values(const Array<double>& queries, const Data& d) {
  Array<double> out = xt::zeros<double>({queries.size()});
  for (std::size_t i = 0; i < queries.size(); ++i) out(i) = d.y_train(xt::argmin(xt::abs(d.x_train - queries(i)))());
  return out;
}

void the_data(const Data& d) {
  say("We draw ", d.x_train.size(), " training inputs x uniformly in [0, 5], sort them, and set y = 2 sin x + x^0.8 + "
      "noise, with Gaussian noise of standard deviation ", fixed(kNoiseStd, 1), ". A separate validation set of ",
      d.x_val.size(), " points, drawn the same way, never touches any fitting: every score below is measured on it. We "
      "report two errors. 'val MSE' compares predictions with the NOISY validation targets; even the true function "
      "scores about the noise variance ", fixed(kNoiseStd * kNoiseStd, 2), " there, so that is the floor. 'true MSE' "
      "compares predictions with the noise-free function on a grid of 201 points over [0, 5]; its floor is 0.");
  const Errors mean = mean_baseline(d), truth = errors_of(truth_on, d);
  say("Two reference points: predicting the training mean (", fixed(xt::mean(d.y_train)(), 3), ") everywhere gives "
      "val MSE ", fixed(mean.val, 4), " (true MSE ", fixed(mean.truth, 4), "); the true function itself gives val MSE ",
      fixed(truth.val, 4), " (the noise in this validation sample). A useful model lands in between, close to the second.");
  metric("val_mse_mean_baseline", mean.val);
  metric("val_mse_true_function", truth.val);
}

// ---------------------------------------------------------------------------------------------
// 2. Non-parametric attention pooling: fixed kernels

enum class Kernel { Gaussian, Boxcar, Epanechnikov };
const Kernel kKernels[] = {Kernel::Gaussian, Kernel::Boxcar, Kernel::Epanechnikov};
const char* const kKernelNames[] = {"Gaussian", "boxcar", "Epanechnikov"};

// K(u) for a distance u = q - k and width h. Unnormalized: the constants cancel when the weights
// are normalized. Gaussian: h is the standard deviation; boxcar and Epanechnikov: h is the
// half-width of the window, outside which the key gets exactly zero weight.
double kernel_value(Kernel k, double u, double h) {
  const double t = u / h;
  switch (k) {
    case Kernel::Gaussian: return std::exp(-0.5 * t * t);
    case Kernel::Boxcar: return std::abs(t) <= 1.0 ? 1.0 : 0.0;
    case Kernel::Epanechnikov: return std::max(0.0, 1.0 - t * t);
  }
  return 0.0;
}

// Nadaraya-Watson: row i of the attention matrix is K(q_i - k_j) / sum_j K(q_i - k_j), and the
// prediction f(q_i) = sum_j a_ij v_j. A row whose kernel sum is 0 (a window holding no key) has no
// weights: it stays all zero, its prediction is NaN for the curves (an honest gap) and, for the
// score, the value of the nearest key.
struct Pooled {
  Array<double> weights, shown, scored;  // scored: shown, with the nearest key's value in the gaps
  std::size_t empty_rows = 0;
  double row_sum_error = 0;  // max |sum_j a_ij - 1| over the rows with weights
};

Pooled kernel_pooling(Kernel k, double h, const Array<double>& queries, const Data& d) {
  const std::size_t m = queries.size(), n = d.x_train.size();
  Pooled p{xt::zeros<double>({m, n}), xt::zeros<double>({m}), nearest_values(queries, d)};
  for (std::size_t i = 0; i < m; ++i) {
    double total = 0;  // sum_j K(q_i - k_j)
    for (std::size_t j = 0; j < n; ++j) total += p.weights(i, j) = kernel_value(k, queries(i) - d.x_train(j), h);
    if (total == 0) {  // 0/0
      p.shown(i) = std::nan(""), ++p.empty_rows;
      continue;
    }
    double f = 0, sum = 0;
    for (std::size_t j = 0; j < n; ++j) {
      p.weights(i, j) /= total;
      f += p.weights(i, j) * d.y_train(j);
      sum += p.weights(i, j);
    }
    p.shown(i) = p.scored(i) = f;
    p.row_sum_error = std::max(p.row_sum_error, std::abs(sum - 1.0));
  }
  return p;
}

// A fitted curve on the grid, in the color of its place in the legend.
plots::Series fit_curve(const std::string& name, const Data& d, const Array<double>& y, std::size_t color) {
  plots::Series s(name, d.x_grid, y);
  s.color = plots::series_color(color);
  return s;
}

// A panel of fits, drawn over the training points (+) and the truth (dashed), on one y range.
void fit_panel(plots::Panel& panel, const Data& d, const std::vector<plots::Series>& fits) {
  plots::Series truth("", d.x_grid, d.y_grid);
  truth.color = plots::Color::hex("#222222");
  truth.dashed = true;
  std::vector<plots::Series> series{plus_marks(d.x_train, d.y_train, 0.06, 0.11), truth};
  series.insert(series.end(), fits.begin(), fits.end());
  plots::LineOptions o;
  o.ymin = -3.5, o.ymax = 6.0;
  plots::line_plot(panel.xlabel("x (query)").ylabel("y"), series, o);
}

double fixed_kernels(const Data& d, const std::vector<double>& widths, std::vector<double>& gaussian_val_mse) {
  say("Attention is a soft lookup in a table of (key, value) pairs. Here the table is the training set: each key is a "
      "training input x_i, its value is the target y_i. A query is an input x where we want a prediction. A hard "
      "lookup would return the value of the one matching key; attention instead gives every key a weight "
      "a(x, x_i) >= 0 with sum_i a(x, x_i) = 1 (a probability distribution over the keys, the attention "
      "distribution) and returns the weighted average f(x) = sum_i a(x, x_i) y_i. This is Nadaraya-Watson kernel "
      "regression: a(x, x_i) = K(x - x_i) / sum_j K(x - x_j) for a kernel K that is large when the query is near the key.");
  say("Three kernels, each at widths h = 0.1, 0.3 and 1.0: Gaussian exp(-u^2 / (2 h^2)) (every key keeps some weight), "
      "boxcar 1[|u| <= h] (a plain average of the keys within h), Epanechnikov max(0, 1 - (u/h)^2) (a window that "
      "fades out). The boxcar and Epanechnikov windows can hold no key at all: with 50 points on [0, 5] the average "
      "gap is 0.1, so a window of half-width 0.1 often falls into a hole. There the weights are 0/0, undefined. We do "
      "not hide it: the curve shows a gap, the table counts the empty windows among the validation queries, and for "
      "the score such a query takes the value of its nearest key (the first key a widening window would catch).");
  std::vector<std::vector<std::string>> rows;
  std::vector<xt::xarray<double>> curves;  // per (kernel, width), on the grid, NaN in empty windows
  std::vector<std::string> best;
  double worst_row_error = 0;
  int widest_is_worst = 0;
  for (Kernel k : kKernels) {
    std::vector<double> val;
    for (double h : widths) {
      const Pooled pv = kernel_pooling(k, h, d.x_val, d), pg = kernel_pooling(k, h, d.x_grid, d);
      const double vm = mse_of(pv.scored, d.y_val), tm = mse_of(pg.scored, d.y_grid);
      worst_row_error = std::max({worst_row_error, pv.row_sum_error, pg.row_sum_error});
      curves.push_back(pg.shown);
      std::string tag = std::string(kKernelNames[int(k)]) + "_" + fixed(h, 1);  // "gaussian_0p1"
      std::transform(tag.begin(), tag.end(), tag.begin(), [](char c) { return c == '.' ? 'p' : char(std::tolower(c)); });
      metric("val_mse_" + tag, vm);
      metric("true_mse_" + tag, tm);
      val.push_back(vm);
      rows.push_back(row(kKernelNames[int(k)], fixed(h, 1), fixed(vm, 4), fixed(tm, 4), text(pv.empty_rows, " / ", d.x_val.size())));
    }
    const std::size_t b = std::size_t(std::min_element(val.begin(), val.end()) - val.begin());
    best.push_back(text(kKernelNames[int(k)], " h = ", fixed(widths[b], 1), " (", fixed(val[b], 4), ")"));
    widest_is_worst += std::max_element(val.begin(), val.end()) - val.begin() == long(widths.size()) - 1;
    if (k == Kernel::Gaussian) gaussian_val_mse = val;
  }
  table({"kernel", "width h", "val MSE (noisy targets)", "true MSE (noise-free)", "empty windows (val queries)"}, rows);
  say("Width matters far more than the kernel's shape. Best width of the three, by validation MSE: ", listing(best),
      ". The widest window, h = ", fixed(widths.back(), 1), ", scores worst for ", widest_is_worst, " of the 3 kernels.");
  say("Why: a narrow window averages only the one or two nearest keys and copies their noise (the jagged curves); a "
      "wide one averages a large part of the data set and flattens the peak near x = 1.9 and the dip near x = 4.4 "
      "(bias). In between the two errors balance. Note that h means different spreads for different kernels: a "
      "boxcar of half-width h has standard deviation h / sqrt(3), an Epanechnikov window h / sqrt(5), while the "
      "Gaussian's h is its standard deviation, so at one h the Gaussian is the widest and tends to prefer a smaller h.");

  plots::Figure fig(1800, 1300, 2, 2);
  fig.title("Nadaraya-Watson attention pooling with fixed kernels (dashed: truth, +: training points)");
  std::vector<plots::Series> shapes;
  const xt::xarray<double> u = xt::linspace<double>(-3.5, 3.5, 281);
  for (Kernel k : kKernels) {
    xt::xarray<double> ku = xt::zeros<double>({u.size()});
    for (std::size_t i = 0; i < u.size(); ++i) ku(i) = kernel_value(k, u(i), 1.0);
    shapes.emplace_back(kKernelNames[int(k)], u, ku);
  }
  plots::LineOptions so;
  so.ymin = 0.0, so.ymax = 1.5;
  plots::line_plot(fig.panel(0).title("The kernels K(u) at width h = 1").xlabel("u = query - key").ylabel("K(u)"), shapes, so);
  for (std::size_t p = 0; p < 3; ++p) {
    std::vector<plots::Series> fits;
    for (std::size_t wi = 0; wi < widths.size(); ++wi)
      fits.push_back(fit_curve("h = " + fixed(widths[wi], 1), d, curves[p * widths.size() + wi], wi));
    fit_panel(fig.panel(int(p) + 1).title(std::string(kKernelNames[p]) + " kernel"), d, fits);
  }
  save_figure(fig, "kernel_fits", "The three kernels (top left) and their fits at three widths against the truth and "
                                  "the 50 training points; gaps in the boxcar and Epanechnikov curves are windows holding no key");
  return worst_row_error;
}

// ---------------------------------------------------------------------------------------------
// 3. Parametric attention pooling: a learned Gaussian width

// a(q, k_j) = softmax_j(-((q - k_j) w)^2 / 2): the Gaussian kernel of width 1/w, written as a
// softmax over scores, with one parameter "w".
class GaussianPooling : public nn::Module<float> {
 public:
  explicit GaussianPooling(float w0) : w(register_parameter("w", Tensor<float>::full({1}, w0))) {}
  // queries (m) against the keys and values (n): weights (m, n) and predictions (m, 1). With
  // hidden_self, query i is hidden from key i by the masked softmax: exactly zero weight on its own
  // target, and exactly zero gradient there (n - 1 keys stay, so no row is ever empty).
  AttentionResult<float> forward(const Array<double>& queries, const Data& d, bool hidden_self) const {
    const std::size_t m = queries.size(), n = d.x_train.size();
    Array<float> diff = xt::zeros<float>({m, n});
    for (std::size_t i = 0; i < m; ++i)
      for (std::size_t j = 0; j < n; ++j) diff(i, j) = float(queries(i) - d.x_train(j));
    const Tensor<float> scaled = Tensor<float>(diff) * w;  // w of shape (1,) broadcasts over (m, n)
    const Tensor<float> scores = -0.5f * (scaled * scaled);
    const Tensor<float> weights = hidden_self ? masked_softmax(scores, Allowed::except(xt::eye<bool>(n)))
                                              : softmax(scores, -1);
    return {matmul(weights, d.values), weights};
  }
  // Predictions and weights as plain arrays, without the tape.
  std::pair<Array<double>, Array<double>> predict(const Array<double>& queries, const Data& d) const {
    NoGrad no_grad;
    const auto r = forward(queries, d, false);
    Array<double> prediction = xt::cast<double>(r.output.value());
    prediction.reshape({queries.size()});
    return {prediction, xt::cast<double>(r.weights.value())};
  }

  Tensor<float> w;  // a handle to the registered parameter
};

Errors errors_of(const GaussianPooling& model, const Data& d) {
  return errors_of([&](const Array<double>& x) { return model.predict(x, d).first; }, d);
}

// Full-batch Adam on w, minimizing the mean squared error of the training targets, each predicted
// from the others (hidden_self) or from all points including itself. Returns w before each step.
std::vector<double> train_width(GaussianPooling& model, const Data& d, int steps, double lr, bool hidden_self,
                                History& history) {
  nn::Adam<float> opt(model.parameters(), lr);
  FitOptions fo;
  fo.label = hidden_self ? "train w (leave-one-out)" : "train w (self visible)";
  fo.epochs = steps;  // full batch: every training point in every step, one step per pass
  fo.batch = 0;
  std::vector<double> w;
  history = fit(model, opt, d.x_train.size(), [&](const std::vector<std::size_t>&) {
    w.push_back(model.w.item());
    return mse(model.forward(d.x_train, d, hidden_self).output, d.values);
  }, fo);
  return w;
}

struct Learned {
  double w_before, w_after;
  Errors before, after;   // the Gaussian at w = 1, and at the learned w
  History history;        // of the leave-one-out training
  std::vector<double> w;  // before each step
};

Learned learn_the_width(GaussianPooling& model, const Data& d, int steps, double lr, const std::vector<double>& widths,
                        const std::vector<double>& gaussian_val_mse) {
  say("Now we let the model choose the width. With a parameter w, the weights are a(q, k_i) = softmax_i(-((q - k_i) w)^2 "
      "/ 2): the same Gaussian kernel with width 1/w, written as a softmax over scores. That is the form every later "
      "lesson uses: scores, a softmax over the keys, a weighted sum of values. w is trained by gradient descent (Adam, "
      "lr ", fixed(lr, 2), ", full batch, ", steps, " steps) on the mean squared error of the training targets, our "
      "autograd differentiating through the softmax and the matrix product back to w.");
  say("One trap: if a training point may attend to itself, the best w is infinite: a width of 0 puts all weight on its "
      "own key and reproduces its own noisy target, training loss 0, a useless model. So each training query attends "
      "to the OTHER 49 points: its own key is hidden from its softmax (masked_softmax with Allowed::except on the "
      "diagonal, so its weight is exactly 0). The training loss is then the leave-one-out error, an honest estimate "
      "of the error on new points. We start from w = 1, the Gaussian of width 1.0 above.");
  Learned r{model.w.item(), 0, errors_of(model, d), {}, {}, {}};
  r.w = train_width(model, d, steps, lr, true, r.history);
  r.w_after = model.w.item();
  r.after = errors_of(model, d);
  std::vector<std::vector<std::string>> rows;
  for (std::size_t s = 0; s < std::size_t(steps); s += std::size_t(std::max(1, steps / 8)))
    rows.push_back(row(s, fixed(r.history.loss[s], 4), fixed(r.w[s], 3), fixed(1.0 / r.w[s], 3)));
  {
    NoGrad no_grad;  // the loss after the last step (the history holds the loss before each step)
    const double final_loss = mse(model.forward(d.x_train, d, true).output, d.values).item();
    rows.push_back(row(text(steps, " (end)"), fixed(final_loss, 4), fixed(r.w_after, 3), fixed(1.0 / r.w_after, 3)));
  }
  table({"step", "training loss (leave-one-out MSE)", "w", "width 1/w"}, rows);
  timing("train_ms_per_step", r.history.median_step_ms());
  const std::size_t best_g = std::size_t(std::min_element(gaussian_val_mse.begin(), gaussian_val_mse.end()) - gaussian_val_mse.begin());
  say("What happened: the leave-one-out loss fell from ", fixed(r.history.loss.front(), 4), " to ", fixed(r.history.loss.back(), 4),
      " as w grew from ", fixed(r.w_before, 2), " to ", fixed(r.w_after, 3), ", i.e. the kernel narrowed from width 1.0 "
      "to ", fixed(1.0 / r.w_after, 3), ". Learning the width is choosing how local each lookup is: a larger w makes the "
      "scores fall off faster with distance, so the softmax concentrates on the nearest keys; the gradient stops where "
      "narrowing further would start copying noise. On the validation set the learned model scores ", fixed(r.after.val, 4),
      " (from ", fixed(r.before.val, 4), " before learning); the best of the three hand-picked Gaussian widths, h = ",
      fixed(widths[best_g], 1), ", scored ", fixed(gaussian_val_mse[best_g], 4),
      r.after.val <= gaussian_val_mse[best_g] ? ". The learned width does at least as well, without anyone trying widths."
                                               : ". The learned width is a little behind, but picking the best of three by its "
                                                 "validation score used the validation set; the learned w used the training "
                                                 "data alone.");
  return r;
}

void without_the_mask(const GaussianPooling& model, const Learned& r, const Data& d, int steps, double lr) {
  say("For contrast, the same training with the self-mask removed:");
  GaussianPooling free_model(1.0f);
  History visible;
  const std::vector<double> w_free = train_width(free_model, d, steps, lr, false, visible);
  const double w_visible = free_model.w.item();
  const Errors free_errors = errors_of(free_model, d);
  const Errors nearest = errors_of([&](const Array<double>& x) { return nearest_values(x, d); }, d);
  // How far w moved, relative to where it ended, over the last tenth of the steps.
  const std::size_t late = std::size_t(steps) * 9 / 10;
  const double masked_drift = std::abs(r.w.back() - r.w[late]) / r.w.back();
  const double visible_drift = (w_free.back() - w_free[late]) / w_free.back();
  const std::string masked_moved = masked_drift < 1e-4 ? std::string("less than 0.01") : fixed(100 * masked_drift, 2);
  say("With the mask, w ",
      masked_drift < 0.01 ? text("has settled (it moved ", masked_moved, " % over the last tenth of the steps)")
                          : text("is still moving (", fixed(100 * masked_drift, 1), " % over the last tenth of the steps)"),
      ". Without it, w reached ", fixed(w_visible, 2), " (width ", fixed(1.0 / w_visible, 3), ") and ",
      visible_drift > 0.01 ? text("is still climbing (", fixed(100 * visible_drift, 1), " % over the last tenth)")
                           : std::string("has slowed down"),
      ", its training loss down to ", fixed(visible.loss.back(), 4), ". Nothing stops it: the training loss only reaches "
      "its minimum, 0, at w = infinity, where every query puts all its weight on the nearest key, a nearest-neighbour "
      "lookup (val MSE ", fixed(nearest.val, 4), ", true MSE ", fixed(nearest.truth, 4), "). Where it stands now, its val "
      "MSE ", fixed(free_errors.val, 4),
      free_errors.val > r.after.val ? text(" is already worse than the masked model's ", fixed(r.after.val, 4),
                                           ", and more steps only carry it further towards the nearest-neighbour limit.")
                                    : text(" happens to be below the masked model's ", fixed(r.after.val, 4), ": stopped early, the "
                                           "runaway is passing through good widths on its way to the nearest-neighbour limit. "
                                           "But when to stop would be our guess; with the mask, the data decide the width."));
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
            {fit_curve("before (w = " + fixed(r.w_before, 2) + ")", d, fit_before, 0),
             fit_curve("after (w = " + fixed(r.w_after, 2) + ")", d, model.predict(d.x_grid, d).first, 3)});
  plots::Series loss_free = curve("self visible", visible.loss), w_free_curve = curve("self visible", w_free);
  loss_free.dashed = w_free_curve.dashed = true;
  plots::line_plot(fig.panel(1).title("Training loss (MSE)").xlabel("step").ylabel("loss"), {curve("self masked", r.history.loss), loss_free});
  plots::line_plot(fig.panel(2).title("The parameter w").xlabel("step").ylabel("w"), {curve("self masked", r.w), w_free_curve});
  save_figure(fig, "parametric_fit", "Left: the fit before (w = 1) and after learning w with each training point masked "
                                     "from its own lookup. Middle and right: loss and w per step, with and without that mask");
}

// ---------------------------------------------------------------------------------------------
// 4. The attention weights

// The learned model's heatmaps and a slice of its weights; `worst_row_error` is section 2's.
void the_weights(const GaussianPooling& model, const Data& d, const Learned& r, double worst_row_error) {
  say("Each row of the attention matrix is one query's distribution over the 50 sorted training keys. The heatmaps use "
      "50 evenly spaced queries x = 0.05, 0.15, ..., 4.95 as rows (top to bottom) and the sorted training inputs as "
      "columns (left to right). Because both are sorted, the weight sits along the diagonal: a query looks at the keys "
      "near it. The band bends where the training inputs are dense (many columns per unit of x) or sparse, and each "
      "row spreads its weight over more keys where they crowd together. Learning w narrows the band: before, a query "
      "spreads its weight over much of the data set; after, over its few nearest neighbours.");
  const Array<double> before = GaussianPooling(float(r.w_before)).predict(d.x_queries, d).second;
  const Array<double> after = model.predict(d.x_queries, d).second;
  const std::vector<std::string> keys = value_labels(d.x_train, 10), queries = value_labels(d.x_queries, 10);
  AttentionFigure style{"Attention weights of the Gaussian kernel, before and after learning w", 2, 1900, 1000,
                        "Sorted training inputs (keys)", "Queries x"};
  style.colormap = plots::Colormap::reds();
  style.vmax = std::max(xt::amax(before)(), xt::amax(after)());  // 0.3 to 0.7: on 0..1 the spread rows would be pale
  save_figure(attention_figure({{before, keys, queries, "Before learning (w = " + fixed(r.w_before, 2) + ")"},
                                {after, keys, queries, "After learning (w = " + fixed(r.w_after, 2) + ")"}},
                               style),
              "attention_weights", "Attention weights, rows = queries on a grid over [0, 5], columns = the sorted "
                                   "training inputs (keys), before and after learning w; one color scale for both");
  // A slice: 5 queries around x = 2 against the 8 keys nearest to them.
  std::size_t q0 = 18, key0 = 0;  // queries 1.85 ... 2.25
  while (key0 + 8 < d.x_train.size() && d.x_train(key0 + 4) < d.x_queries(q0 + 2)) ++key0;
  std::vector<std::string> rl, cl;
  for (std::size_t i = q0; i < q0 + 5; ++i) rl.push_back("q=" + fixed(d.x_queries(i), 2));
  for (std::size_t j = key0; j < key0 + 8; ++j) cl.push_back("k=" + fixed(d.x_train(j), 2));
  say("A slice of the learned attention matrix: 5 queries near x = 2 (rows) against the 8 training keys nearest to them "
      "(columns). Each full row (all 50 keys) sums to 1; this slice holds most but not all of each row's weight, and the "
      "largest weights sit on the keys closest to the query.");
  matrix("attention weights (after learning)", xt::view(after, xt::range(q0, q0 + 5), xt::range(key0, key0 + 8)), rl, cl, 3);
  for (const Array<double>* w : {&before, &after})
    worst_row_error = std::max(worst_row_error, double(xt::amax(xt::abs(xt::sum(*w, {1}) - 1.0))()));
  say("Every row of every attention matrix in this lesson sums to 1, to within ", sci(worst_row_error),
      " (float rounding in the learned model's softmax), except the empty boxcar and Epanechnikov "
      "windows, which have no weights at all.");
  metric("max_row_sum_error", worst_row_error);
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"01_attention_pooling", "Attention pooling: Nadaraya-Watson kernel regression",
                     "Attention as a soft lookup: kernels as attention weights, then a learned Gaussian width",
                     "val_mse_learned"},
                    argc, argv, [] {
                      const std::size_t n_train = 50, n_val = full_or_quick<std::size_t>(1000, 200);
                      const int steps = epochs(400, 150);
                      const double lr = 0.2;
                      const std::vector<double> widths = {0.1, 0.3, 1.0};
                      config("n_train", n_train);
                      config("n_val", n_val);
                      config("noise_std", kNoiseStd);
                      config("steps", steps);
                      config("lr", lr);
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
                      say("Attention pooling = score each key against the query, turn the scores into a distribution "
                          "(normalized kernel, or softmax of scores), average the values under it. The width of the "
                          "kernel, how sharply the scores separate near keys from far ones, decides between copying "
                          "noise and blurring the signal; with a learned parameter, gradient descent picks it, provided "
                          "the training objective cannot cheat by letting a point look up its own answer. Later lessons "
                          "keep this exact pipeline and learn richer scores: dot products of learned query and key vectors.");
                    });
}
