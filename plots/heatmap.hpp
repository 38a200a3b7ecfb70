// Heatmaps of a matrix, and grids of them (one panel per attention head).
// Convention (d2l.ai): rows are queries on the y axis, top to bottom; columns are keys on the x
// axis, left to right.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xexpression.hpp>
#include <xtensor/xoperation.hpp>

#include "plots/colormap.hpp"
#include "plots/figure.hpp"

namespace attnlab::plots {

struct HeatmapOptions {
  std::vector<std::string> x_labels;  // one per column (keys); empty: numeric column indices
  std::vector<std::string> y_labels;  // one per row (queries); empty: numeric row indices
  Colormap cmap = Colormap::viridis();
  // Fixed range when set; otherwise the finite data range, made symmetric around 0 for a
  // diverging colormap so that white means zero.
  std::optional<double> vmin, vmax;
  bool annotate = false;  // print each value in its cell (black or white by the cell's luminance)
  int decimals = 2;
  // Text to print in the cells instead of their values, row-major (rows x cols strings; "" leaves
  // a cell blank): the characters of a sentence under their attention weights. Implies annotate.
  std::vector<std::string> cell_text;
  // Cells (row, col) drawn with a box around them, over the colors: a true word alignment on top of
  // the attention weights. The box sits inside the cell, so neighbouring boxes stay apart.
  std::vector<std::pair<std::size_t, std::size_t>> outlined;
  Color outline_color = Color::hex("#ff2a2a");
  bool colorbar = true;
  std::string colorbar_label;
  bool square_cells = true;
};

// Draws m (2-D) into panel p. Throws PlotError on an empty or non-2-D matrix, label counts that do
// not match its shape, an outlined cell outside it, or vmin >= vmax.
void heatmap(Panel& p, const xt::xarray<double>& m, const HeatmapOptions& o = {});

template <class E>
void heatmap(Panel& p, const xt::xexpression<E>& m, const HeatmapOptions& o = {}) {
  heatmap(p, xt::xarray<double>(xt::cast<double>(m.derived_cast())), o);
}

struct HeatmapGridOptions {
  HeatmapOptions heatmap;            // labels, colormap, range, annotations (colorbar: shared)
  int cols = 4;                      // panels per row (fewer if there are fewer heads)
  std::string title;                 // figure title
  std::string panel_title = "Head";  // panels are titled "Head 1", "Head 2", ...
  std::vector<std::string> panel_titles;  // or each its own ("Layer 2, head 3"), one per panel
  std::string xlabel = "Keys", ylabel = "Queries";
  int width_px = 1600, height_px = 1000;
  double scale = 2.0;
};

// One panel per slice heads[h] of a 3-D array (heads, queries, keys), one shared colorbar and a
// shared value range; x tick labels on the bottom panels only, y tick labels on the left column only.
Figure heatmap_grid(const xt::xarray<double>& heads, const HeatmapGridOptions& o = {});

template <class E>
Figure heatmap_grid(const xt::xexpression<E>& heads, const HeatmapGridOptions& o = {}) {
  return heatmap_grid(xt::xarray<double>(xt::cast<double>(heads.derived_cast())), o);
}

// The range a heatmap uses for m under options o (exposed for tests and shared colorbars).
std::pair<double, double> heatmap_range(const xt::xarray<double>& m, const HeatmapOptions& o);

}  // namespace attnlab::plots
