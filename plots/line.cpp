#include "plots/line.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "plots/axes.hpp"
#include "plots/error.hpp"
#include "plots/legend.hpp"

namespace attnlab::plots {

namespace {

bool usable(double x, double y, const LineOptions& o) {
  return std::isfinite(x) && std::isfinite(y) && (!o.log_x || x > 0) && (!o.log_y || y > 0);
}

class LinePlot : public Plot {
 public:
  LinePlot(std::vector<Series> s, LineOptions o, XYAxes axes) : s_(std::move(s)), o_(o), axes_(std::move(axes)) {
    for (std::size_t k = 0; k < s_.size(); ++k)
      if (!s_[k].name.empty())
        legend_.push_back({s_[k].name, s_[k].color.value_or(series_color(k)), true, o_.markers, s_[k].dashed});
  }

  Margins margins(Canvas& c, const Rect& area, const TickLabelsShown& shown) const override {
    Margins m = axes_.margins(c, shown);
    if (o_.legend && !legend_.empty()) {
      const LegendPlacement lp = place_legend(c, area, legend_, points(area));
      if (lp.outside) m.right = std::max(m.right, kLegendOutsideGap + lp.box.w);
    }
    return m;
  }

  bool log_scale(bool y_axis) const override { return y_axis ? o_.log_y : o_.log_x; }

  void draw(Canvas& c, const Rect& d, const TickLabelsShown& shown) const override {
    XYAxes ax = axes_;
    ax.place(d);
    ax.draw_grid(c, d);
    cairo_t* cr = c.cr();
    cairo_save(cr);
    cairo_rectangle(cr, d.x - 4, d.y - 4, d.w + 8, d.h + 8);  // markers on the edge stay whole
    cairo_clip(cr);
    for (std::size_t k = 0; k < s_.size(); ++k) {
      const Series& s = s_[k];
      const Color col = s.color.value_or(series_color(k));
      cairo_save(cr);
      cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
      if (s.dashed) {
        const double dash[] = {6, 3.5};
        cairo_set_dash(cr, dash, 2, 0);
      }
      bool pen_down = false;
      for (std::size_t i = 0; i < s.y.size(); ++i) {
        if (!usable(s.x(i), s.y(i), o_)) {
          pen_down = false;
          continue;
        }
        const double px = ax.x(s.x(i)), py = ax.y(s.y(i));
        if (pen_down) cairo_line_to(cr, px, py);
        else cairo_move_to(cr, px, py);
        pen_down = true;
      }
      c.set_color(col);
      cairo_set_line_width(cr, 2.0);
      cairo_stroke(cr);
      cairo_restore(cr);
      if (!o_.markers) continue;
      for (std::size_t i = 0; i < s.y.size(); ++i) {
        if (!usable(s.x(i), s.y(i), o_)) continue;
        cairo_arc(cr, ax.x(s.x(i)), ax.y(s.y(i)), 3.2, 0, 2 * M_PI);
        c.set_color(col);
        cairo_fill_preserve(cr);
        c.set_color(ink::white);
        cairo_set_line_width(cr, 0.8);
        cairo_stroke(cr);
      }
    }
    cairo_restore(cr);
    ax.draw_frame(c, d, shown);
    if (o_.legend && !legend_.empty()) draw_legend(c, place_legend(c, d, legend_, points(d)).box, legend_);
  }

 private:
  // Where the data would be drawn in d, including the segments between points (sampled), so that
  // a legend hides neither points nor lines.
  Points points(const Rect& d) const {
    XYAxes ax = axes_;
    ax.place(d);
    Points pts;
    for (const Series& s : s_) {
      bool have_prev = false;
      double px0 = 0, py0 = 0;
      for (std::size_t i = 0; i < s.y.size(); ++i) {
        if (!usable(s.x(i), s.y(i), o_)) {
          have_prev = false;
          continue;
        }
        const double px = ax.x(s.x(i)), py = ax.y(s.y(i));
        if (have_prev) {
          const int steps = int(std::hypot(px - px0, py - py0) / 6) + 1;
          for (int k = 1; k < steps; ++k)
            pts.emplace_back(px0 + (px - px0) * k / steps, py0 + (py - py0) * k / steps);
        }
        pts.emplace_back(px, py);
        px0 = px, py0 = py, have_prev = true;
      }
    }
    return pts;
  }

