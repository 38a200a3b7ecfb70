#include "core/runtime/allocator.hpp"

#include <malloc.h>

#include <atomic>

#include "core/runtime/parallel.hpp"

namespace attnlab {

void keep_freed_blocks_in_heap() {
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
}

namespace {
// Constant-initialized: valid before any constructor runs, so the very first operator new of
// the process may use them.
std::atomic<std::size_t> g_live{0}, g_peak{0};
std::atomic<bool> g_counting{false};
}  // namespace

namespace detail {
void count_allocation(std::size_t bytes) {
  const std::size_t now = g_live.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  std::size_t peak = g_peak.load(std::memory_order_relaxed);
  while (now > peak && !g_peak.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}
void count_release(std::size_t bytes) { g_live.fetch_sub(bytes, std::memory_order_relaxed); }
void announce_counting() { g_counting.store(true); }
}  // namespace detail

bool counting_bytes() { return g_counting.load(); }
std::size_t live_bytes() { return g_live.load(std::memory_order_relaxed); }
std::size_t peak_bytes() { return g_peak.load(std::memory_order_relaxed); }
void reset_peak_bytes() { g_peak.store(g_live.load(std::memory_order_relaxed), std::memory_order_relaxed); }

std::size_t peak_bytes_of(const std::function<void()>& work) {
  reset_peak_bytes();
  const std::size_t before = live_bytes();
  work();
  const std::size_t peak = peak_bytes();
  return counting_bytes() && peak > before ? peak - before : 0;
}

std::size_t peak_bytes_at_one_thread(const std::function<void()>& work) {
  const int was = threads();
  set_threads(1);
  try {
    const std::size_t peak = peak_bytes_of(work);
    set_threads(was);
    return peak;
  } catch (...) {
    set_threads(was);
    throw;
  }
}

}  // namespace attnlab
