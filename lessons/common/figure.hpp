// Saving a lesson's figure: PNG for the report and the terminal, SVG for slides, and the entry
// in report.md and metrics.json. Header-only: lessons/common itself does not link plots.
#pragma once

#include <string>

#include "lessons/common/lesson.hpp"
#include "plots/figure.hpp"

namespace attnlab::lessons {

inline void save_figure(Lesson& L, const plots::Figure& fig, const std::string& stem, const std::string& caption) {
  fig.save(L.path(stem + ".png"));
  fig.save(L.path(stem + ".svg"));
  L.figure(stem, caption);
}

}  // namespace attnlab::lessons
