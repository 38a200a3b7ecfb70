#include "lessons/kit/figures.hpp"

#include <algorithm>
#include <cmath>

#include <xtensor/xadapt.hpp>

#include "lessons/story/lesson.hpp"
#include "lessons/story/stats.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::lessons {

void save_figure(const plots::Figure& fig, const std::string& stem, const std::string& caption) {
  Lesson& L = lesson();
  plots::TextLog text;  // recorded while the PNG is drawn: what lesson_check reads at the book's width
  for (const std::string& format : L.figure_formats())
    fig.save(L.path(stem + "." + format), format == "png" ? &text : nullptr);
  L.figure(stem, caption, {fig.width_px(), fig.height_px(), text.smallest * fig.scale()});
}

void save_diagram(const std::string& dot, const std::string& stem, const std::string& caption) {
  Lesson& L = lesson();
  for (const std::string& format : L.figure_formats()) plots::save_graph(dot, L.path(stem + "." + format));
  L.figure(stem, caption);
}

// ------------------------------------------------------------------ attention

plots::HeatmapOptions attention_style(const std::vector<std::string>& keys, const std::vector<std::string>& queries,
                                      bool annotate) {
  plots::HeatmapOptions o;
  o.x_labels = keys;
  o.y_labels = queries;
  o.vmin = 0.0;
  o.vmax = 1.0;
  o.annotate = annotate;
  o.colorbar = false;  // one shared colorbar per figure
  o.colorbar_label = "attention weight";
  return o;
}

plots::Figure attention_figure(const std::vector<AttentionMap>& maps, const AttentionFigureOptions& style) {
  if (maps.empty()) plots::fail("attention_figure", "no maps to draw");
  const int cols = std::max(1, std::min(style.cols, int(maps.size())));
  const int rows = int((maps.size() + std::size_t(cols) - 1) / std::size_t(cols));
  plots::Figure fig(style.width, style.height, rows, cols);
  fig.title(style.title);
  for (std::size_t i = 0; i < maps.size(); ++i) {
    const int r = int(i) / cols, c = int(i) % cols;
    plots::Panel& p = fig.panel(r, c).title(maps[i].title);
    if (i + std::size_t(cols) >= maps.size()) p.xlabel(style.keys_label);  // nothing below it
    if (c == 0) p.ylabel(style.queries_label);
    plots::HeatmapOptions o = attention_style(maps[i].keys, maps[i].queries, style.annotate);
    o.decimals = style.decimals;
    o.cmap = style.colormap;
    o.vmax = style.vmax;
    plots::heatmap(p, maps[i].weights, o);
  }
  fig.shared_colorbar({style.colormap, 0.0, style.vmax, "attention weight"});
  return fig;
}

plots::Figure head_grid(const xt::xarray<double>& heads, const std::vector<std::string>& keys,
                        const std::vector<std::string>& queries, const std::string& title, int cols, int width,
                        int height) {
  plots::HeatmapGridOptions o;
  o.heatmap = attention_style(keys, queries);
  o.cols = cols;
  o.title = title;
  o.width_px = width;
  o.height_px = height;
  return plots::heatmap_grid(heads, o);
}

plots::Figure heatmap_figure(const xt::xarray<double>& values, const plots::HeatmapOptions& options,
                             const HeatmapFigureOptions& style) {
  plots::Figure fig(style.width, style.height);
  fig.title(style.title);
  plots::heatmap(fig.panel(0).xlabel(style.xlabel).ylabel(style.ylabel), values, options);
  return fig;
}

void confusion_panel(plots::Panel& panel, const xt::xarray<double>& rates, const std::vector<std::string>& classes,
                     const std::string& colorbar_label) {
  plots::HeatmapOptions o;
  o.x_labels = o.y_labels = classes;
  o.vmin = 0.0;
  o.vmax = 1.0;
  o.annotate = true;
  o.colorbar_label = colorbar_label;
  plots::heatmap(panel.xlabel("predicted").ylabel("true"), rates, o);
}

// ------------------------------------------------------------------ curves

plots::Series curve(const std::string& name, const std::vector<double>& x, const std::vector<double>& y) {
  return plots::Series(name, xt::adapt(x, {x.size()}), xt::adapt(y, {y.size()}));
}

plots::Series curve(const std::string& name, const std::vector<double>& y) {
  std::vector<double> x(y.size());
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = double(i + 1);
  return curve(name, x, y);
}

plots::Series reference(const std::string& name, const std::vector<double>& x, const std::vector<double>& y) {
  plots::Series s = curve(name, x, y);
  s.dashed = true;
  s.color = plots::Color{0.45, 0.45, 0.45};
  return s;
}

