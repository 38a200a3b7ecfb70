#include "core/runtime/flops.hpp"

#include <array>
#include <atomic>

namespace attnlab {

namespace {

// One counter per cache line; a thread takes the next slot when it first counts. More threads
// than slots share slots, which stays correct (the adds are atomic), only slower.
struct alignas(64) Slot {
  std::atomic<std::uint64_t> flops{0};
};
constexpr std::size_t kSlots = 64;
std::array<Slot, kSlots> g_slots;
std::atomic<std::size_t> g_next_slot{0};

Slot& my_slot() {
  thread_local Slot& slot = g_slots[g_next_slot.fetch_add(1, std::memory_order_relaxed) % kSlots];
  return slot;
}

}  // namespace

void count_product(std::size_t m, std::size_t n, std::size_t k) {
  my_slot().flops.fetch_add(2 * std::uint64_t(m) * n * k, std::memory_order_relaxed);
}

std::uint64_t flops_counted() {
  std::uint64_t sum = 0;
  for (const Slot& s : g_slots) sum += s.flops.load(std::memory_order_relaxed);
  return sum;
}

}  // namespace attnlab
