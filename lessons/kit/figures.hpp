// The figures every lesson draws, with the course's conventions built in:
//   * attention: rows are queries (y axis, top to bottom), columns are keys (x axis), weights on
//     one 0..1 viridis scale, one colorbar shared by all panels, "Keys" and "Queries" on the axes;
//   * curves: training loss by step (mean of each window of steps) and held-out scores by epoch,
//     straight from a training History;
//   * bars with their values printed on them.
// save_figure writes PNG and SVG (and PDF with --pdf) into the lesson's folder and shows the
// figure in the report.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xarray.hpp>

#include "lessons/kit/history.hpp"
#include "lessons/kit/timing.hpp"
#include "nn/data/vocab.hpp"
#include "plots/plots.hpp"

namespace attnlab::lessons {

// <stem>.png and <stem>.svg (and <stem>.pdf with --pdf) in the output folder, and the figure in
// report.md with its caption.
void save_figure(const plots::Figure& fig, const std::string& stem, const std::string& caption);

// A diagram in DOT (plots/graph.hpp), saved like a figure: <stem>.png and <stem>.svg, shown in the report.
void save_diagram(const std::string& dot, const std::string& stem, const std::string& caption);

// Lesson 07's diagram of multi-head attention in DOT, for save_diagram: x, its three projections,
// h heads in parallel (the first and the last drawn, each softmax(Q_i K_i^T / sqrt(d_k)) V_i on
// its d_k columns), the merge and W_o, each box with its shape.
std::string multi_head_diagram();

// ------------------------------------------------------------------ attention

struct AttentionMap {
  xt::xarray<double> weights;              // (queries, keys), each row a distribution
  std::vector<std::string> keys, queries;  // tick labels; empty: numbered
  std::string title;                       // the panel's
};

// The heatmap options of an attention map (for lessons that lay out their own panels).
plots::HeatmapOptions attention_style(const std::vector<std::string>& keys, const std::vector<std::string>& queries,
                                      bool annotate = false);

struct AttentionFigureOptions {
  std::string title;
  int cols = 2;
  int width = 2400, height = 1200;                       // PNG pixels (text is drawn at scale 2)
  std::string keys_label = "Keys", queries_label = "Queries";
  bool annotate = false;                                 // each weight printed in its cell
  int decimals = 2;
  plots::Colormap colormap = plots::Colormap::viridis();
  double vmax = 1.0;  // the top of the shared scale (0 at the bottom); lower for rows spread over many keys
};

// One panel per map, axis names on the outer panels, one shared colorbar.
plots::Figure attention_figure(const std::vector<AttentionMap>& maps, const AttentionFigureOptions& style);

// Every head of a layer: heads (h, queries, keys), one panel "Head i" each, shared colorbar.
plots::Figure head_grid(const xt::xarray<double>& heads, const std::vector<std::string>& keys,
                        const std::vector<std::string>& queries, const std::string& title, int cols = 4,
                        int width = 2400, int height = 1300);

struct HeatmapFigureOptions {
  std::string title, xlabel, ylabel;
  int width = 1500, height = 1400;
};
// One panel, one heatmap: rows of `values` down the y axis, columns along x.
plots::Figure heatmap_figure(const xt::xarray<double>& values, const plots::HeatmapOptions& options,
                             const HeatmapFigureOptions& style);

// A confusion matrix of rates (nn::confusion_rates) in a panel: the true class down the rows
// ("true"), the predicted one along the columns ("predicted"), each cell's share printed, 0..1.
void confusion_panel(plots::Panel& panel, const xt::xarray<double>& rates, const std::vector<std::string>& classes,
                     const std::string& colorbar_label);

// ------------------------------------------------------------------ curves

plots::Series curve(const std::string& name, const std::vector<double>& x, const std::vector<double>& y);
plots::Series curve(const std::string& name, const std::vector<double>& y);  // x = 1, 2, ...

// A dashed gray line: a theory or a boundary drawn beside the measured curves.
plots::Series reference(const std::string& name, const std::vector<double>& x, const std::vector<double>& y);

// Data points as small "+" marks on a line panel: strokes of half-width dx and half-height dy
// (axis units), NaN lifting the pen between points; gray, and not in the legend.
plots::Series plus_marks(const xt::xarray<double>& x, const xt::xarray<double>& y, double dx, double dy);

struct LineFigureOptions {
  std::string title, xlabel, ylabel;
  bool log_x = false, log_y = false, markers = false;
  std::optional<double> ymin = std::nullopt, ymax = std::nullopt;
  int width = 1600, height = 1000;
};
// One panel of curves.
plots::Figure line_figure(const std::vector<plots::Series>& series, const LineFigureOptions& style);

// Curves in panels one above the other under one title, each panel with its own title and series
// and the y label, the x label under the last panel only. PlotError naming line_panels for no panels.
struct LinePanel {
  std::string title;
  std::vector<plots::Series> series;
};
struct LinePanelsOptions {
  std::string title, xlabel, ylabel;
  plots::LineOptions line;
  int width = 1800, height = 1700;  // the whole figure's
};
plots::Figure line_panels(const std::vector<LinePanel>& panels, const LinePanelsOptions& style);

using Run = std::pair<std::string, const History*>;  // a name for the legend, and its training

struct CurvesFigureOptions {
  std::string title;
  bool steps = true;     // a panel of the training loss by step (mean of each window of steps)
  bool epochs = true;    // a panel by epoch: the held-out loss (or, without one, the training loss)
  std::string validation = "loss";  // which held-out score the epoch panel shows
  bool log_y = true;
  std::string ylabel = "cross-entropy";
  int width = 2200, height = 900;
};

// Training curves of one or several runs. With one run the epoch panel shows its mean training
// loss beside the held-out score, so the gap between the two is visible.
plots::Figure loss_curves(const std::vector<Run>& runs, const CurvesFigureOptions& style);

struct ScoreFigureOptions {
  std::string title;
  std::string score = "accuracy";            // the held-out score of the runs' histories
  std::string ylabel = "held-out accuracy";
  std::optional<double> chance = std::nullopt;  // a dashed line at this score, "chance" in the legend
  std::optional<double> ymin = 0.0, ymax = 1.02;  // the y range (an accuracy's by default); nullopt: the data's
  int width = 2400, height = 1000;
};

// A held-out score after every epoch of several runs, against the training steps (left, with the
// legend) and against the CPU seconds spent training (right, log scale): which run learns in
// fewer steps, and which in less time. PlotError for no runs; std::out_of_range naming the score
// a run lacks.
plots::Figure score_against_cost(const std::vector<Run>& runs, const ScoreFigureOptions& style);

// The same held-out score after every epoch against the training steps, one panel per group of
// runs, one above the other, each titled with its group's name (style.width and style.height are
// the whole figure's; style.chance is not drawn). PlotError for no groups or a group of no runs;
// std::out_of_range naming the score a run lacks.
plots::Figure score_panels(const std::vector<std::pair<std::string, std::vector<Run>>>& groups,
                           const ScoreFigureOptions& style);

// ------------------------------------------------------------------ cost against n

// A dashed line c n^p through the last point of a cost curve, beside the measured curves.
struct PowerGuide {
  std::size_t curve = 0;  // which of the curves it passes through
  double power = 2;       // named "∝ n²" for 2, "∝ n" for 1, "∝ n^p" otherwise
  double through_n = 0;   // the curve's point it passes through: 0 for its largest n
};

struct CostFigureOptions {
  std::string title;
  std::vector<PowerGuide> time_guides, memory_guides;
  int width = 2400, height = 1000;
};

// Two log-log panels against n: the median CPU time of each op and its peak memory, with the
// guides. Each guide is dashed in a gray of its own (darker for a higher power): no two legend
// entries look alike. PlotError for no curves, or a guide naming a curve or a point that is not there.
plots::Figure cost_figure(const std::vector<const CostCurve*>& curves, const CostFigureOptions& style);

// ------------------------------------------------------------------ bars

// Grouped bars with their values: one group per category, one bar per series.
void bar_panel(plots::Panel& panel, const std::vector<std::string>& categories,
               const std::vector<std::pair<std::string, std::vector<double>>>& series, int decimals = 2,
               std::optional<double> ymax = std::nullopt);

// Grouped bars in panels one above the other under one title, each panel as bar_panel draws it
// (held-out accuracy by method at two lengths, say). PlotError naming bar_figure for no panels,
// and bar_panel's for a series whose values do not match the categories.
struct BarPanel {
  std::string title, ylabel;  // the panel's; an empty title: none
  std::vector<std::string> categories;
  std::vector<std::pair<std::string, std::vector<double>>> series;
};
struct BarFigureOptions {
  std::string title;
  int decimals = 2;                           // of the values printed on the bars
  std::optional<double> ymax = std::nullopt;  // every panel's; nullopt: each panel's data
  int width = 1600, height = 1000;            // the whole figure's
};
plots::Figure bar_figure(const std::vector<BarPanel>& panels, const BarFigureOptions& style);

// ------------------------------------------------------------------ tick labels

// Every `every`-th of 0, 1, ..., n-1, the rest blank: readable ticks on a long axis.
std::vector<std::string> number_labels(std::size_t n, std::size_t every = 1);
// prefix + first, prefix + (first + 1), ... (n labels): numbered("head ", 4, 1) is "head 1" ... "head 4".
std::vector<std::string> numbered(const std::string& prefix, std::size_t n, std::size_t first = 0);
// Every `every`-th of the values, with `decimals` decimals, the rest blank: an axis of measured inputs.
std::vector<std::string> value_labels(const xt::xarray<double>& values, std::size_t every, int decimals = 2);
// A character as figures and reports show it, visible where it would be blank: a space as an open
// box, a newline as a return arrow, a tab as a tab arrow; any other token as it is.
std::string visible(const std::string& token);
// Characters as tick labels, each visible(); <eos> at the end if asked.
std::vector<std::string> char_labels(const std::string& text, bool with_eos = false);
// Token ids as tick labels: each token of the vocabulary, visible().
std::vector<std::string> token_labels(const std::vector<Index>& ids, const nn::data::Vocab& vocab);

}  // namespace attnlab::lessons