plots::Series plus_marks(const xt::xarray<double>& x, const xt::xarray<double>& y, double dx, double dy) {
  if (x.size() != y.size()) plots::fail("plus_marks", x.size(), " x values for ", y.size(), " y values");
  const double lift = std::nan("");
  std::vector<double> xs, ys;
  for (std::size_t i = 0; i < x.size(); ++i) {
    for (double v : {x(i) - dx, x(i) + dx, lift, x(i), x(i), lift}) xs.push_back(v);
    for (double v : {y(i), y(i), lift, y(i) - dy, y(i) + dy, lift}) ys.push_back(v);
  }
  plots::Series s = curve("", xs, ys);
  s.color = plots::Color::hex("#8c8c8c");
  return s;
}

plots::Figure line_figure(const std::vector<plots::Series>& series, const LineFigureOptions& style) {
  plots::Figure fig(style.width, style.height);
  fig.title(style.title);
  plots::LineOptions o;
  o.log_x = style.log_x;
  o.log_y = style.log_y;
  o.markers = style.markers;
  o.ymin = style.ymin;
  o.ymax = style.ymax;
  plots::line_plot(fig.panel(0).xlabel(style.xlabel).ylabel(style.ylabel), series, o);
  return fig;
}

plots::Figure score_against_cost(const std::vector<Run>& runs, const ScoreFigureOptions& style) {
  if (runs.empty()) plots::fail("score_against_cost", "no runs to draw");
  std::vector<plots::Series> by_step, by_time;
  double first = INFINITY, last = -INFINITY;
  for (const auto& [name, h] : runs) {
    const std::vector<double>& score = h->validation_of(style.score);
    std::vector<double> steps;
    for (std::size_t e = 1; e <= score.size(); ++e) steps.push_back(double(e * h->steps_per_epoch));
    first = std::min(first, steps.front()), last = std::max(last, steps.back());
    by_step.push_back(curve(name, steps, score));
    by_time.push_back(curve(name, h->epoch_cpu_seconds(), score));
  }
  if (style.chance) by_step.push_back(reference("chance", {first, last}, {*style.chance, *style.chance}));
  plots::Figure fig(style.width, style.height, 1, 2);
  fig.title(style.title);
  plots::LineOptions lo;
  lo.markers = true;
  lo.ymin = style.ymin, lo.ymax = style.ymax;
  plots::line_plot(fig.panel(0).title("Against training steps").xlabel("training step").ylabel(style.ylabel), by_step, lo);
  lo.log_x = true;
  lo.legend = false;  // the colours of the left panel
  plots::line_plot(fig.panel(1).title("Against training time").xlabel("CPU seconds of training (log scale)")
                       .ylabel(style.ylabel),
                   by_time, lo);
  return fig;
}

plots::Figure score_panels(const std::vector<std::pair<std::string, std::vector<Run>>>& groups,
                           const ScoreFigureOptions& style) {
  if (groups.empty()) plots::fail("score_panels", "no groups of runs to draw");
  plots::Figure fig(style.width, style.height, int(groups.size()), 1);
  fig.title(style.title);
  plots::LineOptions lo;
  lo.markers = true;
  lo.ymin = style.ymin, lo.ymax = style.ymax;
  for (std::size_t p = 0; p < groups.size(); ++p) {
    if (groups[p].second.empty()) plots::fail("score_panels", "the group '", groups[p].first, "' has no runs");
    std::vector<plots::Series> series;
    for (const auto& [name, h] : groups[p].second) series.push_back(curve(name, h->epoch_steps(), h->validation_of(style.score)));
    plots::line_plot(fig.panel(int(p), 0).title(groups[p].first).xlabel("training step").ylabel(style.ylabel), series, lo);
  }
  return fig;
}

// ------------------------------------------------------------------ cost against n

namespace {

plots::Series power_guide(const CostCurve& c, const std::vector<double>& y, double power, double through_n) {
  const double at = through_n > 0 ? through_n : c.n.back(), y_at = c.at(y, at);
  if (std::isnan(y_at)) plots::fail("cost_figure", "a guide through n = ", at, ", where '", c.name, "' was not measured");
  const double scale = y_at / std::pow(at, power);
  std::vector<double> ys;
  for (double n : c.n) ys.push_back(scale * std::pow(n, power));
  const std::string name = power == 2 ? "∝ n²" : power == 1 ? "∝ n" : "∝ n^" + rounded(power);
  plots::Series s = curve(name, c.n, ys);
  s.dashed = true;
  const double gray = std::clamp(0.75 - 0.25 * power, 0.0, 0.7);  // n: 0.5, n²: 0.25
  s.color = plots::Color{gray, gray, gray};
  return s;
}

}  // namespace

