// The x-y frame shared by line plots and bar charts: left and bottom spines, outward tick marks,
// tick labels, light grid lines behind the data.
#pragma once

#include <vector>

#include "plots/canvas.hpp"
#include "plots/figure.hpp"
#include "plots/ticks.hpp"

namespace attnlab::plots {

struct XYAxes {
  Scale x, y;               // pixel ranges are filled in by place()
  std::vector<Tick> xticks, yticks;
  bool grid = true;

  void place(const Rect& d);  // maps the data ranges onto d
  // x_labels_drawn: false when the caller draws its own category labels (bar charts).
  Margins margins(Canvas& c, const TickLabelsShown& shown, bool x_labels_drawn = true) const;
  void draw_grid(Canvas& c, const Rect& d) const;
  void draw_frame(Canvas& c, const Rect& d, const TickLabelsShown& shown, bool x_labels_drawn = true) const;
};

// Ticks for [lo, hi] on a linear or log axis.
std::vector<Tick> axis_ticks(double lo, double hi, bool log);

}  // namespace attnlab::plots
