#include "lessons/story/book_layout.hpp"

#include <algorithm>

namespace attnlab::lessons::book {

// rem in the clamp's middle term is the browser's default 16 px, not the root font being defined.
double root_font_px(double window_w) {
  return std::clamp(kRootRem * 16 + kRootPerVw * window_w / 100, kRootMinPx, kRootMaxPx);
}

double column_px(double window_w) {
  const double rem = root_font_px(window_w);
  return std::min(kBodyMaxRem * rem, window_w) - 2 * kBodyPadRem * rem;
}

double shown_scale(int width_px, double window_w) { return std::min(1.0, column_px(window_w) / std::max(1, width_px)); }

std::string root_css() {
  auto n = [](double v) {  // 0.85, 66, 1.25: no trailing zeros
    std::string s = std::to_string(v);
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
    return s;
  };
  return "html { font-size: clamp(" + n(kRootMinPx) + "px, " + n(kRootRem) + "rem + " + n(kRootPerVw) + "vw, " +
         n(kRootMaxPx) + "px); }\nbody { max-width: " + n(kBodyMaxRem) + "rem; padding: 1rem " + n(kBodyPadRem) +
         "rem 4rem; }\nfigure img { max-width: 100%; width: auto; height: auto; }\n";
}

}  // namespace attnlab::lessons::book
