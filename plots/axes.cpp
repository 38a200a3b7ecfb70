#include "plots/axes.hpp"

#include <algorithm>

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
    if (!shown.x || t.label.empty()) continue;
    c.set_color(ink::text);
    c.text(t.label, px, d.bottom() + kTickLen + kTickPad, HAlign::center, VAlign::top);
  }
}

}  // namespace attnlab::plots
