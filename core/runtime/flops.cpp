#include "core/runtime/flops.hpp"

#include <array>
#include <atomic>

namespace attnlab {

namespace {

// One counter per cache line. The first kOwnSlots threads that count own one each: only that
// thread writes it, so a count is a plain load and store (no locked add on the path of every small
// product), and readers see whole values. Later threads share the last slot, with atomic adds.
struct alignas(64) Slot {
  std::atomic<std::uint64_t> flops{0};
};
constexpr std::size_t kOwnSlots = 63;
std::array<Slot, kOwnSlots + 1> g_slots;
std::atomic<std::size_t> g_next_slot{0};

}  // namespace

void count_product(std::size_t m, std::size_t n, std::size_t k) {
  thread_local const std::size_t mine = g_next_slot.fetch_add(1, std::memory_order_relaxed);
  const std::uint64_t ops = 2 * std::uint64_t(m) * n * k;
  if (mine < kOwnSlots) {
    std::atomic<std::uint64_t>& own = g_slots[mine].flops;
    own.store(own.load(std::memory_order_relaxed) + ops, std::memory_order_relaxed);
  } else {
    g_slots[kOwnSlots].flops.fetch_add(ops, std::memory_order_relaxed);
  }
}

std::uint64_t flops_counted() {
  std::uint64_t sum = 0;
  for (const Slot& s : g_slots) sum += s.flops.load(std::memory_order_relaxed);
  return sum;
}

}  // namespace attnlab
