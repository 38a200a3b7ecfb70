#include "plots/figure.hpp"

#include <algorithm>
#include <cctype>

#include "plots/cairo_handles.hpp"
#include "plots/colorbar.hpp"
#include "plots/error.hpp"

namespace attnlab::plots {

namespace {
constexpr double kOuterPad = 12;   // figure edge to content
constexpr double kTitleGap = 10;   // figure title to grid
constexpr double kColGap = 18;     // between grid cells
constexpr double kRowGap = 12;
constexpr double kPanelTitleGap = 7;
constexpr double kLabelGap = 5;    // tick labels to axis label
}  // namespace

Panel& Panel::title(std::string t) {
  title_ = std::move(t);
  return *this;
}
namespace {
std::string marked_if_log(const std::string& label, bool log) {
  if (!log) return label;
  std::string lower = label;
  for (char& ch : lower) ch = char(std::tolower(static_cast<unsigned char>(ch)));
  if (lower.find("log") != std::string::npos) return label;
  return label.empty() ? "log scale" : label + " (log scale)";
}
}  // namespace

std::string Panel::shown_xlabel() const { return marked_if_log(xlabel_, plot_ && plot_->log_scale(false)); }
std::string Panel::shown_ylabel() const { return marked_if_log(ylabel_, plot_ && plot_->log_scale(true)); }

Panel& Panel::xlabel(std::string t) {
  xlabel_ = std::move(t);
  return *this;
}
Panel& Panel::ylabel(std::string t) {
  ylabel_ = std::move(t);
  return *this;
}
Panel& Panel::show_tick_labels(bool x, bool y) {
  shown_ = {x, y};
  return *this;
}

Figure::Figure(int width_px, int height_px, int rows, int cols, double scale)
    : width_px_(width_px), height_px_(height_px), rows_(rows), cols_(cols), scale_(scale) {
  require(width_px > 0 && height_px > 0, "Figure", "width and height must be positive, got ", width_px, " x ",
          height_px, " px");
  require(rows > 0 && cols > 0, "Figure", "the panel grid needs at least 1 row and 1 column, got ", rows, " x ",
          cols);
  require(scale > 0, "Figure", "scale must be positive, got ", scale);
  require(width_px / scale >= 100 && height_px / scale >= 80, "Figure", "a ", width_px, " x ", height_px,
          " px figure at scale ", scale, " leaves ", width_px / scale, " x ", height_px / scale,
          " logical px; at least 100 x 80 are needed for text");
  panels_.resize(std::size_t(rows) * std::size_t(cols));
}

Figure& Figure::title(std::string t) {
  title_ = std::move(t);
  return *this;
}

Panel& Figure::panel(int row, int col) {
  return const_cast<Panel&>(static_cast<const Figure&>(*this).panel(row, col));
}

const Panel& Figure::panel(int row, int col) const {
  require(row >= 0 && row < rows_ && col >= 0 && col < cols_, "Figure::panel", "panel (", row, ",", col,
          ") outside a ", rows_, " x ", cols_, " grid");
  return panels_[std::size_t(row) * std::size_t(cols_) + std::size_t(col)];
}

Panel& Figure::panel(int index) {
  require(index >= 0 && index < rows_ * cols_, "Figure::panel", "index ", index, " outside a ", rows_, " x ",
          cols_, " grid");
  return panels_[std::size_t(index)];
}

// Layout: the grid area is split into equal cells; in each cell a panel's data rectangle is what
// remains after its decorations (title, axis labels) and its plot's margins (tick labels, its own
// colorbar). Margins are aligned across the grid (max per column for left/right, per row for
// top/bottom) so that axes line up, and the space left is shared equally so that every data
// rectangle has the same size. Plots' margins depend on the rectangle they get (rotated tick
// labels when columns are narrow), hence two passes.
Figure::Layout Figure::layout(Canvas& c) const {
  double top = kOuterPad;
  if (!title_.empty()) {
    c.font(font_size::figure_title, true);
    top += c.line_height() + kTitleGap;
  }
  double right_reserved = 0;
  if (colorbar_) right_reserved = kColorbarGap + colorbar_width(c, *colorbar_);
  const Rect grid{kOuterPad, top, width() - 2 * kOuterPad - right_reserved, height() - top - kOuterPad};
  const double cell_w = (grid.w - (cols_ - 1) * kColGap) / cols_;
  const double cell_h = (grid.h - (rows_ - 1) * kRowGap) / rows_;

  const std::size_t n = panels_.size();
  std::vector<Margins> deco(n), own(n);
  for (std::size_t i = 0; i < n; ++i) {
    const Panel& p = panels_[i];
    if (!p.title().empty()) {
      c.font(font_size::panel_title, true);
      deco[i].top = c.line_height() + kPanelTitleGap;
    }
    c.font(font_size::axis_label);
    if (!p.shown_xlabel().empty()) deco[i].bottom = c.line_height() + kLabelGap;
    if (!p.shown_ylabel().empty()) deco[i].left = c.line_height() + kLabelGap;
  }

  Layout out;
  out.data.assign(n, Rect{});
  out.margins.assign(n, Margins{});
  std::vector<Rect> area(n);
  for (std::size_t i = 0; i < n; ++i) {  // first guess: 60 px of tick labels on the left and bottom
    const std::size_t r = i / std::size_t(cols_), col = i % std::size_t(cols_);
    const Rect cell{grid.x + col * (cell_w + kColGap), grid.y + r * (cell_h + kRowGap), cell_w, cell_h};
    area[i] = {cell.x + deco[i].left + 60, cell.y + deco[i].top, cell.w - deco[i].left - 60,
               cell.h - deco[i].top - deco[i].bottom - 60};
  }
  for (int pass = 0; pass < 2; ++pass) {
    std::vector<Margins> total(n);
    for (std::size_t i = 0; i < n; ++i) {
      const Plot* plot = panels_[i].plot();
      own[i] = plot ? plot->margins(c, area[i], panels_[i].shown()) : Margins{};
      total[i] = {deco[i].left + own[i].left, deco[i].right + own[i].right, deco[i].top + own[i].top,
                  deco[i].bottom + own[i].bottom};
    }
    std::vector<double> L(cols_, 0), R(cols_, 0), T(rows_, 0), B(rows_, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t r = i / std::size_t(cols_), col = i % std::size_t(cols_);
      L[col] = std::max(L[col], total[i].left);
      R[col] = std::max(R[col], total[i].right);
      T[r] = std::max(T[r], total[i].top);
      B[r] = std::max(B[r], total[i].bottom);
    }
    // Every data rectangle gets the same size: what the margins leave, shared equally.
    double sum_w = 0, sum_h = 0;
    for (int col = 0; col < cols_; ++col) sum_w += L[col] + R[col];
    for (int r = 0; r < rows_; ++r) sum_h += T[r] + B[r];
    const double dw = std::max(10.0, (grid.w - (cols_ - 1) * kColGap - sum_w) / cols_);
    const double dh = std::max(10.0, (grid.h - (rows_ - 1) * kRowGap - sum_h) / rows_);
    std::vector<double> xs(cols_), ys(rows_);
    double x = grid.x;
    for (int col = 0; col < cols_; ++col) {
      xs[col] = x + L[col];
      x = xs[col] + dw + R[col] + kColGap;
    }
    double y = grid.y;
    for (int r = 0; r < rows_; ++r) {
      ys[r] = y + T[r];
      y = ys[r] + dh + B[r] + kRowGap;
    }
    for (std::size_t i = 0; i < n; ++i) area[i] = {xs[i % std::size_t(cols_)], ys[i / std::size_t(cols_)], dw, dh};
  }
  for (std::size_t i = 0; i < n; ++i) {
    const Plot* plot = panels_[i].plot();
    out.data[i] = plot ? plot->fit(area[i]) : area[i];
    out.margins[i] = own[i];
  }
  if (colorbar_) {
    double x = 0, y0 = height(), y1 = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (!panels_[i].plot()) continue;
      x = std::max(x, out.data[i].right() + own[i].right);
      y0 = std::min(y0, out.data[i].y);
      y1 = std::max(y1, out.data[i].bottom());
    }
    if (y1 <= y0) y0 = grid.y, y1 = grid.bottom();
    out.colorbar = {x + kColorbarGap, y0, kColorbarStrip, y1 - y0};
  }
  return out;
}

