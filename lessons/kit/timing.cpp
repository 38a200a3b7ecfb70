#include "lessons/kit/timing.hpp"

#include "lessons/story/clock.hpp"
#include "lessons/story/stats.hpp"

namespace attnlab::lessons {

std::vector<Timing> interleaved_medians(const std::vector<std::function<void()>>& work, int rounds) {
  std::vector<std::vector<double>> wall(work.size()), cpu(work.size());
  for (int r = 0; r <= rounds; ++r)
    for (std::size_t i = 0; i < work.size(); ++i) {
      const double w0 = wall_ms(), c0 = cpu_ms();
      work[i]();
      if (r > 0) wall[i].push_back(wall_ms() - w0), cpu[i].push_back(cpu_ms() - c0);
    }
  std::vector<Timing> out;
  for (std::size_t i = 0; i < work.size(); ++i) out.push_back({median(wall[i]), median(cpu[i])});
  return out;
}

}  // namespace attnlab::lessons
