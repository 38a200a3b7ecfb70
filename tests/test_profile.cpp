// OpProfiler charges forward time to each recorded op and backward time to each node's backward,
// by op name; it is per thread, one at a time, and costs nothing when absent.
#include <doctest/doctest.h>

#include <thread>

#include <xtensor/xbuilder.hpp>

#include "core/ops.hpp"
#include "core/runtime/profile.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;

namespace {
const OpTime* find(const std::vector<OpTime>& times, const std::string& op) {
  for (const auto& t : times)
    if (t.op == op) return &t;
  return nullptr;
}
}  // namespace

TEST_CASE("OpProfiler counts forward records and backward calls per op") {
  Tensor<double> x(rand_array({4, 3}, 1), true), w(rand_array({2, 3}, 2), true);
  OpProfiler prof;
  for (int step = 0; step < 3; ++step) {
    Tensor<double> y = relu(linear(x, w, Tensor<double>()));
    Tensor<double> loss = sum(mul(y, y));
    prof.mark("glue");
    loss.backward();
  }
  const auto times = prof.times();
  for (const char* op : {"linear", "relu", "mul", "sum"}) {
    const OpTime* t = find(times, op);
    REQUIRE_MESSAGE(t != nullptr, op);
    CHECK(t->calls == 3);
    CHECK(t->backward_calls == 3);
    CHECK(t->forward_ms >= 0.0);
    CHECK(t->backward_ms >= 0.0);
  }
  REQUIRE(find(times, "glue") != nullptr);
  CHECK(find(times, "glue")->calls == 3);
  CHECK(find(times, "glue")->backward_calls == 0);
  // Sorted slowest first, and the table names every op and the total.
  for (std::size_t i = 1; i < times.size(); ++i)
    CHECK(times[i - 1].total_ms() >= times[i].total_ms());
  const std::string table = prof.table();
  CHECK(contains(table, "linear"));
  CHECK(contains(table, "total"));
  double sum_ms = 0.0;
  for (const auto& t : times) sum_ms += t.total_ms();
  CHECK(prof.total_ms() == doctest::Approx(sum_ms));
}

TEST_CASE("OpProfiler: one at a time, its own thread only, nothing recorded without one") {
  {
    OpProfiler prof;
    CHECK(OpProfiler::active() == &prof);
    CHECK_THROWS_WITH_AS(OpProfiler(), doctest::Contains("OpProfiler: a profiler is already active"),
                         ShapeError);
    // Another thread's ops are not charged to this profiler.
    OpProfiler* seen = &prof;
    std::thread([&] { seen = OpProfiler::active(); }).join();
    CHECK(seen == nullptr);
  }
  CHECK(OpProfiler::active() == nullptr);
  Tensor<double> x(rand_array({2}, 3), true);
  sum(mul(x, x)).backward();  // no profiler: must simply work
  OpProfiler later;
  CHECK(later.times().empty());
}

TEST_CASE("OpProfiler charges each op the products it ran, forward and backward") {
  // linear: Y (4 x 2) = X (4 x 3) W^T; backward dX = dY W and dW = dY^T X, the same size each.
  Tensor<double> x(rand_array({4, 3}, 1), true), w(rand_array({2, 3}, 2), true);
  OpProfiler prof;
  for (int step = 0; step < 3; ++step) {
    Tensor<double> loss = sum(relu(linear(x, w, Tensor<double>())));
    loss.backward();
  }
  const double one = 2.0 * 4 * 2 * 3;
  const auto times = prof.times();
  REQUIRE(find(times, "linear") != nullptr);
  CHECK(find(times, "linear")->forward_flops == 3 * one);
  CHECK(find(times, "linear")->backward_flops == 3 * 2 * one);
  CHECK(find(times, "relu")->total_flops() == 0);
  CHECK(prof.total_flops() == 3 * 3 * one);
  CHECK(contains(prof.table(), "GFLOP/s"));
}
