// The kit's cost harness (lessons/kit/timing.hpp): the peak memory of each op at each size counted
// exactly, the op that would pass the budget stopped, the others run on, bad input refused.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/ops.hpp"
#include "core/runtime/allocator.hpp"
#include "core/runtime/parallel.hpp"
#include "lessons/kit/timing.hpp"
#include "lessons/story/clock.hpp"
#include "nn/layers.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using doctest::Contains;

namespace {
// An op that holds `bytes(n)` at its peak: one block, touched, then freed.
CostedOp holding(const std::string& name, std::function<std::size_t(std::size_t)> bytes) {
  return {name, [bytes](std::size_t n) {
            return SizedWork{{}, [bytes, n] {
                               std::vector<char> block(bytes(n), 1);
                               volatile char c = block.back();
                               (void)c;
                             }};
          }};
}
}  // namespace

// The peaks are attnlab's byte counts (core/runtime/allocator.hpp), which AddressSanitizer's own
// operator new leaves uncounted: there no op ever reaches the budget, and this is skipped, visibly.
TEST_CASE("costs_against_n: peaks counted exactly; the n^2 op stops at the budget, the linear one runs on" *
          doctest::skip(attnlab::testing::kAddressSanitizer)) {
  const std::vector<CostedOp> ops = {holding("square", [](std::size_t n) { return n * n; }),
                                     holding("line", [](std::size_t n) { return 64 * n; })};
  CostOptions o;
  o.budget_bytes = 300.0 * 300.0;  // square at 128 would next need 256^2 = 65536 bytes: fine; at 256, 512^2: over
  o.rounds = [](std::size_t) { return 1; };
  const std::vector<CostCurve> c = costs_against_n(ops, {64, 128, 256, 512}, o);
  REQUIRE(c.size() == 2);
  CHECK(c[0].name == "square");
  CHECK(c[0].n == std::vector<double>{64, 128, 256});  // stopped after 256: 512^2 bytes would pass the budget
  CHECK(c[1].n == std::vector<double>{64, 128, 256, 512});
  CHECK(c[0].ran_at(256));
  CHECK_FALSE(c[0].ran_at(512));
  CHECK(std::isnan(c[0].at(c[0].cpu_ms, 512)));
  CHECK(c[1].cpu_ms.size() == 4);
  CHECK(c[1].wall_ms.size() == 4);
  CHECK(c[1].page_faults.size() == 4);
  REQUIRE(counting_bytes());
  CHECK(c[0].at(c[0].peak_mib, 256) * 1024 * 1024 == doctest::Approx(256.0 * 256.0));
  CHECK(c[1].at(c[1].peak_mib, 512) * 1024 * 1024 == doctest::Approx(64.0 * 512.0));
  CHECK(c[0].last_slope(c[0].peak_mib) == doctest::Approx(2.0).epsilon(1e-3));  // n^2 bytes
  CHECK(c[1].last_slope(c[1].peak_mib, 4) == doctest::Approx(1.0).epsilon(1e-3));
  CHECK_THROWS_WITH_AS(c[0].last_slope(c[0].cpu_ms, 4), Contains("'square' has 3 sizes and 3 values"),
                       std::invalid_argument);
}

TEST_CASE("costs_against_n: reset runs before every call, outside what is measured") {
  int resets = 0, runs = 0;
  const CostedOp op{"counted", [&](std::size_t) { return SizedWork{[&] { ++resets; }, [&] { ++runs; }}; }};
  CostOptions o;
  o.rounds = [](std::size_t n) { return n == 1 ? 2 : 3; };
  costs_against_n({op}, {1, 2}, o);
  CHECK(runs == (1 + 2) + (1 + 3));  // a warm-up call, then the counted rounds, at each size
  CHECK(resets == runs);
}

TEST_CASE("interleaved_medians: what runs before a piece of work is outside its time") {
  // 20 ms of waiting before, nothing measured: the median stays far below it.
  const auto wait = [] {
    const double until = wall_ms() + 20;
    while (wall_ms() < until) {
    }
  };
  int before = 0, work = 0;
  const std::vector<Timing> t = interleaved_medians({[&] { ++work; }}, 2, {[&] { ++before, wait(); }});
  CHECK(before == 3);  // the warm-up round and two counted ones
  CHECK(work == 3);
  CHECK(t[0].wall_ms < 10.0);  // half the wait: a call that included it would take 20
  CHECK(t[0].cpu_ms < 10.0);
  CHECK_THROWS_WITH_AS(interleaved_medians({[] {}}, 1, {}), Contains("interleaved_medians: 0 pieces to run before 1"),
                       std::invalid_argument);
}

