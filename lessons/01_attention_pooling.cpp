// Lesson 01: attention pooling, through Nadaraya-Watson kernel regression.
//
// Attention is a soft lookup. A query q is compared with every key k_i; the comparisons become
// non-negative weights a(q, k_i) that sum to 1 (an attention distribution); the answer is the
// weighted average of the values v_i:  f(q) = sum_i a(q, k_i) v_i.
// Nadaraya and Watson (1964) did exactly this for regression: the keys are the training inputs,
// the values their targets, and the weights a normalized kernel K(q - k_i) / sum_j K(q - k_j).
// We fit y = 2 sin x + x^0.8 + noise with three fixed kernels at three widths, then make the
// Gaussian's width a parameter w, a(q, k_i) = softmax_i(-((q - k_i) w)^2 / 2), and learn it with
// our autograd, each training point predicted from the OTHER points (itself masked out).
#include <algorithm>
#include <cstdio>
#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "lessons/common/lesson.hpp"
#include "lessons/common/progress.hpp"
#include "lessons/common/figure.hpp"
#include "nn/optim.hpp"
#include "plots/plots.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace plt = attnlab::plots;

namespace {

constexpr double kNoiseStd = 0.5;
constexpr double kXMax = 5.0;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---------------------------------------------------------------------------------------------
// 1. Data
// ---------------------------------------------------------------------------------------------

double true_function(double x) { return 2.0 * std::sin(x) + std::pow(x, 0.8); }

struct Data {
  Array<double> x_train, y_train;  // sorted training inputs (the keys) and targets (the values)
  Array<double> x_val, y_val;      // held-out noisy validation set (the metric)
  Array<double> x_grid;            // fine grid over [0, 5] for curves and the noise-free error
  Array<double> x_queries;         // coarse grid: the rows of the attention heatmaps
};

Array<double> noisy_targets(const Array<double>& x, Generator& gen) {
  Array<double> y = xt::zeros<double>({x.size()});
  for (std::size_t i = 0; i < x.size(); ++i) y(i) = true_function(x(i)) + gen.normal(0.0, kNoiseStd);
  return y;
}

Array<double> uniform_inputs(std::size_t n, Generator& gen, bool sorted) {
  std::vector<double> x(n);
  for (double& v : x) v = gen.uniform(0.0, kXMax);
  if (sorted) std::sort(x.begin(), x.end());
  Array<double> a = xt::zeros<double>({n});
  std::copy(x.begin(), x.end(), a.begin());
  return a;
}

Data make_data(std::size_t n_train, std::size_t n_val, Generator& gen) {
  Data d;
  d.x_train = uniform_inputs(n_train, gen, true);
  d.y_train = noisy_targets(d.x_train, gen);
  d.x_val = uniform_inputs(n_val, gen, false);
  d.y_val = noisy_targets(d.x_val, gen);
  d.x_grid = xt::linspace<double>(0.0, kXMax, 201);
  d.x_queries = xt::arange<double>(0.05, kXMax, 0.1);  // 50 cell centres 0.05 ... 4.95
  return d;
}

Array<double> truth_on(const Array<double>& x) {
  Array<double> y = xt::zeros<double>({x.size()});
  for (std::size_t i = 0; i < x.size(); ++i) y(i) = true_function(x(i));
  return y;
}

// Mean squared error; `pred` must be finite everywhere (the scored predictions have no gaps).
double mse_of(const Array<double>& pred, const Array<double>& target) {
  double s = 0;
  for (std::size_t i = 0; i < pred.size(); ++i) s += (pred(i) - target(i)) * (pred(i) - target(i));
  return s / double(pred.size());
}

// ---------------------------------------------------------------------------------------------
// 2. Non-parametric attention pooling: fixed kernels
// ---------------------------------------------------------------------------------------------

enum class Kernel { Gaussian, Boxcar, Epanechnikov };
const Kernel kKernels[] = {Kernel::Gaussian, Kernel::Boxcar, Kernel::Epanechnikov};

const char* kernel_name(Kernel k) {
  switch (k) {
    case Kernel::Gaussian: return "Gaussian";
    case Kernel::Boxcar: return "boxcar";
    case Kernel::Epanechnikov: return "Epanechnikov";
  }
  return "?";
}

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

// The attention matrix (queries x keys): row i is K(q_i - k_j) / sum_j K(q_i - k_j). A row whose
// kernel sum is 0 (a boxcar or Epanechnikov window holding no key) has no defined weights: it is
// left all zero and flagged in `empty`.
struct Pooling {
  Array<double> weights;
  std::vector<bool> empty;
  std::size_t empty_rows() const { return std::size_t(std::count(empty.begin(), empty.end(), true)); }
};

Pooling kernel_attention(Kernel k, double h, const Array<double>& queries, const Array<double>& keys) {
  Pooling p{xt::zeros<double>({queries.size(), keys.size()}), std::vector<bool>(queries.size(), false)};
  for (std::size_t i = 0; i < queries.size(); ++i) {
    double total = 0;
    for (std::size_t j = 0; j < keys.size(); ++j) total += p.weights(i, j) = kernel_value(k, queries(i) - keys(j), h);
    if (total > 0) {
      for (std::size_t j = 0; j < keys.size(); ++j) p.weights(i, j) /= total;
    } else {
      p.empty[i] = true;
    }
  }
  return p;
}

std::size_t nearest_key(double q, const Array<double>& keys) {
  std::size_t best = 0;
  for (std::size_t j = 1; j < keys.size(); ++j)
    if (std::abs(q - keys(j)) < std::abs(q - keys(best))) best = j;
  return best;
}

// f(q_i) = sum_j a_ij v_j. For an empty row: NaN when plotting (the curve shows a gap, honestly),
// and for the metric the value of the nearest key, which is what the window catches first if it is
// widened until it holds one key (so every variant is scored on every validation point).
struct Prediction {
  Array<double> shown, scored;
};

Prediction nadaraya_watson(const Pooling& p, const Array<double>& queries, const Array<double>& keys,
                           const Array<double>& values) {
  Prediction out{xt::zeros<double>({queries.size()}), xt::zeros<double>({queries.size()})};
  for (std::size_t i = 0; i < queries.size(); ++i) {
    if (p.empty[i]) {
      out.shown(i) = kNaN;
      out.scored(i) = values(nearest_key(queries(i), keys));
      continue;
    }
    double s = 0;
    for (std::size_t j = 0; j < keys.size(); ++j) s += p.weights(i, j) * values(j);
    out.shown(i) = out.scored(i) = s;
  }
  return out;
}

// max_i |sum_j a_ij - 1| over the rows that have weights.
double row_sum_error(const Array<double>& w, const std::vector<bool>& empty = {}) {
  double worst = 0;
  for (std::size_t i = 0; i < w.shape()[0]; ++i) {
    if (!empty.empty() && empty[i]) continue;
    double s = 0;
    for (std::size_t j = 0; j < w.shape()[1]; ++j) s += w(i, j);
    worst = std::max(worst, std::abs(s - 1.0));
  }
  return worst;
}

// Which width each kernel preferred, read off the measured validation errors.
std::string width_story(const std::vector<std::vector<double>>& val_mse, const std::vector<double>& widths) {
  std::string best, worst_is_widest_for;
  int widest_worst = 0;
  for (std::size_t k = 0; k < val_mse.size(); ++k) {
    const auto& v = val_mse[k];
    const std::size_t b = std::size_t(std::min_element(v.begin(), v.end()) - v.begin());
    const std::size_t w = std::size_t(std::max_element(v.begin(), v.end()) - v.begin());
    best += std::string(k ? (k + 1 == val_mse.size() ? " and " : ", ") : "") + kernel_name(kKernels[k]) +
            " h = " + fmt(widths[b], 1) + " (" + fmt(v[b], 4) + ")";
    widest_worst += w + 1 == widths.size();
  }
  return "Width matters far more than the kernel's shape. Best width of the three, by validation MSE: " + best +
         ". The widest window, h = " + fmt(widths.back(), 1) + ", scores worst for " + std::to_string(widest_worst) +
         " of the 3 kernels.";
}

// ---------------------------------------------------------------------------------------------
// 3. Parametric attention pooling: a learned Gaussian width, trained with autograd
// ---------------------------------------------------------------------------------------------

// The pairwise differences q_i - k_j as a constant (m, n) tensor: they do not depend on w.
Tensor<float> differences(const Array<double>& queries, const Array<double>& keys) {
  Array<float> d = xt::zeros<float>({queries.size(), keys.size()});
  for (std::size_t i = 0; i < queries.size(); ++i)
    for (std::size_t j = 0; j < keys.size(); ++j) d(i, j) = float(queries(i) - keys(j));
  return Tensor<float>(std::move(d));
}

Tensor<float> column(const Array<double>& v) {
  Array<float> c = xt::zeros<float>({v.size(), std::size_t(1)});
  for (std::size_t i = 0; i < v.size(); ++i) c(i, 0) = float(v(i));
  return Tensor<float>(std::move(c));
}

// Each query's own key, for leave-one-out training: true on the diagonal, the key to hide.
Mask self_positions(std::size_t n) {
  Mask m = xt::zeros<bool>({n, n});
  for (std::size_t i = 0; i < n; ++i) m(i, i) = true;
  return m;
}

struct Attended {
  Tensor<float> weights;     // (m, n) attention distribution over the keys
  Tensor<float> prediction;  // (m, 1) = weights x values
};

// scores s_ij = -((q_i - k_j) w)^2 / 2, weights = softmax over j, prediction = weights @ values.
// With `self` given, each query's own key is hidden from its softmax (masked_softmax with
// Allowed::except): weight exactly zero on its own target, and exactly zero gradient there. A row
// never loses every key (n - 1 stay).
Attended gaussian_attention(const Tensor<float>& diff, const Tensor<float>& w, const Tensor<float>& values,
                            const Mask* self = nullptr) {
  const Tensor<float> scaled = diff * w;  // w of shape (1,) broadcasts over (m, n)
  const Tensor<float> scores = -0.5f * (scaled * scaled);
  const Tensor<float> weights = self ? masked_softmax(scores, Allowed::except(*self)) : softmax(scores, -1);
  return {weights, matmul(weights, values)};
}

Array<double> to_double(const Array<float>& a) { return xt::cast<double>(a); }

// The learned model, evaluated: predictions (m,) and attention weights (m, n) for the queries.
struct Evaluated {
  Array<double> prediction, weights;
};

Evaluated evaluate_learned(const Array<double>& queries, const Data& d, float w) {
  NoGrad no_grad;
  const Attended a = gaussian_attention(differences(queries, d.x_train), Tensor<float>::full({1}, w),
                                        column(d.y_train));
  return {xt::flatten(to_double(a.prediction.value())), to_double(a.weights.value())};
}

// The limit w -> infinity: each query copies the value of its nearest key.
Array<double> nearest_neighbour(const Array<double>& queries, const Data& d) {
  Array<double> out = xt::zeros<double>({queries.size()});
  for (std::size_t i = 0; i < queries.size(); ++i) out(i) = d.y_train(nearest_key(queries(i), d.x_train));
  return out;
}

struct TrainLog {
  std::vector<double> loss, w;  // per step, before the update
  double ms_per_step = 0;
};

// Full-batch Adam on the single parameter w, minimizing the mean squared error of each training
// point predicted from the others (mask_self) or from all points including itself. With `story`
// given, a table of loss and w at a few steps goes into the lesson.
TrainLog train_width(const Data& d, Tensor<float>& w, int steps, double lr, bool mask_self, Lesson* story) {
  const Tensor<float> diff = differences(d.x_train, d.x_train);
  const Tensor<float> values = column(d.y_train);
  const Mask self = self_positions(d.x_train.size());
  nn::Adam<float> opt({w}, lr);
  TrainLog log;
  std::vector<std::vector<std::string>> rows;
  const int every = std::max(1, steps / 8);
  Progress bar(std::size_t(steps), mask_self ? "train w (leave-one-out)" : "train w (self visible)");
  const auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    opt.zero_grad();
    const Attended a = gaussian_attention(diff, w, values, mask_self ? &self : nullptr);
    const Tensor<float> loss = mse(a.prediction, values);
    log.loss.push_back(loss.item());
    log.w.push_back(w.item());
    if (story && step % every == 0)
      rows.push_back({std::to_string(step), fmt(loss.item(), 4), fmt(w.item(), 3), fmt(1.0 / w.item(), 3)});
    loss.backward();
    opt.step();
    bar.step(loss.item());
  }
  bar.finish();
  log.ms_per_step = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / steps;
  if (story) {
    NoGrad no_grad;
    const Attended a = gaussian_attention(diff, w, values, &self);
    rows.push_back({std::to_string(steps) + " (end)", fmt(mse(a.prediction, values).item(), 4), fmt(w.item(), 3),
                    fmt(1.0 / w.item(), 3)});
    story->table({"step", "training loss (leave-one-out MSE)", "w", "width 1/w"}, rows);
  }
  return log;
}