plots::Figure cost_figure(const std::vector<const CostCurve*>& curves, const CostFigureOptions& style) {
  if (curves.empty()) plots::fail("cost_figure", "no cost curves to draw");
  plots::Figure fig(style.width, style.height, 1, 2);
  fig.title(style.title);
  plots::LineOptions lo;
  lo.log_x = lo.log_y = lo.markers = true;
  std::vector<plots::Series> time, memory;
  for (const CostCurve* c : curves) {
    time.push_back(curve(c->name, c->n, c->cpu_ms));
    memory.push_back(curve(c->name, c->n, c->peak_mib));
  }
  auto guides = [&](const std::vector<PowerGuide>& gs, bool of_time, std::vector<plots::Series>& into) {
    for (const PowerGuide& g : gs) {
      if (g.curve >= curves.size()) plots::fail("cost_figure", "a guide through curve ", g.curve, " of ", curves.size());
      const CostCurve& c = *curves[g.curve];
      into.push_back(power_guide(c, of_time ? c.cpu_ms : c.peak_mib, g.power, g.through_n));
    }
  };
  guides(style.time_guides, true, time);
  guides(style.memory_guides, false, memory);
  plots::line_plot(fig.panel(0).title("CPU time, median of the rounds").xlabel("sequence length n (log scale)")
                       .ylabel("CPU milliseconds (log scale)"),
                   time, lo);
  plots::line_plot(fig.panel(1).title("Peak memory beyond the inputs").xlabel("sequence length n (log scale)")
                       .ylabel("MiB (log scale)"),
                   memory, lo);
  return fig;
}

plots::Figure loss_curves(const std::vector<Run>& runs, const CurvesFigureOptions& style) {
  if (runs.empty()) plots::fail("loss_curves", "no runs to draw");
  const int panels = int(style.steps) + int(style.epochs);
  if (panels == 0) plots::fail("loss_curves", "neither the step panel nor the epoch panel is asked for");
  plots::Figure fig(style.width, style.height, 1, panels);
  fig.title(style.title);
  plots::LineOptions lo;
  lo.log_y = style.log_y;
  int at = 0;
  if (style.steps) {
    // About 50 points per curve: the mean of each window of steps.
    const std::size_t window = std::max<std::size_t>(1, runs.front().second->loss.size() / 50);
    std::vector<plots::Series> series;
    for (const auto& [name, h] : runs) {
      const Windowed w = windowed(h->loss, window);
      series.push_back(curve(name, w.x, w.y));
    }
    const std::string what = window > 1 ? " (mean of every " + std::to_string(window) + " steps)" : "";
    plots::line_plot(fig.panel(at++).title("Training loss" + what).xlabel("training step").ylabel(style.ylabel),
                     series, lo);
  }
  if (style.epochs) {
    std::vector<plots::Series> series;
    bool held_out = false;
    for (const auto& [name, h] : runs) {
      const bool has = std::any_of(h->validation.begin(), h->validation.end(),
                                   [&](const auto& v) { return v.first == style.validation; });
      held_out = held_out || has;
      if (runs.size() == 1 || !has)
        series.push_back(curve(runs.size() == 1 ? "training (mean over the epoch)" : name, h->epoch_loss));
      if (has) series.push_back(curve(runs.size() == 1 ? "held out (end of epoch)" : name, h->validation_of(style.validation)));
    }
    lo.markers = true;
    const std::string title = held_out ? (runs.size() == 1 ? "Training and held-out " + style.validation + " by epoch"
                                                           : "Held-out " + style.validation + " by epoch")
                                       : "Mean training loss by epoch";
    plots::line_plot(fig.panel(at++).title(title).xlabel("epoch").ylabel(style.ylabel), series, lo);
  }
  return fig;
}

// ------------------------------------------------------------------ bars

void bar_panel(plots::Panel& panel, const std::vector<std::string>& categories,
               const std::vector<std::pair<std::string, std::vector<double>>>& series, int decimals,
               std::optional<double> ymax) {
  xt::xarray<double> values = xt::zeros<double>({series.size(), categories.size()});
  plots::BarOptions o;
  o.categories = categories;
  for (std::size_t s = 0; s < series.size(); ++s) {
    o.series.push_back(series[s].first);
    if (series[s].second.size() != categories.size())
      plots::fail("bar_panel", "series '", series[s].first, "' has ", series[s].second.size(), " values for ",
                  categories.size(), " categories");
    for (std::size_t c = 0; c < categories.size(); ++c) values(s, c) = series[s].second[c];
  }
  o.value_labels = true;
  o.decimals = decimals;
  o.ymin = 0.0;
  o.ymax = ymax;
  plots::bar_chart(panel, values, o);
}