  std::vector<Series> s_;
  LineOptions o_;
  XYAxes axes_;
  std::vector<LegendEntry> legend_;
};

// Data range over usable points; on a log axis padded by 5 % of the decades spanned, on a linear y
// axis widened to nice ticks, on a linear x axis exact (curves run edge to edge). With markers a
// linear axis is first padded by 3 % of the range, so that the markers at its ends stand clear of the
// axis lines.
void data_range(const std::vector<Series>& ss, const LineOptions& o, bool is_y, double& lo, double& hi) {
  lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Series& s : ss)
    for (std::size_t i = 0; i < s.y.size(); ++i)
      if (usable(s.x(i), s.y(i), o)) {
        const double v = is_y ? s.y(i) : s.x(i);
        lo = std::min(lo, v), hi = std::max(hi, v);
      }
  const bool log = is_y ? o.log_y : o.log_x;
  if (log) {
    double a = std::log10(lo), b = std::log10(hi);
    const double pad = b > a ? 0.05 * (b - a) : 0.5;
    lo = std::pow(10.0, a - pad), hi = std::pow(10.0, b + pad);
    return;
  }
  if (o.markers && hi > lo) {
    const double pad = 0.03 * (hi - lo);
    lo -= pad, hi += pad;
  }
  if (is_y) nice_range(lo, hi, 5);
  else if (!(hi > lo)) lo -= 0.5, hi += 0.5;
}

}  // namespace

void line_plot(Panel& p, std::vector<Series> series, const LineOptions& o) {
  require(!series.empty(), "line_plot", "no series to draw");
  for (Series& s : series) {
    require(s.y.dimension() == 1 && s.y.size() > 0, "line_plot", "series \"", s.name,
            "\": y must be a non-empty 1-D array, got shape ", shape_text(s.y.shape()));
    if (s.x.dimension() == 0 || (s.x.dimension() == 1 && s.x.size() == 0)) {  // x not given
      s.x = xt::xarray<double>::from_shape({s.y.size()});
      for (std::size_t i = 0; i < s.y.size(); ++i) s.x(i) = double(i);
    }
    require(s.x.dimension() == 1 && s.x.size() == s.y.size(), "line_plot", "series \"", s.name, "\": x has shape ",
            shape_text(s.x.shape()), " but y has shape ", shape_text(s.y.shape()));
    bool finite = false, usable_any = false;
    for (std::size_t i = 0; i < s.y.size(); ++i) {
      finite = finite || (std::isfinite(s.x(i)) && std::isfinite(s.y(i)));
      usable_any = usable_any || usable(s.x(i), s.y(i), o);
    }
    require(finite, "line_plot", "series \"", s.name, "\" has no finite point (", s.y.size(),
            " points, all NaN or infinite)");
    require(usable_any, "line_plot", "series \"", s.name, "\" has no positive value for a log ",
            o.log_y ? "y" : "x", " axis");
  }
  XYAxes ax;
  ax.grid = o.grid;
  double x0, x1, y0, y1;
  data_range(series, o, false, x0, x1);
  data_range(series, o, true, y0, y1);
  if (o.ymin) y0 = *o.ymin;
  if (o.ymax) y1 = *o.ymax;
  require(y0 < y1, "line_plot", "ymin must be below ymax, got ", y0, " and ", y1);
  require(!o.log_y || y0 > 0, "line_plot", "ymin must be positive on a log y axis, got ", y0);
  ax.x = {x0, x1, 0, 1, o.log_x};
  ax.y = {y0, y1, 0, 1, o.log_y};
  ax.xticks = axis_ticks(x0, x1, o.log_x);
  ax.yticks = axis_ticks(y0, y1, o.log_y);
  p.set_plot(std::make_shared<LinePlot>(std::move(series), o, std::move(ax)));
}

}  // namespace attnlab::plots
