// RGB colors in [0,1], the qualitative palette for series, and the luminance rule that picks
// black or white text over a colored cell.
#pragma once

#include <cstdint>
#include <string>

namespace attnlab::plots {

struct Color {
  double r = 0, g = 0, b = 0, a = 1;

  static Color hex(const std::string& text);  // "#rrggbb"
  static Color rgb8(int r, int g, int b) { return {r / 255.0, g / 255.0, b / 255.0, 1.0}; }
  std::string to_hex() const;                 // "#rrggbb", alpha dropped
  Color with_alpha(double alpha) const { return {r, g, b, alpha}; }
};

// WCAG relative luminance of an sRGB color: channels linearized, then 0.2126 R + 0.7152 G + 0.0722 B.
double luminance(const Color& c);

// Text color readable over background c: black over light colors, white over dark ones.
// The threshold 0.179 is where black and white text have equal WCAG contrast ratios.
Color text_color_on(const Color& c);

// The i-th color of matplotlib's "tab10" cycle (Tableau 10), wrapping around.
Color series_color(std::size_t i);

// Shades used by every panel.
namespace ink {
inline const Color text{0.10, 0.10, 0.10};
inline const Color axis{0.25, 0.25, 0.25};
inline const Color grid{0.88, 0.88, 0.88};
inline const Color nan_fill{0.83, 0.83, 0.83};
inline const Color nan_hatch{0.60, 0.60, 0.60};
inline const Color white{1, 1, 1};
}  // namespace ink

}  // namespace attnlab::plots
