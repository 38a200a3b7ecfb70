#include "lessons/kit/late_change.hpp"

#include <stdexcept>

#include "lessons/story/text.hpp"

namespace attnlab::lessons {

double late_change(const std::vector<double>& series, double end) {
  if (series.empty() || end == 0.0)
    throw std::invalid_argument(text("late_change: a series of ", series.size(), " values ending at ", end,
                                     " (needs values and a nonzero end)"));
  return (series[series.size() * 9 / 10] - end) / end;
}

std::string small_percent(double share) { return share < 1e-5 ? std::string("less than 0.001%") : percent(share, 3); }

}  // namespace attnlab::lessons