void Figure::render(cairo_t* cr, TextLog* log) const {
  Canvas c(cr, log);
  c.fill_rect({0, 0, width(), height()}, ink::white);
  const Layout lay = layout(c);
  if (!title_.empty()) {
    c.font(font_size::figure_title, true);
    c.set_color(ink::text);
    c.text(title_, width() / 2, kOuterPad, HAlign::center, VAlign::top);
  }
  for (std::size_t i = 0; i < panels_.size(); ++i) {
    const Panel& p = panels_[i];
    const Rect& d = lay.data[i];
    const Margins& m = lay.margins[i];
    if (p.plot()) p.plot()->draw(c, d, p.shown());
    c.set_color(ink::text);
    if (!p.title().empty()) {
      c.font(font_size::panel_title, true);
      c.text(p.title(), d.cx(), d.y - m.top - kPanelTitleGap, HAlign::center, VAlign::bottom);
    }
    c.font(font_size::axis_label);
    if (const std::string x = p.shown_xlabel(); !x.empty())
      c.text(x, d.cx(), d.bottom() + m.bottom + kLabelGap, HAlign::center, VAlign::top);
    if (const std::string y = p.shown_ylabel(); !y.empty())
      c.text(y, d.x - m.left - kLabelGap, d.cy(), HAlign::center, VAlign::bottom, 90);
  }
  if (colorbar_) draw_colorbar(c, lay.colorbar, *colorbar_);
}

Rect Figure::plot_rect(int row, int col) const {
  panel(row, col);  // range check
  const Surface s(cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1));
  const Context cr = context_on(s);
  Canvas c(cr.get());
  const Layout lay = layout(c);
  const Rect d = lay.data[std::size_t(row) * std::size_t(cols_) + std::size_t(col)];
  return {d.x * scale_, d.y * scale_, d.w * scale_, d.h * scale_};
}

}  // namespace attnlab::plots
