#include "plots/colorbar.hpp"

#include <algorithm>

#include "plots/ticks.hpp"

namespace attnlab::plots {

static constexpr double kTickLen = 4, kTickPad = 3, kLabelPad = 6;

double colorbar_width(Canvas& c, const ColorbarSpec& spec) {
  c.font(font_size::tick);
  double widest = 0;
  for (const Tick& t : nice_ticks(spec.vmin, spec.vmax, 5)) widest = std::max(widest, c.text_width(t.label));
  double w = kColorbarStrip + kTickLen + kTickPad + widest;
  if (!spec.label.empty()) {
    c.font(font_size::axis_label);
    w += kLabelPad + c.line_height();
  }
  return w;
}

void draw_colorbar(Canvas& c, const Rect& strip, const ColorbarSpec& spec) {
  // The gradient as 256 horizontal bands, top = vmax. Bands overlap by half a pixel so no seam
  // shows between them at any scale.
  const int n = 256;
  for (int i = 0; i < n; ++i) {
    const double t = (i + 0.5) / n;
    const double y0 = strip.bottom() - strip.h * double(i + 1) / n;
    c.fill_rect({strip.x, y0 - 0.25, strip.w, strip.h / n + 0.5}, spec.cmap(t));
  }
  c.stroke_rect(strip, ink::axis, 0.8);
  Scale sy{spec.vmin, spec.vmax, strip.bottom(), strip.y, false};
  c.font(font_size::tick);
  for (const Tick& t : nice_ticks(spec.vmin, spec.vmax, 5)) {
    const double y = sy(t.value);
    c.line(strip.right(), y, strip.right() + kTickLen, y, ink::axis, 0.8);
    c.set_color(ink::text);
    c.text(t.label, strip.right() + kTickLen + kTickPad, y, HAlign::left, VAlign::middle);
  }
  if (!spec.label.empty()) {
    c.font(font_size::tick);
    double widest = 0;
    for (const Tick& t : nice_ticks(spec.vmin, spec.vmax, 5)) widest = std::max(widest, c.text_width(t.label));
    c.font(font_size::axis_label);
    c.set_color(ink::text);
    const double x = strip.right() + kTickLen + kTickPad + widest + kLabelPad;
    c.text(spec.label, x, strip.cy(), HAlign::center, VAlign::top, 90);
  }
}

}  // namespace attnlab::plots
