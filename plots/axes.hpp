// The x-y frame shared by line plots and bar charts: left and bottom spines, outward tick marks,
// tick labels, light grid lines behind the data.
#pragma once

#include <functional>
#include <string>
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

// Which of an axis's labelled ticks to draw: where labels would run into each other (a log axis
// labelling every 0.07, 0.08, 0.09 of a short decade), the roundest keep their place (1, then 5,
// then 2 times a power of ten), each label kept only with `gap` to every one kept before it.
// `at` gives a tick's position along the axis, `width` a label's width. Returns indices, in order.
std::vector<std::size_t> labels_that_fit(const std::vector<Tick>& ticks, const std::function<double(double)>& at,
                                         const std::function<double(const std::string&)>& width, double gap);

}  // namespace attnlab::plots
