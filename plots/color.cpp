#include "plots/color.hpp"

#include <cmath>
#include <cstdio>

#include "plots/error.hpp"

namespace attnlab::plots {

Color Color::hex(const std::string& text) {
  unsigned r = 0, g = 0, b = 0;
  int n = 0;
  if (text.size() != 7 || text[0] != '#' || std::sscanf(text.c_str() + 1, "%2x%2x%2x%n", &r, &g, &b, &n) != 3 ||
      n != 6)
    fail("Color::hex", "expected \"#rrggbb\", got \"", text, "\"");
  return rgb8(int(r), int(g), int(b));
}

static int to_byte(double v) {
  long b = std::lround(v * 255.0);
  return int(b < 0 ? 0 : b > 255 ? 255 : b);
}

std::string Color::to_hex() const {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", to_byte(r), to_byte(g), to_byte(b));
  return buf;
}

// sRGB transfer function inverted (IEC 61966-2-1).
static double linearize(double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); }

double luminance(const Color& c) {
  return 0.2126 * linearize(c.r) + 0.7152 * linearize(c.g) + 0.0722 * linearize(c.b);
}

// Contrast with white is 1.05 / (L + 0.05), with black (L + 0.05) / 0.05: equal at L = 0.179.
Color text_color_on(const Color& c) { return luminance(c) > 0.179 ? Color{0, 0, 0} : Color{1, 1, 1}; }

Color series_color(std::size_t i) {
  static const char* tab10[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return Color::hex(tab10[i % 10]);
}

}  // namespace attnlab::plots
