// A thin layer over a cairo context: the font (cairo's toy API with "DejaVu Sans", which covers
// accented Latin such as "été"), text measured with cairo_text_extents and drawn at an anchor,
// optionally rotated. Every drawing unit is a logical pixel; the surface's scale maps it to device
// pixels.
#pragma once

#include <string>

#include <cairo.h>

#include "plots/color.hpp"

namespace attnlab::plots {

struct Rect {
  double x = 0, y = 0, w = 0, h = 0;
  double right() const { return x + w; }
  double bottom() const { return y + h; }
  double cx() const { return x + w / 2; }
  double cy() const { return y + h / 2; }
};

// Font sizes in logical pixels, chosen for slides: at 800x500 logical (1600x1000 PNG at scale 2) a
// 10.5 px tick label reads like 10.5 pt text on a 8x5 in matplotlib figure.
namespace font_size {
inline constexpr double figure_title = 17;
inline constexpr double panel_title = 13.5;
inline constexpr double axis_label = 12;
inline constexpr double tick = 10.5;
inline constexpr double legend = 10.5;
inline constexpr double annotation = 10;
}  // namespace font_size

// What a drawing's text measured: the smallest font size drawn, in logical pixels, and how many
// strings were drawn. How a figure reads on a page follows from it and the size it is shown at.
struct TextLog {
  double smallest = 0;  // 0 until a string is drawn
  int drawn = 0;
  void record(double size);
};

enum class HAlign { left, center, right };
enum class VAlign { top, middle, baseline, bottom };

class Canvas {
 public:
  // With a log, every string drawn records its font size there.
  explicit Canvas(cairo_t* cr, TextLog* log = nullptr) : cr_(cr), log_(log) {}
  cairo_t* cr() const { return cr_; }

  void font(double size, bool bold = false);
  double text_width(const std::string& s) const;  // advance width in the current font
  double line_height() const;                      // ascent + descent of the current font

  // Draws s with its (halign, valign) anchor at (x, y), rotated by angle_deg counter-clockwise
  // around that anchor. Vertical alignment uses the font's ascent and descent, not the ink, so
  // labels of one axis share a baseline whatever their letters.
  void text(const std::string& s, double x, double y, HAlign h, VAlign v, double angle_deg = 0);

  void set_color(const Color& c);
  void fill_rect(const Rect& r, const Color& c);
  void stroke_rect(const Rect& r, const Color& c, double width);
  void line(double x0, double y0, double x1, double y1, const Color& c, double width);

 private:
  cairo_t* cr_;
  TextLog* log_;
};

}  // namespace attnlab::plots
