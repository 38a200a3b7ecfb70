#include "plots/axes.hpp"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "plots/tick_labels.hpp"

namespace attnlab::plots {

std::vector<Tick> axis_ticks(double lo, double hi, bool log) {
  std::vector<Tick> t = log ? log_ticks(lo, hi) : nice_ticks(lo, hi, 5);
  // Keep ticks inside the axis (a nice tick may fall a rounding error outside).
  const double span = hi - lo;
  t.erase(std::remove_if(t.begin(), t.end(),
                         [&](const Tick& k) { return k.value < lo - 1e-9 * span || k.value > hi + 1e-9 * span; }),
          t.end());
  return t;
}

std::vector<std::size_t> labels_that_fit(const std::vector<Tick>& ticks, const std::function<double(double)>& at,
                                         const std::function<double(const std::string&)>& width, double gap) {
  // The roundest first: 1, then 5, then 2 times a power of ten, then the rest, in axis order.
  auto roundness = [](double v) {
    if (v == 0) return 0;
    const double m = std::abs(v) / std::pow(10.0, std::floor(std::log10(std::abs(v)) + 1e-9));
    return std::abs(m - 1) < 1e-6 ? 0 : std::abs(m - 5) < 1e-6 ? 1 : std::abs(m - 2) < 1e-6 ? 2 : 3;
  };
  std::vector<std::size_t> order;
  for (std::size_t i = 0; i < ticks.size(); ++i)
    if (!ticks[i].label.empty()) order.push_back(i);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return roundness(ticks[a].value) < roundness(ticks[b].value); });
  std::vector<std::size_t> kept;
  std::vector<std::pair<double, double>> extents;
  for (std::size_t i : order) {
    const double px = at(ticks[i].value), half = width(ticks[i].label) / 2;
    const bool clear = std::none_of(extents.begin(), extents.end(), [&](const std::pair<double, double>& e) {
      return px - half < e.second + gap && px + half > e.first - gap;
    });
    if (!clear) continue;
    kept.push_back(i);
    extents.push_back({px - half, px + half});
  }
  std::sort(kept.begin(), kept.end());
  return kept;
}

void XYAxes::place(const Rect& d) {
  x.p0 = d.x, x.p1 = d.right();
  y.p0 = d.bottom(), y.p1 = d.y;
}

Margins XYAxes::margins(Canvas& c, const TickLabelsShown& shown, bool x_labels_drawn) const {
  c.font(font_size::tick);
  Margins m;
  const double h = c.line_height();
  m.top = h / 2;  // the top y tick label is centred on the top edge
  if (shown.y) {
    double w = 0;
    for (const Tick& t : yticks) w = std::max(w, c.text_width(t.label));
    m.left = kTickLen + kTickPad + w;
  }
  if (shown.x && x_labels_drawn) {
    m.bottom = kTickLen + kTickPad + h;
    for (const Tick& t : xticks)  // the last labelled x tick may stick out past the right edge
      if (!t.label.empty()) m.right = c.text_width(t.label) / 2;
  }
  return m;
}

void XYAxes::draw_grid(Canvas& c, const Rect& d) const {
  if (!grid) return;
  const Color minor{0.95, 0.95, 0.95};
  for (const Tick& t : yticks) {
    const double py = y(t.value);
    c.line(d.x, py, d.right(), py, t.label.empty() ? minor : ink::grid, 0.8);
  }
  for (const Tick& t : xticks) {
    const double px = x(t.value);
    c.line(px, d.y, px, d.bottom(), t.label.empty() ? minor : ink::grid, 0.8);
  }
}

void XYAxes::draw_frame(Canvas& c, const Rect& d, const TickLabelsShown& shown, bool x_labels_drawn) const {
  c.line(d.x, d.y, d.x, d.bottom(), ink::axis, 1.0);
  c.line(d.x, d.bottom(), d.right(), d.bottom(), ink::axis, 1.0);
  c.font(font_size::tick);
  for (const Tick& t : yticks) {
    const double py = y(t.value);
    c.line(d.x - (t.label.empty() ? kTickLen / 2 : kTickLen), py, d.x, py, ink::axis, 0.8);
    if (!shown.y || t.label.empty()) continue;
    c.set_color(ink::text);
    c.text(t.label, d.x - kTickLen - kTickPad, py, HAlign::right, VAlign::middle);
  }
  if (!x_labels_drawn) return;
  for (const Tick& t : xticks) {
    const double px = x(t.value);
    c.line(px, d.bottom(), px, d.bottom() + (t.label.empty() ? kTickLen / 2 : kTickLen), ink::axis, 0.8);
  }
  if (!shown.x) return;
  c.set_color(ink::text);
  const auto at = [&](double v) { return x(v); };
  const auto width = [&](const std::string& label) { return c.text_width(label); };
  for (std::size_t i : labels_that_fit(xticks, at, width, c.text_width("0") / 2))
    c.text(xticks[i].label, x(xticks[i].value), d.bottom() + kTickLen + kTickPad, HAlign::center, VAlign::top);
}

}  // namespace attnlab::plots
