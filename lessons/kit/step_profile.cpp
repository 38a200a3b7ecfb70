#include "lessons/kit/step_profile.hpp"

#include <algorithm>

#include "lessons/story/text.hpp"

namespace attnlab::lessons {

std::string StepProfile::largest(std::size_t k) const {
  const std::size_t n = std::min(k, times.size());
  std::string out;
  for (std::size_t i = 0; i < n; ++i)
    out += text(i == 0 ? "" : i + 1 == n ? " and " : ", ", "'", times[i].op, "' ", percent(times[i].total_ms() / total_ms, 0));
  return out;
}

}  // namespace attnlab::lessons
