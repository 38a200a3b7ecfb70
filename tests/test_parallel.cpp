// parallel_for: fixed chunks that cover [0, n) exactly once, inline with one thread or inside a
// chunk, exceptions carried back to the caller, and the thread count shared with OpenBLAS.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "core/ops.hpp"
#include "core/runtime/parallel.hpp"
#include "core/runtime/region_rule.hpp"

using namespace attnlab;

namespace {
// Runs f with n threads, then goes back to one.
template <class F>
void with_threads(int n, F f) {
  set_threads(n);
  try {
    f();
  } catch (...) {
    set_threads(1);
    throw;
  }
  set_threads(1);
}

// Runs f under a region policy, then goes back to the one before.
template <class F>
void with_policy(RegionPolicy p, F f) {
  const RegionPolicy before = region_policy();
  set_region_policy(p);
  try {
    f();
  } catch (...) {
    set_region_policy(before);
    throw;
  }
  set_region_policy(before);
}

const RegionPolicy kPolicies[] = {RegionPolicy::adaptive, RegionPolicy::pool, RegionPolicy::caller};
}  // namespace

TEST_CASE("every index is visited exactly once, in fixed contiguous chunks, whoever runs them") {
  for (RegionPolicy p : kPolicies)
  for (int t : {1, 2, 3}) {
    with_policy(p, [&] { with_threads(t, [&] {
      CHECK(threads() == t);
      for (std::size_t n : {0u, 1u, 5u, 8u, 13u, 100u, 1001u}) {
        std::vector<std::atomic<int>> hits(n);
        std::mutex mu;
        std::set<std::pair<std::size_t, std::size_t>> chunks;
        parallel_for(n, 7, [&](std::size_t b, std::size_t e) {
          CHECK(b < e);
          for (std::size_t i = b; i < e; ++i) ++hits[i];
          std::lock_guard<std::mutex> lock(mu);
          chunks.insert({b, e});
        });
        for (std::size_t i = 0; i < n; ++i) CHECK(hits[i] == 1);
        // At most `t` chunks, each at least the grain (one chunk may be shorter: all of n).
        CHECK(chunks.size() <= static_cast<std::size_t>(t));
        if (n >= 14 && t > 1) CHECK(chunks.size() > 1);
        if (chunks.size() > 1)
          for (const auto& c : chunks) CHECK(c.second - c.first >= 7);
      }
    }); });
  }
}

TEST_CASE("a chunk's exception reaches the caller; the pool keeps working") {
  for (RegionPolicy p : kPolicies)
  with_policy(p, [] { with_threads(2, [] {
    CHECK_THROWS_AS(parallel_for(100, 1,
                                 [](std::size_t b, std::size_t) {
                                   if (b > 0) throw std::runtime_error("second chunk");
                                 }),
                    std::runtime_error);
    std::atomic<int> sum{0};
    parallel_for(100, 1, [&](std::size_t b, std::size_t e) { sum += int(e - b); });
    CHECK(sum == 100);
  }); });
}