// ---------------------------------------------------------------------------------------------
// Figures
// ---------------------------------------------------------------------------------------------

const plt::Color kTruthColor = plt::Color::hex("#222222");
const plt::Color kPointColor = plt::Color::hex("#8c8c8c");

// The line-plot API draws lines; a training point is drawn as a small "+" (two short strokes,
// separated from the next point by NaN, which lifts the pen).
plt::Series training_points(const Data& d, double half_x, double half_y) {
  const std::size_t n = d.x_train.size();
  xt::xarray<double> x = xt::zeros<double>({6 * n}), y = xt::zeros<double>({6 * n});
  for (std::size_t i = 0; i < n; ++i) {
    const double px = d.x_train(i), py = d.y_train(i);
    const double xs[6] = {px - half_x, px + half_x, kNaN, px, px, kNaN};
    const double ys[6] = {py, py, kNaN, py - half_y, py + half_y, kNaN};
    for (int k = 0; k < 6; ++k) x(6 * i + k) = xs[k], y(6 * i + k) = ys[k];
  }
  plt::Series s("training points", x, y);
  s.color = kPointColor;
  return s;
}

plt::Series truth_series(const Data& d) {
  plt::Series s("truth 2 sin x + x^0.8", d.x_grid, truth_on(d.x_grid));
  s.color = kTruthColor;
  s.dashed = true;
  return s;
}

