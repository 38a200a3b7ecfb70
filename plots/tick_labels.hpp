// Placement of categorical tick labels (one per cell) along a heatmap axis or a bar chart's
// categories: horizontal when they fit, else rotated 45 degrees, else 90 degrees, else every k-th.
#pragma once

#include <string>
#include <vector>

#include "plots/canvas.hpp"

namespace attnlab::plots {

inline constexpr double kTickLen = 3.5, kTickPad = 2.5;

struct XLabelPlan {
  double angle = 0;   // 0, 45 or 90 degrees (counter-clockwise)
  std::size_t every = 1;
  double extent = 0;  // height below the tick marks
  double overhang_left = 0;  // how far rotated labels reach left of the first cell's centre
};

// labels at spacing `pitch` (logical px); uses the tick font.
XLabelPlan plan_x_labels(Canvas& c, const std::vector<std::string>& labels, double pitch);
// Draws labels[i] (those kept by the plan) centred under x_of(i), below y.
template <class F>
void draw_x_labels(Canvas& c, const std::vector<std::string>& labels, const XLabelPlan& plan, double y, F x_of) {
  c.font(font_size::tick);
  for (std::size_t i = 0; i < labels.size(); i += plan.every) {
    const double x = x_of(i);
    if (plan.angle == 0)
      c.text(labels[i], x, y, HAlign::center, VAlign::top);
    else if (plan.angle == 90)
      c.text(labels[i], x, y, HAlign::right, VAlign::middle, 90);
    else  // 45: the label ends at the tick and runs down to the left
      c.text(labels[i], x + 3, y, HAlign::right, VAlign::top, plan.angle);
  }
}

// Every k-th label along a vertical axis with pitch `pitch`; width of the widest label kept.
std::size_t y_label_stride(Canvas& c, double pitch);
double widest(Canvas& c, const std::vector<std::string>& labels);

}  // namespace attnlab::plots
