#include "plots/heatmap.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <xtensor/xview.hpp>

#include "plots/colorbar.hpp"
#include "plots/error.hpp"
#include "plots/tick_labels.hpp"
#include "plots/ticks.hpp"

namespace attnlab::plots {

namespace {

// Index labels "0", "5", "10", ... at a 1-2-5 stride wide enough for the labels to sit side by
// side; the others are left empty (no tick, no text).
std::vector<std::string> index_labels(Canvas& c, std::size_t n, double pitch, bool horizontal) {
  std::vector<std::string> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = std::to_string(i);
  c.font(font_size::tick);
  const double need = horizontal ? widest(c, all) + 8 : c.line_height() * 1.3;
  std::size_t stride = 1;
  for (std::size_t mag = 1; pitch * double(stride) < need; mag *= 10)
    for (std::size_t m : {1, 2, 5})
      if (pitch * double(stride) < need) stride = m * mag;
  for (std::size_t i = 0; i < n; ++i)
    if (i % stride != 0) all[i].clear();
  return all;
}

class HeatmapPlot : public Plot {
 public:
  HeatmapPlot(xt::xarray<double> m, HeatmapOptions o, double vmin, double vmax)
      : m_(std::move(m)), o_(std::move(o)), vmin_(vmin), vmax_(vmax) {}

  std::size_t rows() const { return m_.shape()[0]; }
  std::size_t cols() const { return m_.shape()[1]; }

  Rect fit(const Rect& area) const override {
    if (!o_.square_cells) return area;
    const double s = std::min(area.w / double(cols()), area.h / double(rows()));
    const double w = s * double(cols()), h = s * double(rows());
    return {area.x + (area.w - w) / 2, area.y + (area.h - h) / 2, w, h};
  }

  Margins margins(Canvas& c, const Rect& area, const TickLabelsShown& shown) const override {
    const Rect d = fit(area);
    Margins m;
    if (shown.x) {
      const auto xl = x_labels(c, d);
      const XLabelPlan plan = x_plan(c, xl, d);
      m.bottom = kTickLen + kTickPad + plan.extent;
      m.left = std::max(0.0, plan.overhang_left - d.w / double(cols()) / 2);
    }
    if (shown.y) {
      c.font(font_size::tick);
      m.left = std::max(m.left, kTickLen + kTickPad + widest(c, y_labels(c, d)));
    }
    if (o_.colorbar) m.right = kColorbarGap + colorbar_width(c, spec());
    return m;
  }

  void draw(Canvas& c, const Rect& d, const TickLabelsShown& shown) const override {
    draw_cells(c, d);
    if (o_.annotate || !o_.cell_text.empty()) annotate(c, d);
    outline(c, d);
    c.stroke_rect(d, ink::axis, 0.8);
    const double cw = d.w / double(cols()), ch = d.h / double(rows());
    if (shown.x) {
      const auto xl = x_labels(c, d);
      const XLabelPlan plan = x_plan(c, xl, d);
      for (std::size_t j = 0; j < cols(); j += plan.every)
        if (!xl[j].empty()) c.line(d.x + (j + 0.5) * cw, d.bottom(), d.x + (j + 0.5) * cw, d.bottom() + kTickLen, ink::axis, 0.8);
      c.set_color(ink::text);
      draw_x_labels(c, xl, plan, d.bottom() + kTickLen + kTickPad, [&](std::size_t j) { return d.x + (j + 0.5) * cw; });
    }
    if (shown.y) {
      const auto yl = y_labels(c, d);
      const std::size_t every = o_.y_labels.empty() ? 1 : y_label_stride(c, ch);
      c.font(font_size::tick);
      for (std::size_t i = 0; i < rows(); i += every) {
        if (yl[i].empty()) continue;
        const double y = d.y + (i + 0.5) * ch;
        c.line(d.x - kTickLen, y, d.x, y, ink::axis, 0.8);
        c.set_color(ink::text);
        c.text(yl[i], d.x - kTickLen - kTickPad, y, HAlign::right, VAlign::middle);
      }
    }
    if (o_.colorbar) draw_colorbar(c, {d.right() + kColorbarGap, d.y, kColorbarStrip, d.h}, spec());
  }

 private:
  ColorbarSpec spec() const { return {o_.cmap, vmin_, vmax_, o_.colorbar_label}; }

  std::vector<std::string> x_labels(Canvas& c, const Rect& d) const {
    return o_.x_labels.empty() ? index_labels(c, cols(), d.w / double(cols()), true) : o_.x_labels;
  }
  std::vector<std::string> y_labels(Canvas& c, const Rect& d) const {
    return o_.y_labels.empty() ? index_labels(c, rows(), d.h / double(rows()), false) : o_.y_labels;
  }
  XLabelPlan x_plan(Canvas& c, const std::vector<std::string>& xl, const Rect& d) const {
    if (o_.x_labels.empty()) {  // index labels were spaced to fit horizontally
      c.font(font_size::tick);
      return XLabelPlan{0, 1, c.line_height(), 0};
    }
    return plan_x_labels(c, xl, d.w / double(cols()));
  }