std::vector<std::string> sparse_labels(const Array<double>& x, std::size_t every) {
  std::vector<std::string> out(x.size());
  for (std::size_t i = 0; i < x.size(); i += every) out[i] = fmt(x(i), 2);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  Lesson L({"01_attention_pooling", "Attention pooling: Nadaraya-Watson kernel regression",
            "Attention as a soft lookup: kernels as attention weights, then a learned Gaussian width"},
           argc, argv);
  const std::size_t n_train = 50, n_val = L.quick() ? 200 : 1000;
  const int steps = L.epochs(400, 150);
  const double lr = 0.2;
  const std::vector<double> widths = {0.1, 0.3, 1.0};
  L.config("n_train", double(n_train));
  L.config("n_val", double(n_val));
  L.config("noise_std", kNoiseStd);
  L.config("steps", double(steps));
  L.config("lr", lr);
  Generator gen(L.seed());
  const Data d = make_data(n_train, n_val, gen);

  // ------------------------------------------------------------------------------------------
  L.section("1. Data: a noisy curve");
  L.say("We draw " + std::to_string(n_train) + " training inputs x uniformly in [0, 5], sort them, and set " +
        "y = 2 sin x + x^0.8 + noise, with Gaussian noise of standard deviation " + fmt(kNoiseStd, 1) +
        ". A separate validation set of " + std::to_string(n_val) +
        " points, drawn the same way, never touches any fitting: every score below is measured on it. "
        "We report two errors. 'val MSE' compares predictions with the NOISY validation targets; even "
        "the true function scores about the noise variance " + fmt(kNoiseStd * kNoiseStd, 2) +
        " there, so that is the floor. 'true MSE' compares predictions with the noise-free function on "
        "a grid of 201 points over [0, 5]; its floor is 0.");
  double mean_y = xt::mean(d.y_train)();
  const Array<double> mean_val = xt::full_like(d.y_val, mean_y), mean_grid = xt::full_like(d.x_grid, mean_y);
  const double val_mse_mean = mse_of(mean_val, d.y_val), true_mse_mean = mse_of(mean_grid, truth_on(d.x_grid));
  const double val_mse_truth = mse_of(truth_on(d.x_val), d.y_val);
  L.say("Two reference points: predicting the training mean (" + fmt(mean_y, 3) + ") everywhere gives val MSE " +
        fmt(val_mse_mean, 4) + " (true MSE " + fmt(true_mse_mean, 4) +
        "); the true function itself gives val MSE " + fmt(val_mse_truth, 4) +
        " (the noise in this validation sample). A useful model lands in between, close to the second.");
  L.metric("val_mse_mean_baseline", val_mse_mean);
  L.metric("val_mse_true_function", val_mse_truth);

  // ------------------------------------------------------------------------------------------
  L.section("2. Attention pooling with fixed kernels");
  L.say("Attention is a soft lookup in a table of (key, value) pairs. Here the table is the training set: "
        "each key is a training input x_i, its value is the target y_i. A query is an input x where we "
        "want a prediction. A hard lookup would return the value of the one matching key; attention "
        "instead gives every key a weight a(x, x_i) >= 0 with sum_i a(x, x_i) = 1 (a probability "
        "distribution over the keys, the attention distribution) and returns the weighted average "
        "f(x) = sum_i a(x, x_i) y_i. This is Nadaraya-Watson kernel regression: "
        "a(x, x_i) = K(x - x_i) / sum_j K(x - x_j) for a kernel K that is large when the query is near "
        "the key.");
  L.say("Three kernels, each at widths h = 0.1, 0.3 and 1.0: Gaussian exp(-u^2 / (2 h^2)) (every key keeps "
        "some weight), boxcar 1[|u| <= h] (a plain average of the keys within h), Epanechnikov "
        "max(0, 1 - (u/h)^2) (a window that fades out). The boxcar and Epanechnikov windows can hold "
        "no key at all: with 50 points on [0, 5] the average gap is 0.1, so a window of half-width 0.1 "
        "often falls into a hole. There the weights are 0/0, undefined. We do not hide it: the curve "
        "shows a gap, the table counts the empty windows among the validation queries, and for the "
        "score such a query takes the value of its nearest key (the first key a widening window would "
        "catch).");

  std::vector<std::vector<std::string>> rows;
  std::vector<xt::xarray<double>> curves;  // per (kernel, width), on the grid, NaN in empty windows
  std::vector<std::vector<double>> val_mse(3);  // [kernel][width]
  double worst_row_error = 0;
  for (Kernel k : kKernels) {
    for (double h : widths) {
      const Pooling pv = kernel_attention(k, h, d.x_val, d.x_train);
      const Pooling pg = kernel_attention(k, h, d.x_grid, d.x_train);
      const Prediction on_val = nadaraya_watson(pv, d.x_val, d.x_train, d.y_train);
      const Prediction on_grid = nadaraya_watson(pg, d.x_grid, d.x_train, d.y_train);
      const double vm = mse_of(on_val.scored, d.y_val), tm = mse_of(on_grid.scored, truth_on(d.x_grid));
      worst_row_error = std::max({worst_row_error, row_sum_error(pv.weights, pv.empty), row_sum_error(pg.weights, pg.empty)});
      curves.push_back(on_grid.shown);
      const std::string tag = std::string(kernel_name(k)) + "_" + fmt(h, 1);
      std::string key = "val_mse_" + tag, key_true = "true_mse_" + tag;
      std::replace(key.begin(), key.end(), '.', 'p');
      std::replace(key_true.begin(), key_true.end(), '.', 'p');
      std::transform(key.begin(), key.end(), key.begin(), ::tolower);
      std::transform(key_true.begin(), key_true.end(), key_true.begin(), ::tolower);
      L.metric(key, vm);
      L.metric(key_true, tm);
      val_mse[std::size_t(k)].push_back(vm);
      rows.push_back({kernel_name(k), fmt(h, 1), fmt(vm, 4), fmt(tm, 4),
                      std::to_string(pv.empty_rows()) + " / " + std::to_string(d.x_val.size())});
    }
  }
  L.table({"kernel", "width h", "val MSE (noisy targets)", "true MSE (noise-free)", "empty windows (val queries)"}, rows);
  L.say(width_story(val_mse, widths));
  L.say("Why: a narrow window averages only the one or two nearest keys and copies their noise (the jagged "
        "curves); a wide one averages a large part of the data set and flattens the peak near x = 1.9 and "
        "the dip near x = 4.4 (bias). In between the two errors balance. Note that h means different "
        "spreads for different kernels: a boxcar of half-width h has standard deviation h / sqrt(3), an "
        "Epanechnikov window h / sqrt(5), while the Gaussian's h is its standard deviation, so at one h "
        "the Gaussian is the widest and tends to prefer a smaller h.");

  {
    plt::Figure fig(1800, 1300, 2, 2);
    fig.title("Nadaraya-Watson attention pooling with fixed kernels (dashed: truth, +: training points)");
    std::vector<plt::Series> shapes;
    xt::xarray<double> u = xt::linspace<double>(-3.5, 3.5, 281);
    for (Kernel k : kKernels) {
      xt::xarray<double> ku = xt::zeros<double>({u.size()});
      for (std::size_t i = 0; i < u.size(); ++i) ku(i) = kernel_value(k, u(i), 1.0);
      shapes.emplace_back(kernel_name(k), u, ku);
    }
    plt::LineOptions so;
    so.ymin = 0.0, so.ymax = 1.5;
    plt::line_plot(fig.panel(0, 0).title("The kernels K(u) at width h = 1").xlabel("u = query - key").ylabel("K(u)"),
                   shapes, so);
    plt::LineOptions fo;
    fo.ymin = -3.5, fo.ymax = 6.0;
    std::size_t c = 0;
    for (int p = 0; p < 3; ++p) {
      std::vector<plt::Series> s{training_points(d, 0.06, 0.11), truth_series(d)};
      s[0].name.clear(), s[1].name.clear();  // named in the figure title: three entries fit inside the panel
      for (std::size_t wi = 0; wi < widths.size(); ++wi) {
        plt::Series cur("h = " + fmt(widths[wi], 1), d.x_grid, curves[c++]);
        cur.color = plt::series_color(wi);
        s.push_back(cur);
      }
      plt::line_plot(fig.panel(p + 1).title(std::string(kernel_name(kKernels[p])) + " kernel").xlabel("x (query)").ylabel("y"),
                     s, fo);
    }
    save_figure(L, fig, "kernel_fits",
                "The three kernels (top left) and their fits at three widths against the truth and the 50 "
                "training points; gaps in the boxcar and Epanechnikov curves are windows holding no key");
  }

  // ------------------------------------------------------------------------------------------
  L.section("3. Learning the width: parametric attention pooling");
  L.say("Now we let the model choose the width. With a parameter w, the weights are "
        "a(q, k_i) = softmax_i(-((q - k_i) w)^2 / 2): the same Gaussian kernel with width 1/w, written "
        "as a softmax over scores. That is the form every later lesson uses: scores, a softmax over "
        "the keys, a weighted sum of values. w is trained by gradient descent (Adam, lr " + fmt(lr, 2) +
        ", full batch, " + std::to_string(steps) + " steps) on the mean squared error of the training "
        "targets, our autograd differentiating through the softmax and the matrix product back to w.");
  L.say("One trap: if a training point may attend to itself, the best w is infinite: a width of 0 puts all "
        "weight on its own key and reproduces its own noisy target, training loss 0, a useless model. So "
        "each training query attends to the OTHER 49 points: its own key is hidden from its softmax "
        "(masked_softmax with the diagonal hidden, so its weight is exactly 0). The training loss is then the leave-one-out "
        "error, an honest estimate of the error on new points. We start from w = 1, the Gaussian of "
        "width 1.0 above.");
  Tensor<float> w = Tensor<float>::full({1}, 1.0f, true);
  const float w_before = w.item();
  const TrainLog log = train_width(d, w, steps, lr, true, &L);
  const float w_after = w.item();
  L.timing("train_ms_per_step", log.ms_per_step);

  const Array<double> truth_grid = truth_on(d.x_grid);
  const Array<double> before_val = evaluate_learned(d.x_val, d, w_before).prediction, after_val = evaluate_learned(d.x_val, d, w_after).prediction;
  const Array<double> before_grid = evaluate_learned(d.x_grid, d, w_before).prediction, after_grid = evaluate_learned(d.x_grid, d, w_after).prediction;
  const double val_before = mse_of(before_val, d.y_val), val_after = mse_of(after_val, d.y_val);
  const double true_before = mse_of(before_grid, truth_grid), true_after = mse_of(after_grid, truth_grid);

  const auto& gauss = val_mse[0];
  const std::size_t best_g = std::size_t(std::min_element(gauss.begin(), gauss.end()) - gauss.begin());
  L.say("What happened: the leave-one-out loss fell from " + fmt(log.loss.front(), 4) + " to " + fmt(log.loss.back(), 4) +
        " as w grew from " + fmt(w_before, 2) + " to " + fmt(w_after, 3) + ", i.e. the kernel narrowed from width 1.0 to " +
        fmt(1.0 / w_after, 3) + ". Learning the width is choosing how local each lookup is: a larger w makes the "
        "scores fall off faster with distance, so the softmax concentrates on the nearest keys; the gradient "
        "stops where narrowing further would start copying noise. On the validation set the learned model "
        "scores " + fmt(val_after, 4) + " (from " + fmt(val_before, 4) + " before learning); the best of the "
        "three hand-picked Gaussian widths, h = " + fmt(widths[best_g], 1) + ", scored " + fmt(gauss[best_g], 4) +
        (val_after <= gauss[best_g] ? ". The learned width does at least as well, without anyone trying widths"
                                    : ". The learned width is a little behind, but picking the best of three by its "
                                      "validation score used the validation set; the learned w used the training "
                                      "data alone") +
        ".");

  L.say("For contrast, the same training with the self-mask removed:");
  Tensor<float> w_unmasked = Tensor<float>::full({1}, 1.0f, true);
  const TrainLog log_unmasked = train_width(d, w_unmasked, steps, lr, false, nullptr);
  const float w_visible = w_unmasked.item();
  const double val_visible = mse_of(evaluate_learned(d.x_val, d, w_visible).prediction, d.y_val);
  const double true_visible = mse_of(evaluate_learned(d.x_grid, d, w_visible).prediction, truth_grid);
  const double val_nearest = mse_of(nearest_neighbour(d.x_val, d), d.y_val);
  const double true_nearest = mse_of(nearest_neighbour(d.x_grid, d), truth_grid);
  const std::size_t late = std::size_t(steps) * 9 / 10;
  const double masked_drift = std::abs(log.w.back() - log.w[late]) / log.w.back();
  const double visible_drift = (log_unmasked.w.back() - log_unmasked.w[late]) / log_unmasked.w.back();
  L.say(std::string("With the mask, w ") +
        (masked_drift < 0.01 ? "has settled (it moved " + (masked_drift < 1e-4 ? std::string("less than 0.01") : fmt(100 * masked_drift, 2)) +
                                   " % over the last tenth of the steps)"
                             : "is still moving (" + fmt(100 * masked_drift, 1) + " % over the last tenth of the steps)") +
        ". Without it, w reached " + fmt(w_visible, 2) + " (width " + fmt(1.0 / w_visible, 3) + ") and " +
        (visible_drift > 0.01 ? "is still climbing (" + fmt(100 * visible_drift, 1) + " % over the last tenth)"
                              : "has slowed down") +
        ", its training loss down to " + fmt(log_unmasked.loss.back(), 4) +
        ". Nothing stops it: the training loss only reaches its minimum, 0, at w = infinity, where every "
        "query puts all its weight on the nearest key, a nearest-neighbour lookup (val MSE " + fmt(val_nearest, 4) +
        ", true MSE " + fmt(true_nearest, 4) + "). Where it stands now, its val MSE " + fmt(val_visible, 4) +
        (val_visible > val_after
             ? " is already worse than the masked model's " + fmt(val_after, 4) +
                   ", and more steps only carry it further towards the nearest-neighbour limit."
             : " happens to be below the masked model's " + fmt(val_after, 4) +
                   ": stopped early, the runaway is passing through good widths on its way to the nearest-neighbour "
                   "limit. But when to stop would be our guess; with the mask, the data decide the width.") );
  L.metric("val_mse_nearest_neighbour", val_nearest);

  L.table({"model", "w", "width 1/w", "val MSE (noisy targets)", "true MSE (noise-free)"},
          {{"mean of training y", "-", "-", fmt(val_mse_mean, 4), fmt(true_mse_mean, 4)},
           {"Gaussian, before learning", fmt(w_before, 3), fmt(1.0 / w_before, 3), fmt(val_before, 4), fmt(true_before, 4)},
           {"Gaussian, learned (self masked)", fmt(w_after, 3), fmt(1.0 / w_after, 3), fmt(val_after, 4), fmt(true_after, 4)},
           {"Gaussian, learned (self visible)", fmt(w_visible, 3), fmt(1.0 / w_visible, 3), fmt(val_visible, 4),
            fmt(true_visible, 4)},
           {"nearest neighbour (w = infinity)", "inf", "0", fmt(val_nearest, 4), fmt(true_nearest, 4)}});
  L.metric("learned_w", w_after);
  L.metric("learned_width", 1.0 / w_after);
  L.metric("val_mse_before_learning", val_before);
  L.metric("val_mse_learned", val_after);
  L.metric("true_mse_before_learning", true_before);
  L.metric("true_mse_learned", true_after);
  L.metric("val_mse_learned_self_visible", val_visible);

  {
    plt::Figure fig(2100, 760, 1, 3);
    fig.title("Parametric attention pooling: learning the Gaussian width");
    std::vector<plt::Series> s{training_points(d, 0.06, 0.11), truth_series(d)};
    plt::Series b("before (w = " + fmt(w_before, 2) + ")", d.x_grid, before_grid);
    b.color = plt::series_color(0);
    plt::Series a("after (w = " + fmt(w_after, 2) + ")", d.x_grid, after_grid);
    a.color = plt::series_color(3);
    s.push_back(b);
    s.push_back(a);
    plt::LineOptions fo;
    fo.ymin = -3.5, fo.ymax = 6.0;
    plt::line_plot(fig.panel(0).title("Fit before and after learning").xlabel("x (query)").ylabel("y"), s, fo);
    xt::xarray<double> step_axis = xt::arange<double>(0.0, double(steps));
    plt::Series lm("self masked", step_axis, xt::adapt(log.loss));
    plt::Series lu("self visible", step_axis, xt::adapt(log_unmasked.loss));
    lu.dashed = true;
    plt::line_plot(fig.panel(1).title("Training loss (MSE)").xlabel("step").ylabel("loss"), {lm, lu});
    plt::Series wm("self masked", step_axis, xt::adapt(log.w));
    plt::Series wu("self visible", step_axis, xt::adapt(log_unmasked.w));
    wu.dashed = true;
    plt::line_plot(fig.panel(2).title("The parameter w").xlabel("step").ylabel("w"), {wm, wu});
    save_figure(L, fig, "parametric_fit",
                "Left: the fit before (w = 1) and after learning w with each training point masked from its "
                "own lookup. Middle and right: loss and w per step, with and without that mask");
  }

  // ------------------------------------------------------------------------------------------
  L.section("4. The attention weights");
  L.say("Each row of the attention matrix is one query's distribution over the 50 sorted training keys. "
        "The heatmaps use 50 evenly spaced queries x = 0.05, 0.15, ..., 4.95 as rows (top to bottom) and "
        "the sorted training inputs as columns (left to right). Because both are sorted, the weight "
        "sits along the diagonal: a query looks at the keys near it. The band bends where the training "
        "inputs are dense (many columns per unit of x) or sparse, and each row spreads its weight over more "
        "keys where they crowd together. Learning w narrows the band: before, a query spreads its weight "
        "over much of the data set; after, over its few nearest neighbours.");
  const Array<double> att_before = evaluate_learned(d.x_queries, d, w_before).weights;
  const Array<double> att_after = evaluate_learned(d.x_queries, d, w_after).weights;
  worst_row_error = std::max({worst_row_error, row_sum_error(att_before), row_sum_error(att_after)});
  {
    xt::xarray<double> both = xt::zeros<double>({std::size_t(2), att_before.shape()[0], att_before.shape()[1]});
    xt::view(both, 0, xt::all(), xt::all()) = att_before;
    xt::view(both, 1, xt::all(), xt::all()) = att_after;
    plt::HeatmapGridOptions o;
    o.cols = 2;
    o.title = "Attention weights of the Gaussian kernel, before and after learning w";
    o.xlabel = "Sorted training inputs (keys)";
    o.ylabel = "Queries x";
    o.heatmap.cmap = plt::Colormap::reds();
    o.heatmap.vmin = 0.0;
    o.heatmap.colorbar_label = "attention weight";
    o.heatmap.x_labels = sparse_labels(d.x_train, 10);
    o.heatmap.y_labels = sparse_labels(d.x_queries, 10);
    o.width_px = 1900, o.height_px = 1000;
    plt::Figure fig = plt::heatmap_grid(both, o);
    fig.panel(0).title("Before learning (w = " + fmt(w_before, 2) + ")");
    fig.panel(1).title("After learning (w = " + fmt(w_after, 2) + ")");
    save_figure(L, fig, "attention_weights",
                "Attention weights, rows = queries on a grid over [0, 5], columns = the sorted training inputs "
                "(keys), before and after learning w; one color scale for both");
  }

  // A slice: 5 queries around x = 2 against the 8 keys nearest to them.
  {
    std::size_t q0 = 18, key0 = 0;  // queries 1.85 ... 2.25
    while (key0 + 8 < d.x_train.size() && d.x_train(key0 + 4) < d.x_queries(q0 + 2)) ++key0;
    std::vector<std::vector<double>> slice;
    std::vector<std::string> rl, cl;
    for (std::size_t i = q0; i < q0 + 5; ++i) {
      rl.push_back("q=" + fmt(d.x_queries(i), 2));
      slice.emplace_back();
      for (std::size_t j = key0; j < key0 + 8; ++j) slice.back().push_back(att_after(i, j));
    }
    for (std::size_t j = key0; j < key0 + 8; ++j) cl.push_back("k=" + fmt(d.x_train(j), 2));
    L.say("A slice of the learned attention matrix: 5 queries near x = 2 (rows) against the 8 training "
          "keys nearest to them (columns). Each full row (all 50 keys) sums to 1; this slice holds most "
          "but not all of each row's weight, and the largest weights sit on the keys closest to the query.");
    L.matrix("attention weights (after learning)", slice, rl, cl, 3);
  }
  char err[32];
  std::snprintf(err, sizeof err, "%.1e", worst_row_error);
  L.say("Every row of every attention matrix in this lesson sums to 1, to within " + std::string(err) +
        " (float rounding in the learned model's softmax), except the empty boxcar and Epanechnikov windows, which have no weights at all.");
  L.metric("max_row_sum_error", worst_row_error);

  L.section("5. What to take away");
  L.say("Attention pooling = score each key against the query, turn the scores into a distribution "
        "(normalized kernel, or softmax of scores), average the values under it. The width of the "
        "kernel, how sharply the scores separate near keys from far ones, decides between copying "
        "noise and blurring the signal; with a learned parameter, gradient descent picks it, provided "
        "the training objective cannot cheat by letting a point look up its own answer. Later lessons "
        "keep this exact pipeline and learn richer scores: dot products of learned query and key vectors.");
  return L.finish();
}
