#include "plots/bar.hpp"

#include <algorithm>
#include <cmath>

#include <xtensor/xmath.hpp>

#include "plots/axes.hpp"
#include "plots/error.hpp"
#include "plots/legend.hpp"
#include "plots/tick_labels.hpp"

namespace attnlab::plots {

namespace {

constexpr double kGroupWidth = 0.8;  // fraction of a category's slot filled by its bars

class BarPlot : public Plot {
 public:
  BarPlot(xt::xarray<double> v, BarOptions o, XYAxes ax) : v_(std::move(v)), o_(std::move(o)), axes_(std::move(ax)) {
    for (std::size_t s = 0; s < nseries(); ++s)
      if (!o_.series[s].empty()) legend_.push_back({o_.series[s], series_color(s), false, false, false});
  }

  std::size_t nseries() const { return v_.shape()[0]; }
  std::size_t ncat() const { return v_.shape()[1]; }

  Margins margins(Canvas& c, const Rect& area, const TickLabelsShown& shown) const override {
    Margins m = axes_.margins(c, shown, false);
    if (shown.x) m.bottom = kTickLen + kTickPad + plan_x_labels(c, o_.categories, area.w / double(ncat())).extent;
    const LegendPlacement lp = place_legend(c, area, legend_, occupied(c, area));
    if (!legend_.empty() && lp.outside) m.right = kLegendOutsideGap + lp.box.w;
    return m;
  }

  void draw(Canvas& c, const Rect& d, const TickLabelsShown& shown) const override {
    XYAxes ax = axes_;
    ax.place(d);
    ax.draw_grid(c, d);
    cairo_t* cr = c.cr();
    cairo_save(cr);
    cairo_rectangle(cr, d.x, d.y, d.w, d.h);
    cairo_clip(cr);
    for (std::size_t j = 0; j < ncat(); ++j)
      for (std::size_t s = 0; s < nseries(); ++s) c.fill_rect(bar(ax, d, s, j), series_color(s));
    cairo_restore(cr);
    if (o_.value_labels) labels(c, d, ax);
    ax.draw_frame(c, d, shown, false);
    if (shown.x) {
      const double slot = d.w / double(ncat());
      const XLabelPlan plan = plan_x_labels(c, o_.categories, slot);
      c.set_color(ink::text);
      draw_x_labels(c, o_.categories, plan, d.bottom() + kTickLen + kTickPad,
                    [&](std::size_t j) { return d.x + slot * (j + 0.5); });
    }
    if (!legend_.empty()) draw_legend(c, place_legend(c, d, legend_, occupied(c, d)).box, legend_);
  }

 private:
  Rect bar(const XYAxes& ax, const Rect& d, std::size_t s, std::size_t j) const {
    const double slot = d.w / double(ncat()), bw = slot * kGroupWidth / double(nseries());
    const double x = d.x + slot * (j + (1 - kGroupWidth) / 2) + bw * s;
    const double base = ax.y(std::clamp(0.0, ax.y.d0, ax.y.d1)), top = ax.y(v_(s, j));
    return {x + 0.5, std::min(top, base), bw - 1.0, std::abs(base - top)};
  }

  // Bars and their value labels, sampled as points, for the legend to avoid.
  Points occupied(Canvas& c, const Rect& d) const {
    XYAxes ax = axes_;
    ax.place(d);
    c.font(font_size::annotation);
    const double label_h = o_.value_labels ? c.line_height() + 2 : 0;
    Points pts;
    for (std::size_t j = 0; j < ncat(); ++j)
      for (std::size_t s = 0; s < nseries(); ++s) {
        const Rect b = bar(ax, d, s, j);
        const bool up = v_(s, j) >= 0;
        const double y0 = up ? b.y - label_h : b.y, y1 = up ? b.bottom() : b.bottom() + label_h;
        for (double y = y0; y <= y1; y += 8)
          for (double f : {0.0, 0.5, 1.0}) pts.emplace_back(b.x + f * b.w, y);
      }
    return pts;
  }

  // Values above positive bars, below negative ones; the font shrinks to the bar width.
  void labels(Canvas& c, const Rect& d, const XYAxes& ax) const {
    std::vector<std::string> text;
    for (double v : v_) text.push_back(format_fixed(v, o_.decimals));
    const double bw = d.w / double(ncat()) * kGroupWidth / double(nseries());
    c.font(font_size::annotation);
    const double size = std::min(font_size::annotation, font_size::annotation * (bw + 6) / std::max(1.0, widest(c, text)));
    if (size < 6) return;
    c.font(size);
    c.set_color(ink::text);
    for (std::size_t j = 0; j < ncat(); ++j)
      for (std::size_t s = 0; s < nseries(); ++s) {
        const Rect b = bar(ax, d, s, j);
        if (v_(s, j) >= 0) c.text(text[s * ncat() + j], b.cx(), b.y - 2, HAlign::center, VAlign::bottom);
        else c.text(text[s * ncat() + j], b.cx(), b.bottom() + 2, HAlign::center, VAlign::top);
      }
  }

  xt::xarray<double> v_;
  BarOptions o_;
  XYAxes axes_;
  std::vector<LegendEntry> legend_;
};

}  // namespace

void bar_chart(Panel& p, const xt::xarray<double>& values, const BarOptions& o) {
  require(values.dimension() == 2, "bar_chart", "expected values of shape (series, categories), got ",
          shape_text(values.shape()));
  require(values.size() > 0, "bar_chart", "empty values of shape ", shape_text(values.shape()));
  const std::size_t ns = values.shape()[0], nc = values.shape()[1];
  require(o.categories.size() == nc, "bar_chart", o.categories.size(), " category labels for values of shape ",
          shape_text(values.shape()), " with ", nc, " categories");
  require(o.series.size() == ns, "bar_chart", o.series.size(), " series names for values of shape ",
          shape_text(values.shape()), " with ", ns, " series");
  for (std::size_t s = 0; s < ns; ++s)
    for (std::size_t j = 0; j < nc; ++j)
      require(std::isfinite(values(s, j)), "bar_chart", "value (", s, ",", j, ") of series \"", o.series[s],
              "\" is not finite: ", values(s, j));
  double lo = std::min(0.0, xt::amin(values)()), hi = std::max(0.0, xt::amax(values)());
  // Head room above the tallest bar for its value label and the legend.
  hi += (hi - lo) * (o.value_labels ? 0.12 : 0.05);
  nice_range(lo, hi, 5);
  if (o.ymin) lo = *o.ymin;
  if (o.ymax) hi = *o.ymax;
  require(lo < hi, "bar_chart", "ymin must be below ymax, got ", lo, " and ", hi);
  XYAxes ax;
  ax.grid = o.grid;
  ax.x = {0, 1, 0, 1, false};
  ax.y = {lo, hi, 0, 1, false};
  ax.yticks = axis_ticks(lo, hi, false);
  p.set_plot(std::make_shared<BarPlot>(values, o, std::move(ax)));
}

}  // namespace attnlab::plots