  // Cells as rectangles without antialiasing: every interior pixel has the colormap's exact
  // color. Each cell is the path through its four corners, from its own edge to the next cell's
  // edge, so that neighbours share their boundary exactly. (cairo_rectangle(x, y, w, h) adds w to
  // x in cairo's fixed point, where fixed(x) + fixed(w) can miss fixed(x + w) by one unit: a pixel
  // centre in between stays unpainted, a white hairline seam.)
  void draw_cells(Canvas& c, const Rect& d) const {
    cairo_t* cr = c.cr();
    const double cw = d.w / double(cols()), ch = d.h / double(rows());
    auto x_edge = [&](std::size_t j) { return j == cols() ? d.right() : d.x + double(j) * cw; };
    auto y_edge = [&](std::size_t i) { return i == rows() ? d.bottom() : d.y + double(i) * ch; };
    cairo_save(cr);
    cairo_set_antialias(cr, CAIRO_ANTIALIAS_NONE);
    for (std::size_t i = 0; i < rows(); ++i)
      for (std::size_t j = 0; j < cols(); ++j) {
        c.set_color(o_.cmap.at(m_(i, j), vmin_, vmax_));
        cairo_move_to(cr, x_edge(j), y_edge(i));
        cairo_line_to(cr, x_edge(j + 1), y_edge(i));
        cairo_line_to(cr, x_edge(j + 1), y_edge(i + 1));
        cairo_line_to(cr, x_edge(j), y_edge(i + 1));
        cairo_close_path(cr);
        cairo_fill(cr);
      }
    cairo_restore(cr);
    // NaN cells: grey with a diagonal hatch, so "no value" never reads as a low value.
    for (std::size_t i = 0; i < rows(); ++i)
      for (std::size_t j = 0; j < cols(); ++j)
        if (std::isnan(m_(i, j))) hatch(c, {d.x + j * cw, d.y + i * ch, cw, ch});
  }

  static void hatch(Canvas& c, const Rect& r) {
    cairo_t* cr = c.cr();
    cairo_save(cr);
    cairo_rectangle(cr, r.x, r.y, r.w, r.h);
    cairo_clip(cr);
    c.set_color(ink::nan_hatch);
    cairo_set_line_width(cr, 0.8);
    const double step = 4.5;
    for (double t = -r.h; t < r.w; t += step) {
      cairo_move_to(cr, r.x + t, r.bottom());
      cairo_line_to(cr, r.x + t + r.h, r.y);
    }
    cairo_stroke(cr);
    cairo_restore(cr);
  }

  // A box just inside each outlined cell, 1/8 of the cell (1.5 to 3 px) wide.
  void outline(Canvas& c, const Rect& d) const {
    const double cw = d.w / double(cols()), ch = d.h / double(rows());
    const double w = std::clamp(std::min(cw, ch) / 8, 1.5, 3.0);
    for (const auto& [i, j] : o_.outlined)
      c.stroke_rect({d.x + j * cw + w / 2, d.y + i * ch + w / 2, cw - w, ch - w}, o_.outline_color, w);
  }

  // Font size: the default, shrunk so the widest value fits in 90 % of a cell; below 6 px the
  // numbers would be unreadable on a slide, so they are left out.
  void annotate(Canvas& c, const Rect& d) const {
    const double cw = d.w / double(cols()), ch = d.h / double(rows());
    std::vector<std::string> text = o_.cell_text;
    if (text.empty()) {
      text.resize(m_.size());
      for (std::size_t k = 0; k < m_.size(); ++k)
        if (!std::isnan(m_.data()[k])) text[k] = format_fixed(m_.data()[k], o_.decimals);
    }
    c.font(font_size::annotation);
    const double w = std::max(1.0, widest(c, text));
    const double size = std::min({font_size::annotation, font_size::annotation * cw * 0.9 / w, ch * 0.55});
    if (size < 6) return;
    c.font(size);
    for (std::size_t i = 0; i < rows(); ++i)
      for (std::size_t j = 0; j < cols(); ++j) {
        const std::string& s = text[i * cols() + j];
        if (s.empty()) continue;
        c.set_color(text_color_on(o_.cmap.at(m_(i, j), vmin_, vmax_)));
        c.text(s, d.x + (j + 0.5) * cw, d.y + (i + 0.5) * ch, HAlign::center, VAlign::middle);
      }
  }

