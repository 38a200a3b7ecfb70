// Legends: inside the data rectangle in the first corner that hides no data point (upper right,
// upper left, lower right, lower left), else outside, to the right of the data.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "plots/canvas.hpp"

namespace attnlab::plots {

struct LegendEntry {
  std::string name;
  Color color;
  bool line = true;     // a line sample (line plots) or a filled square (bar charts)
  bool marker = false;
  bool dashed = false;
};

using Points = std::vector<std::pair<double, double>>;  // data positions in logical px

inline constexpr double kLegendOutsideGap = 14;

struct LegendPlacement {
  bool outside = false;
  Rect box;
};

LegendPlacement place_legend(Canvas& c, const Rect& d, const std::vector<LegendEntry>& entries, const Points& points);
void draw_legend(Canvas& c, const Rect& box, const std::vector<LegendEntry>& entries);

}  // namespace attnlab::plots
