// A vertical colorbar: the colormap's gradient over [vmin, vmax], nice ticks on its right side,
// an optional label rotated alongside.
#pragma once

#include "plots/canvas.hpp"
#include "plots/figure.hpp"

namespace attnlab::plots {

inline constexpr double kColorbarStrip = 13;  // gradient width, logical px
inline constexpr double kColorbarGap = 12;    // between the data and the strip

// Width of strip + ticks + labels + label, in logical px.
double colorbar_width(Canvas& c, const ColorbarSpec& spec);
void draw_colorbar(Canvas& c, const Rect& strip, const ColorbarSpec& spec);

}  // namespace attnlab::plots
