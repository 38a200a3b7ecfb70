// The replaceable global operator new and delete, counting the bytes every block holds
// (core/runtime/allocator.hpp: live_bytes, peak_bytes). Linked only into the programs that
// measure memory (CMake target attnlab_counting_new), never into the attnlab libraries, so a
// program that uses attnlab keeps its own operator new. The other forms (new[], nothrow, sized
// delete) reach these two through libstdc++; the aligned forms are left alone (nothing in attnlab
// asks for more than the default alignment).
#include <malloc.h>

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

void* operator new(std::size_t bytes) {
  void* p = std::malloc(bytes ? bytes : 1);
  if (!p) throw std::bad_alloc();
  attnlab::detail::count_allocation(malloc_usable_size(p));
  return p;
}

void operator delete(void* p) noexcept {
  if (!p) return;
  attnlab::detail::count_release(malloc_usable_size(p));
  std::free(p);
}

void operator delete(void* p, std::size_t) noexcept { operator delete(p); }

#endif
