#include "plots/tick_labels.hpp"

#include <algorithm>
#include <cmath>

namespace attnlab::plots {

double widest(Canvas& c, const std::vector<std::string>& labels) {
  double w = 0;
  for (const auto& s : labels) w = std::max(w, c.text_width(s));
  return w;
}

XLabelPlan plan_x_labels(Canvas& c, const std::vector<std::string>& labels, double pitch) {
  c.font(font_size::tick);
  const double w = widest(c, labels), h = c.line_height();
  XLabelPlan p;
  if (w + 6 <= pitch) {
    p.angle = 0;
    p.extent = h;
  } else if (pitch * std::sqrt(0.5) >= h * 1.05 && labels.size() <= 40) {
    // At 45 degrees neighbouring labels are pitch * sin(45) apart across their baselines.
    p.angle = 45;
    p.extent = (w + h) * std::sqrt(0.5);
    p.overhang_left = w * std::sqrt(0.5);
  } else {
    p.angle = 90;
    p.every = std::size_t(std::max(1.0, std::ceil(h * 1.1 / pitch)));
    p.extent = w;
  }
  return p;
}

std::size_t y_label_stride(Canvas& c, double pitch) {
  c.font(font_size::tick);
  return std::size_t(std::max(1.0, std::ceil(c.line_height() * 1.05 / pitch)));
}

}  // namespace attnlab::plots
