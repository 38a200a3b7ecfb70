// The replaceable global operator new and delete, counting the bytes every block holds
// (core/runtime/allocator.hpp: live_bytes, peak_bytes). Linked only into the programs that
// measure memory (CMake target attnlab_counting_new), never into the attnlab libraries, so a
// program that uses attnlab keeps its own operator new. The other forms (new[], nothrow, sized
// delete) reach these two through libstdc++; the aligned forms are left alone (nothing in attnlab
// asks for more than the default alignment).
#include <cstddef>
#include <cstdlib>
#include <new>

#include "core/runtime/allocator.hpp"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATTNLAB_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define ATTNLAB_ASAN 1
#endif

#ifndef ATTNLAB_ASAN  // AddressSanitizer replaces operator new itself: leave it its own

namespace {
struct Announce {
  Announce() { attnlab::detail::announce_counting(); }
} announce;
}  // namespace

// Each block carries its requested size in a header of one max_align_t (16 bytes), so that the
// count is exact and the same on every run: malloc_usable_size would add whatever slack the
// block happened to get, which depends on the heap's history.
constexpr std::size_t kHeader = alignof(std::max_align_t);

void* operator new(std::size_t bytes) {
  void* p = std::malloc(bytes + kHeader);
  if (!p) throw std::bad_alloc();
  *static_cast<std::size_t*>(p) = bytes;
  attnlab::detail::count_allocation(bytes);
  return static_cast<char*>(p) + kHeader;
}

void operator delete(void* p) noexcept {
  if (!p) return;
  char* block = static_cast<char*>(p) - kHeader;
  attnlab::detail::count_release(*reinterpret_cast<std::size_t*>(block));
  std::free(block);
}

void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

#endif