TEST_CASE("nested parallel_for runs inline; several chunks really run on several threads") {
  with_policy(RegionPolicy::pool, [] { with_threads(2, [] {
    std::mutex mu;
    std::set<std::thread::id> ids;
    std::atomic<int> inner{0}, started{0};
    parallel_for(2, 1, [&](std::size_t, std::size_t) {
      parallel_for(10, 1, [&](std::size_t b, std::size_t e) { inner += int(e - b); });
      {
        std::lock_guard<std::mutex> lock(mu);
        ids.insert(std::this_thread::get_id());
      }
      // Each chunk waits (up to 10 s) for the other to start: only concurrent chunks get past.
      ++started;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
      while (started < 2 && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    });
    CHECK(started == 2);
    CHECK(inner == 20);
    CHECK(ids.size() == 2);
  }); });
}

TEST_CASE("on the caller, a region runs the same chunks in order, nested calls inline, and is counted") {
  with_policy(RegionPolicy::caller, [] { with_threads(2, [] {
    region_counts(true);
    std::vector<std::pair<std::size_t, std::size_t>> order;
    std::set<std::thread::id> ids;
    int inner_calls = 0;
    parallel_for(30, 10, [&](std::size_t b, std::size_t e) {
      order.push_back({b, e});
      ids.insert(std::this_thread::get_id());
      parallel_for(100, 1, [&](std::size_t, std::size_t) { ++inner_calls; });
    });
    CHECK(order == std::vector<std::pair<std::size_t, std::size_t>>{{0, 15}, {15, 30}});
    CHECK(ids == std::set<std::thread::id>{std::this_thread::get_id()});
    CHECK(inner_calls == 2);  // one whole call per chunk, as on the pool
    const RegionCounts counts = region_counts();
    CHECK(counts.caller == 1);
    CHECK(counts.pool == 0);
  }); });
}

TEST_CASE("the size rule: a new shape tries both ways twice, then runs the faster, rechecking now and then") {
  RegionCost c;
  CHECK(region_to_pool(c));  // the trials: the pool first (a cold start, 200 us) ...
  record_region(c, true, 200.0f);
  CHECK_FALSE(region_to_pool(c));  // ... then the caller (cold caches) ...
  record_region(c, false, 3.0f);
  CHECK(region_to_pool(c));  // ... and each again: the faster of two is the estimate
  record_region(c, true, 8.0f);
  CHECK_FALSE(region_to_pool(c));
  record_region(c, false, 2.0f);
  CHECK(c.pool_us == doctest::Approx(8.0f));
  CHECK(c.caller_us == doctest::Approx(2.0f));
  // The caller is 4x faster: the pool again once every 20 (8 - 2) / 2 = 60 calls, costing 6 us
  // per 60 calls of 2 us: 5 %.
  CHECK(recheck_interval(c) == 60);
  int on_pool = 0;
  for (int i = 0; i < 120; ++i) {
    const bool pool = region_to_pool(c);
    on_pool += pool;
    record_region(c, pool, pool ? 8.0f : 2.0f);
  }
  CHECK(on_pool == 2);
  // The pool becomes the faster way: the next recheck finds it and the rule switches.
  for (int i = 0; i < 61; ++i) {
    const bool pool = region_to_pool(c);
    record_region(c, pool, pool ? 1.0f : 2.0f);
  }
  CHECK(c.pool_us == doctest::Approx(1.0f));
  CHECK(region_to_pool(c));
  // Far apart (a pool that costs 200 us against 0.4 inline): a trial every 4096 calls at most.
  RegionCost tiny{200.0f, 0.4f};
  CHECK(recheck_interval(tiny) == 4096);
  // Close (a large region, 1.9x faster on the pool): a trial on the caller every 32 calls, 3 %.
  RegionCost big{1000.0f, 1900.0f};
  CHECK(recheck_interval(big) == 32);
  // One slow sample moves an estimate 1.75-fold at most.
  RegionCost d;
  record_region(d, false, 10.0f);
  record_region(d, false, 10000.0f);
  CHECK(d.caller_us == doctest::Approx(17.5f));
}

TEST_CASE("the adaptive rule runs a new shape of region on the pool and on the caller in turn") {
  with_policy(RegionPolicy::adaptive, [] { with_threads(2, [] {
    region_counts(true);
    std::atomic<long> sum{0};
    for (int i = 0; i < 4; ++i) parallel_for(64, 1, [&](std::size_t b, std::size_t e) { sum += long(e - b); });
    CHECK(sum == 256);
    const RegionCounts counts = region_counts(true);
    CHECK(counts.pool == 2);    // the trials, two each way
    CHECK(counts.caller == 2);
  }); });
  CHECK(machine_threads() >= 1);
  CHECK(machine_threads() <= 8);
}
TEST_CASE("kernels that run in parallel chunks give the same bits with 1 and 2 threads, either way") {
  using namespace attnlab;
  auto run = [](int t, RegionPolicy p) {
    std::vector<Array<float>> out;
    with_policy(p, [&] { with_threads(t, [&] {
      Generator g(3);
      Tensor<float> x = Tensor<float>::randn({300, 64}, g, 0.0, 1.0, true);
      Tensor<float> gamma = Tensor<float>::randn({64}, g, 1.0, 0.1, true);
      Tensor<float> beta = Tensor<float>::randn({64}, g, 0.0, 0.1, true);
      Tensor<float> y = gelu(layer_norm(x, gamma, beta, 1e-5), GeluForm::Erf);
      y.backward(Tensor<float>::randn({300, 64}, g).value());
      out = {y.value(), x.grad(), gamma.grad(), beta.grad()};
    }); });
    return out;
  };
  const auto one = run(1, RegionPolicy::adaptive);
  for (RegionPolicy p : kPolicies) {
    const auto two = run(2, p);
    for (std::size_t i = 0; i < one.size(); ++i) CHECK(one[i] == two[i]);
  }
}

TEST_CASE("back-to-back calls of different sizes: no chunk lost or run twice") {
  // Workers that wake late for one call must not take chunks of the next (3 threads, so a
  // worker can lag behind the other two).
  with_threads(3, [] {
    for (int round = 0; round < 2000; ++round) {
      const std::size_t n = 1 + static_cast<std::size_t>(round % 7);
      std::vector<std::atomic<int>> hits(n);
      parallel_for(n, 1, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) ++hits[i];
      });
      for (std::size_t i = 0; i < n; ++i) REQUIRE(hits[i] == 1);
    }
  });
}

TEST_CASE("set_threads refuses 0 threads, and calls from inside a chunk") {
  CHECK_THROWS_WITH(set_threads(0), doctest::Contains("set_threads: needs at least 1 thread, got 0"));
  CHECK(threads() == 1);
  with_threads(2, [] {
    CHECK_THROWS_WITH(parallel_for(4, 1, [](std::size_t, std::size_t) { set_threads(1); }),
                      doctest::Contains("set_threads: called from inside a parallel_for chunk"));
  });
}
