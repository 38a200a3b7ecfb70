// A Figure: a grid of panels (rows x cols) under an optional title, with an optional colorbar
// shared by every panel, drawn by one rendering routine onto a PNG, SVG or PDF surface.
//
// Sizes: a Figure is width_px x height_px device pixels in PNG; it is laid out in logical pixels
// (device pixels / scale), so Figure(1600, 1000) at scale 2 is an 800 x 500 drawing with slide-sized
// text, and SVG/PDF files have the 800 x 500 logical size.
//
//   plots::Figure fig(1600, 1000, 1, 2);
//   fig.title("Attention");
//   plots::heatmap(fig.panel(0, 0).title("Encoder"), weights, opts);
//   fig.save("attention.png");   // or .svg, .pdf
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plots/canvas.hpp"
#include "plots/colormap.hpp"

namespace attnlab::plots {

struct Margins {
  double left = 0, right = 0, top = 0, bottom = 0;
};

// Which tick labels a panel shows: in a grid of heatmaps only the bottom row labels x and only
// the left column labels y.
struct TickLabelsShown {
  bool x = true, y = true;
};

// What a panel draws. Implementations: heatmaps, line plots, bar charts, images.
class Plot {
 public:
  virtual ~Plot() = default;
  // Room needed outside the data rectangle (tick labels, a colorbar, a caption) if the data
  // rectangle were `area`.
  virtual Margins margins(Canvas& c, const Rect& area, const TickLabelsShown& shown) const = 0;
  // The data rectangle used inside `area` (heatmaps and images keep square cells).
  virtual Rect fit(const Rect& area) const { return area; }
  virtual void draw(Canvas& c, const Rect& area, const TickLabelsShown& shown) const = 0;
  // Whether the x (or y) axis is logarithmic: its label then says so (Panel::shown_xlabel).
  virtual bool log_scale(bool y_axis) const {
    (void)y_axis;
    return false;
  }
};

class Panel {
 public:
  Panel& title(std::string t);
  Panel& xlabel(std::string t);
  Panel& ylabel(std::string t);
  Panel& show_tick_labels(bool x, bool y);
  void set_plot(std::shared_ptr<const Plot> plot) { plot_ = std::move(plot); }

  const std::string& title() const { return title_; }
  const std::string& xlabel() const { return xlabel_; }
  const std::string& ylabel() const { return ylabel_; }
  // The labels as drawn: a logarithmic axis whose label does not say "log" gets " (log scale)"
  // (or "log scale" when unlabelled), so no reader takes equal steps for equal differences.
  std::string shown_xlabel() const;
  std::string shown_ylabel() const;
  const TickLabelsShown& shown() const { return shown_; }
  const Plot* plot() const { return plot_.get(); }

 private:
  std::string title_, xlabel_, ylabel_;
  TickLabelsShown shown_;
  std::shared_ptr<const Plot> plot_;
};

struct ColorbarSpec {
  Colormap cmap;
  double vmin, vmax;
  std::string label;
};

class Figure {
 public:
  Figure(int width_px, int height_px, int rows = 1, int cols = 1, double scale = 2.0);

  Figure& title(std::string t);
  Panel& panel(int row, int col);
  const Panel& panel(int row, int col) const;
  Panel& panel(int index);  // row-major

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int width_px() const { return width_px_; }
  int height_px() const { return height_px_; }
  double scale() const { return scale_; }

  // One colorbar at the right of the grid for panels that share a value range.
  void shared_colorbar(ColorbarSpec spec) { colorbar_ = std::move(spec); }

  // Format from the extension: .png, .svg or .pdf. Written to a temporary file in the same folder
  // and renamed into place, so a failed write leaves neither a partial file nor the temporary.
  // With a log, the text drawn is recorded there (its smallest font, in logical pixels: a PNG pixel
  // is 1 / scale of one): how small the labels will read where the figure is shown smaller.
  void save(const std::string& path, TextLog* log = nullptr) const;

  // The data rectangle of panel (row, col) in PNG device pixels, after layout: tests use it to
  // find a heatmap cell in the decoded image.
  Rect plot_rect(int row, int col) const;

  // Draws the whole figure in logical units onto cr (and records its text in log, when given).
  void render(cairo_t* cr, TextLog* log = nullptr) const;

 private:
  struct Layout {
    std::vector<Rect> data;        // per panel, row-major
    std::vector<Margins> margins;  // per panel: its plot's own margins around data
    Rect colorbar;                 // the gradient strip when shared
  };
  Layout layout(Canvas& c) const;
  double width() const { return width_px_ / scale_; }
  double height() const { return height_px_ / scale_; }

  int width_px_, height_px_, rows_, cols_;
  double scale_;
  std::string title_;
  std::vector<Panel> panels_;
  std::optional<ColorbarSpec> colorbar_;
};

}  // namespace attnlab::plots
