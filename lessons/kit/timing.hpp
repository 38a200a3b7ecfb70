// Timing pieces of work fairly on a shared machine: each round runs every piece once, in turn, so
// a burst of load from a neighbour hits all of them alike; the medians over the rounds are kept.
#pragma once

#include <functional>
#include <vector>

namespace attnlab::lessons {

struct Timing {
  double wall_ms = 0, cpu_ms = 0;  // medians; CPU time counts this process's own work only
};

// One warm-up round (not counted), then `rounds` counted ones.
std::vector<Timing> interleaved_medians(const std::vector<std::function<void()>>& work, int rounds);

}  // namespace attnlab::lessons