plots::Figure bar_figure(const std::vector<BarPanel>& panels, const BarFigureOptions& style) {
  if (panels.empty()) plots::fail("bar_figure", "no panels for '", style.title, "'");
  plots::Figure fig(style.width, style.height, int(panels.size()), 1);
  fig.title(style.title);
  for (std::size_t i = 0; i < panels.size(); ++i) {
    plots::Panel& p = fig.panel(int(i));
    if (!panels[i].title.empty()) p.title(panels[i].title);
    bar_panel(p.ylabel(panels[i].ylabel), panels[i].categories, panels[i].series, style.decimals, style.ymax);
  }
  return fig;
}

plots::Figure line_panels(const std::vector<LinePanel>& panels, const LinePanelsOptions& style) {
  if (panels.empty()) plots::fail("line_panels", "no panels for '", style.title, "'");
  plots::Figure fig(style.width, style.height, int(panels.size()), 1);
  fig.title(style.title);
  for (std::size_t i = 0; i < panels.size(); ++i)
    plots::line_plot(fig.panel(int(i)).title(panels[i].title).ylabel(style.ylabel)
                         .xlabel(i + 1 == panels.size() ? style.xlabel : ""),
                     panels[i].series, style.line);
  return fig;
}

std::string multi_head_diagram() {
  return
      "digraph heads { rankdir=LR; nodesep=0.2; node [shape=box, style=\"rounded,filled\", fillcolor=\"#eef3fb\", "
      "color=\"#5b7bb3\", fontname=\"DejaVu Sans\", fontsize=11]; edge [color=\"#555555\", fontname=\"DejaVu Sans\", "
      "fontsize=9];\n"
      "x [label=\"x\\n(B, L, d)\"]; qkv [label=\"Q, K, V = x W_q, x W_k, x W_v\\n(B, L, d) each\"];\n"
      "subgraph cluster_heads { label=\"h heads, in parallel\"; fontname=\"DejaVu Sans\"; color=\"#bbbbbb\"; style=dashed;\n"
      "h1 [label=\"head 1\\nsoftmax(Q_1 K_1^T / sqrt(d_k)) V_1\\n(B, L, d_k)\", fillcolor=\"#fdf0e0\"];\n"
      "dots [label=\"...\", shape=plaintext, style=\"\"];\n"
      "h2 [label=\"head h\\nsoftmax(Q_h K_h^T / sqrt(d_k)) V_h\\n(B, L, d_k)\", fillcolor=\"#fdf0e0\"]; }\n"
      "merge [label=\"merge: heads side by side\\n(B, L, h d_k) = (B, L, d)\"]; out [label=\"out = merged W_o\\n(B, L, d)\"];\n"
      "x -> qkv; qkv -> h1 [label=\" columns 1..d_k\"]; qkv -> dots [style=invis]; "
      "qkv -> h2 [label=\" last d_k columns\"]; h1 -> merge; dots -> merge [style=invis]; h2 -> merge; merge -> out; }";
}

// ------------------------------------------------------------------ tick labels

std::vector<std::string> number_labels(std::size_t n, std::size_t every) {
  std::vector<std::string> out(n);
  for (std::size_t i = 0; i < n; i += std::max<std::size_t>(every, 1)) out[i] = std::to_string(i);
  return out;
}

std::vector<std::string> numbered(const std::string& prefix, std::size_t n, std::size_t first) {
  std::vector<std::string> out;
  for (std::size_t i = first; i < first + n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

std::vector<std::string> value_labels(const xt::xarray<double>& values, std::size_t every, int decimals) {
  std::vector<std::string> out(values.size());
  for (std::size_t i = 0; i < values.size(); i += std::max<std::size_t>(every, 1)) out[i] = fixed(values(i), decimals);
  return out;
}

std::string visible(const std::string& token) {
  if (token == " ") return "\u2423";
  if (token == "\n") return "\u23ce";
  if (token == "\t") return "\u21e5";
  return token;
}

std::vector<std::string> char_labels(const std::string& text, bool with_eos) {
  std::vector<std::string> out;
  for (char ch : text) out.push_back(visible(std::string(1, ch)));
  if (with_eos) out.push_back("<eos>");
  return out;
}

}  // namespace attnlab::lessons

namespace attnlab::lessons {

std::vector<std::string> token_labels(const std::vector<Index>& ids, const nn::data::Vocab& vocab) {
  std::vector<std::string> out;
  for (Index id : ids) out.push_back(visible(vocab.token(id)));
  return out;
}

}  // namespace attnlab::lessons
