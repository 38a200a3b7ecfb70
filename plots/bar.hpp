// Grouped bar charts: one group per category, one bar per variant (series) in each group.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "plots/figure.hpp"

namespace attnlab::plots {

struct BarOptions {
  std::vector<std::string> categories;  // one per column of values (x axis groups)
  std::vector<std::string> series;      // one per row of values (legend entries, compared variants)
  bool value_labels = false;            // print each bar's value above it
  int decimals = 2;
  bool grid = true;
  std::optional<double> ymin, ymax;     // fixed y range (0 is always included otherwise)
};

// values: (series, categories). Throws PlotError on an empty or non-2-D array, label counts that do
// not match its shape, or a NaN value.
void bar_chart(Panel& p, const xt::xarray<double>& values, const BarOptions& o);

}  // namespace attnlab::plots