TEST_CASE("costs_against_n: bad input named") {
  const CostedOp op{"op", [](std::size_t) { return SizedWork{{}, [] {}}; }};
  CHECK_THROWS_WITH_AS(costs_against_n({}, {1}), Contains("costs_against_n: no ops"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(costs_against_n({op}, {}), Contains("costs_against_n: no sizes"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(costs_against_n({op}, {4, 4}), Contains("sizes must be positive and increasing, got 4 at position 1"),
                       std::invalid_argument);
  CostOptions none;
  none.rounds = [](std::size_t) { return 0; };
  CHECK_THROWS_WITH_AS(costs_against_n({op}, {8}, none), Contains("rounds must be at least 1, got 0 at n = 8"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(costs_against_n({CostedOp{"empty", {}}}, {8}), Contains("op 'empty' has no work"),
                       std::invalid_argument);
}

namespace {
// The fused and the tiled op, forward and backward, at n = 64 and 256, one counted round each.
std::vector<CostCurve> fused_and_tiled_costs() {
  const std::vector<CostedOp> ops = {
      attention_cost("fused", [](auto& q, auto& k, auto& v) { return scaled_dot_product_attention(q, k, v).output; }, 8),
      attention_cost("tiled", [](auto& q, auto& k, auto& v) { return tiled_attention(q, k, v); }, 8)};
  CostOptions o;
  o.rounds = [](std::size_t) { return 1; };
  return costs_against_n(ops, {64, 256}, o);
}
}  // namespace

TEST_CASE("attention_cost: forward and backward at each n, the fused op holding more than the tiled one") {
  const std::vector<CostCurve> c = fused_and_tiled_costs();
  REQUIRE(c.size() == 2);
  CHECK(c[0].n == std::vector<double>{64, 256});
  CHECK(c[1].cpu_ms.size() == 2);
  CHECK_THROWS_WITH_AS(attention_cost("none", AttentionFn{}, 8), Contains("attention_cost: 'none' needs an attention"),
                       std::invalid_argument);
}

TEST_CASE("attention_cost: the fused op holds the n x n weights, the tiled one a fraction" *
          doctest::skip(attnlab::testing::kAddressSanitizer)) {  // byte counts: see above
  const std::vector<CostCurve> c = fused_and_tiled_costs();
  REQUIRE(counting_bytes());
  // At n = 256 the fused op keeps P, 256 x 256 floats (256 KiB), and makes dS beside it.
  CHECK(c[0].at(c[0].peak_mib, 256) * 1024 > 2 * 256);
  CHECK(c[1].at(c[1].peak_mib, 256) < c[0].at(c[0].peak_mib, 256) / 4);
}

TEST_CASE("cost_table: each curve at n against the reference, and the peak at the last size or over budget") {
  const CostCurve fused{"fused (lesson 06)", {1024, 2048}, {4, 16}, {4, 16}, {8, 32}, {0, 0}};
  const CostCurve tiled{"tiled", {1024, 2048, 4096}, {2, 8, 32}, {2, 8, 32}, {1, 2, 4}, {0, 0, 0}};
  const CostTable t = cost_table({fused, tiled}, 0, 2048, 4096);
  CHECK(t.header == std::vector<std::string>{"attention", "CPU ms at $n = 2048$", "peak MiB at 2048",
                                             "CPU time: fused / op", "memory: fused / op", "peak MiB at 4096"});
  REQUIRE(t.rows.size() == 2);
  CHECK(t.rows[0] == std::vector<std::string>{"fused (lesson 06)", "16.00", "32.00", "1.0", "1.0", "over budget"});
  CHECK(t.rows[1] == std::vector<std::string>{"tiled", "8.00", "2.00", "2.0", "16.0", "4.0"});
  CHECK(cost_table({fused, tiled}, 1, 1024, 1024).header.size() == 5);  // no column beyond n
  CHECK_THROWS_WITH_AS(cost_table({fused}, 1, 1024, 1024), doctest::Contains("cost_table: reference 1 is not one of"),
                       std::invalid_argument);
}

TEST_CASE("training_step_medians: one step of each model per round, its weights moved by its own Adam") {
  Generator gen(3);
  nn::Linear<float> a(4, 2, gen), b(4, 2, gen);
  const Tensor<float> x = Tensor<float>::randn({8, 4}, gen);
  const Array<float> a_before = a.weight.value(), b_before = b.weight.value();
  std::vector<int> calls(2, 0);
  const std::vector<nn::Linear<float>*> layers{&a, &b};
  const std::vector<Timing> t = training_step_medians({&a, &b}, [&](std::size_t i) {
    ++calls[i];
    const Tensor<float> y = layers[i]->forward(x);
    return sum(mul(y, y));
  }, 3);
  REQUIRE(t.size() == 2);
  CHECK(calls == std::vector<int>{4, 4});  // a warm-up round and three counted ones
  for (const Timing& one : t) CHECK((one.wall_ms >= 0 && one.cpu_ms >= 0));
  CHECK(xt::amax(xt::abs(a.weight.value() - a_before))() > 0);  // trained: the steps moved both models' weights
  CHECK(xt::amax(xt::abs(b.weight.value() - b_before))() > 0);
  CHECK_THROWS_WITH_AS(training_step_medians({}, [&](std::size_t) { return sum(x); }, 3),
                       Contains("training_step_medians"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(training_step_medians({&a}, [&](std::size_t) { return sum(x); }, 0), Contains("rounds"),
                       std::invalid_argument);
}

TEST_CASE("interleaved_medians: the work runs on one thread, the thread count set back after, also on a throw") {
  set_threads(2);
  int seen = 0;
  interleaved_medians({[&] { seen = threads(); }}, 2);
  CHECK(seen == 1);
  CHECK(threads() == 2);
  CHECK_THROWS_AS(interleaved_medians({[] { throw std::runtime_error("work failed"); }}, 1), std::runtime_error);
  CHECK(threads() == 2);
  set_threads(1);
}
