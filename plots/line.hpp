// Line plots: several series with a legend, optional markers, optional log scales, grid lines.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "plots/color.hpp"
#include "plots/figure.hpp"

namespace attnlab::plots {

struct Series {
  std::string name;       // legend entry; empty names are left out of the legend
  xt::xarray<double> x;   // 1-D; not given (default, 0-D) or empty: 0, 1, ..., n-1
  xt::xarray<double> y;   // 1-D; NaN points (and non-positive ones on a log axis) break the line
  std::optional<Color> color;  // default: the tab10 cycle
  bool dashed = false;

  Series(std::string n, xt::xarray<double> yv) : name(std::move(n)), y(std::move(yv)) {}
  Series(std::string n, xt::xarray<double> xv, xt::xarray<double> yv)
      : name(std::move(n)), x(std::move(xv)), y(std::move(yv)) {}
};

struct LineOptions {
  bool log_x = false, log_y = false;
  bool markers = false;
  bool grid = true;
  bool legend = true;
  std::optional<double> ymin, ymax;  // fixed y range
};

// Throws PlotError on no series, a series that is not 1-D or is empty, x and y of different
// lengths, a series with no finite value, or a log axis with no positive value.
void line_plot(Panel& p, std::vector<Series> series, const LineOptions& o = {});

}  // namespace attnlab::plots