  xt::xarray<double> m_;
  HeatmapOptions o_;
  double vmin_, vmax_;
};

void check_matrix(const char* where, const xt::xarray<double>& m, const HeatmapOptions& o) {
  require(m.dimension() == 2, where, "expected a 2-D matrix (queries x keys), got shape ", shape_text(m.shape()));
  require(m.size() > 0, where, "empty matrix of shape ", shape_text(m.shape()));
  require(o.x_labels.empty() || o.x_labels.size() == m.shape()[1], where, o.x_labels.size(),
          " x labels (columns, keys) for a matrix of shape ", shape_text(m.shape()), " with ", m.shape()[1],
          " columns");
  require(o.y_labels.empty() || o.y_labels.size() == m.shape()[0], where, o.y_labels.size(),
          " y labels (rows, queries) for a matrix of shape ", shape_text(m.shape()), " with ", m.shape()[0], " rows");
  require(o.decimals >= 0 && o.decimals <= 10, where, "decimals must be in [0, 10], got ", o.decimals);
  require(o.cell_text.empty() || o.cell_text.size() == m.size(), where, o.cell_text.size(),
          " cell texts for a matrix of shape ", shape_text(m.shape()), " with ", m.size(), " cells");
  for (const auto& [i, j] : o.outlined)
    require(i < m.shape()[0] && j < m.shape()[1], where, "outlined cell (", i, ", ", j,
            ") outside a matrix of shape ", shape_text(m.shape()));
}

}  // namespace

std::pair<double, double> heatmap_range(const xt::xarray<double>& m, const HeatmapOptions& o) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : m)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!(lo <= hi)) lo = 0, hi = 1;  // no finite value: every cell is drawn as NaN anyway
  if (o.cmap.diverging()) {
    const double a = std::max(std::abs(lo), std::abs(hi));
    lo = -a, hi = a;
  }
  if (o.vmin) lo = *o.vmin;
  if (o.vmax) hi = *o.vmax;
  if (lo == hi && !o.vmin && !o.vmax) {  // a constant matrix: centre its color in a unit-wide range
    const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.5;
    lo -= pad, hi += pad;
  }
  require(lo < hi, "heatmap", "vmin must be below vmax, got vmin = ", lo, ", vmax = ", hi);
  return {lo, hi};
}

void heatmap(Panel& p, const xt::xarray<double>& m, const HeatmapOptions& o) {
  check_matrix("heatmap", m, o);
  const auto [lo, hi] = heatmap_range(m, o);
  p.set_plot(std::make_shared<HeatmapPlot>(m, o, lo, hi));
}

Figure heatmap_grid(const xt::xarray<double>& heads, const HeatmapGridOptions& o) {
  require(heads.dimension() == 3, "heatmap_grid", "expected (heads, queries, keys), got shape ",
          shape_text(heads.shape()));
  const std::size_t n = heads.shape()[0];
  require(n > 0 && heads.size() > 0, "heatmap_grid", "empty array of shape ", shape_text(heads.shape()));
  require(o.cols > 0, "heatmap_grid", "cols must be positive, got ", o.cols);
  require(o.panel_titles.empty() || o.panel_titles.size() == n, "heatmap_grid", o.panel_titles.size(),
          " panel titles for ", n, " panels");
  const int cols = int(std::min<std::size_t>(n, std::size_t(o.cols)));
  const int rows = int((n + std::size_t(cols) - 1) / std::size_t(cols));
  Figure fig(o.width_px, o.height_px, rows, cols, o.scale);
  fig.title(o.title);

  HeatmapOptions each = o.heatmap;
  const auto [lo, hi] = heatmap_range(heads, each);  // one range for all heads: colors compare across panels
  each.vmin = lo, each.vmax = hi;
  each.colorbar = false;
  for (std::size_t h = 0; h < n; ++h) {
    const int r = int(h) / cols, c = int(h) % cols;
    const bool bottom = h + std::size_t(cols) >= n;  // no head below this one
    const bool left = c == 0;
    Panel& p = fig.panel(r, c);
    p.title(o.panel_titles.empty() ? o.panel_title + " " + std::to_string(h + 1) : o.panel_titles[h])
        .show_tick_labels(bottom, left);
    if (bottom) p.xlabel(o.xlabel);
    if (left) p.ylabel(o.ylabel);
    const xt::xarray<double> slice = xt::view(heads, h, xt::all(), xt::all());
    check_matrix("heatmap_grid", slice, each);
    p.set_plot(std::make_shared<HeatmapPlot>(slice, each, lo, hi));
  }
  fig.shared_colorbar({each.cmap, lo, hi, each.colorbar_label});
  return fig;
}

}  // namespace attnlab::plots
