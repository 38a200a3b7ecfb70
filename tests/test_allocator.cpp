// peak_bytes_of (core/runtime/allocator.hpp): the most bytes a piece of work holds at once,
// counted by the operator new of attnlab_counting_new, which every test program links.
#include <doctest/doctest.h>

#include <memory>
#include <vector>

#include "core/runtime/allocator.hpp"
#include "core/runtime/parallel.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using attnlab::testing::kAddressSanitizer;

// Skipped under AddressSanitizer, which owns operator new; anywhere else the counting must be on.
TEST_CASE("peak_bytes_of: the most held at once, not the total allocated; freed blocks leave live_bytes" *
          doctest::skip(kAddressSanitizer)) {
  REQUIRE(counting_bytes());
  const std::size_t before = live_bytes();
  const std::size_t one = std::size_t(1) << 20;
  const std::size_t peak = peak_bytes_of([&] {
    for (int i = 0; i < 5; ++i) std::vector<char> block(one);  // 5 MiB allocated, 1 MiB at a time
    std::vector<char> a(one), b(2 * one);                      // 3 MiB at once
  });
  CHECK(peak >= 3 * one);
  CHECK(peak < 3 * one + 64 * 1024);
  CHECK(live_bytes() == before);
  auto held = std::make_unique<std::vector<char>>(one);
  CHECK(live_bytes() >= before + one);
  held.reset();
  CHECK(live_bytes() == before);
  CHECK(peak_bytes_of([] {}) == 0);
}

TEST_CASE("peak_bytes_at_one_thread: one thread while the work runs, the thread count restored" *
          doctest::skip(kAddressSanitizer)) {
  REQUIRE(counting_bytes());
  set_threads(2);
  int seen = 0;
  const std::size_t peak = peak_bytes_at_one_thread([&] {
    seen = threads();
    std::vector<char> block(std::size_t(1) << 20);
  });
  CHECK(seen == 1);
  CHECK(threads() == 2);
  CHECK(peak >= (std::size_t(1) << 20));
  set_threads(1);
}
