// The size rule of the thread pool, measured instead of guessed: whether a region of parallel
// work goes to the pool or runs on the caller (core/runtime/parallel.cpp applies it).
//
// A hand-off to the pool costs about 3 us when the pool's threads are polling and 10 us to
// 200 us when they sleep, and a worker descheduled in the middle of its chunk (a busy shared
// machine) keeps the caller waiting for milliseconds (bench_core, section f). A region much
// shorter than the hand-off loses by splitting, one much longer wins whenever a second core is
// free, and where the break-even falls depends on the machine and on the moment. So each shape
// of region (its call site, n, grain and work: the same op at the same size, called every
// training step) is timed both ways and runs the faster one. Both ways compute the same chunks,
// so the bits never depend on the choice, only the time.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace attnlab {

// What one shape of region has cost, in microseconds, on the pool and on the caller.
struct RegionCost {
  float pool_us = -1, caller_us = -1;  // running estimates, -1 until measured
  std::uint32_t calls = 0;             // calls so far, up to the end of the trials
  std::uint32_t since_check = 0;       // calls since the slower way last ran
};

// The first calls of a new shape alternate, pool and caller, this many each: the first call on
// the pool often wakes a sleeping thread (200 us here) and the first on the caller meets cold
// caches, and an estimate that starts from one such time would steer the rule wrongly until its
// first recheck, possibly hundreds of calls later. A faster time replaces an estimate at once
// (record_region), so two trials each give the faster of two.
inline constexpr std::uint32_t kTrialsEach = 2;

// How often the slower way runs again, to see whether it still is (on a shared virtual machine
// the second core comes and goes): often enough to notice within a fraction of a second, and
// rarely enough that the trials cost at most 5 % of the time the faster way takes. A trial costs
// (slower - faster); one every 20 (slower - faster) / faster calls keeps it within the 5 %.
inline std::uint32_t recheck_interval(const RegionCost& c) {
  const float fast = std::max(std::min(c.pool_us, c.caller_us), 0.01f), slow = std::max(c.pool_us, c.caller_us);
  return static_cast<std::uint32_t>(std::clamp(std::ceil(20 * (slow - fast) / fast), 32.0f, 4096.0f));
}

// Says where the next call runs: a new shape alternates, pool first, for its trials; then the
// faster of the two, and the slower one again every recheck_interval calls.
inline bool region_to_pool(RegionCost& c) {
  if (c.calls < 2 * kTrialsEach) return c.calls++ % 2 == 0;
  const bool pool_faster = c.pool_us <= c.caller_us;
  if (++c.since_check < recheck_interval(c)) return pool_faster;
  c.since_check = 0;
  return !pool_faster;
}

// Adds a measured time to the estimate of the way the call ran: a faster time replaces it at
// once (one recheck that finds the other way faster switches to it), a slower one moves it a
// quarter of the way, and at most 1.75-fold (the process descheduled for a while is not the
// region's cost).
inline void record_region(RegionCost& c, bool pool, float us) {
  float& estimate = pool ? c.pool_us : c.caller_us;
  estimate = estimate < 0 || us < estimate ? us : 0.75f * estimate + 0.25f * std::min(us, 4 * estimate);
}

}  // namespace attnlab
