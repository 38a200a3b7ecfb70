// How the course book lays a figure out, as numbers: the book's style sheet (course/html.cpp) is
// written from them, and lesson_check reads every figure's text at the size the book shows it.
//
// The page's root font grows with the window, clamp(16 px, 0.85 rem + 0.45 vw, 24 px); the body is
// at most 66 rem wide with 1.25 rem of padding each side; a figure is shown at its PNG's pixel
// width, or narrower to fit the text column. So the smallest text of a PNG w device pixels wide,
// s of its pixels high, reads at
//
//   shown(s) = s min(1, column / w)   CSS pixels, column = min(66 rem, W) - 2.5 rem
//
// in a window W pixels wide. lesson_check evaluates it in the window of a small laptop, 1280
// pixels wide, and fails a figure whose smallest text would read below 9 CSS px there (the body
// text is about 19 px): a label a student cannot read without zooming is a bug, not a style.
// The height is not capped: a tall figure (panels stacked so each is wide enough to read) scrolls
// like the text around it; shrinking it to fit the window made 10 of the course's 84 figures read
// at 4 to 8 px on a 1280 x 800 screen. The course book's browser test checks this model against
// the widths Chromium lays the figures out at.
#pragma once

#include <string>

namespace attnlab::lessons::book {

inline constexpr double kRootMinPx = 16, kRootMaxPx = 24;    // the root font's clamp
inline constexpr double kRootRem = 0.85, kRootPerVw = 0.45;  // its growth: 0.85 rem + 0.45 vw
inline constexpr double kBodyMaxRem = 66, kBodyPadRem = 1.25;

inline constexpr double kCheckWindowW = 1280;
inline constexpr double kSmallestReadablePx = 9;

// The root font size in a window `window_w` CSS pixels wide.
double root_font_px(double window_w);
// The width of the text column, in CSS pixels.
double column_px(double window_w);
// The factor (at most 1) a PNG width_px device pixels wide is shown at.
double shown_scale(int width_px, double window_w = kCheckWindowW);
// The style rules the numbers above stand for (the root font, the body's width, a figure's width).
std::string root_css();

}  // namespace attnlab::lessons::book
