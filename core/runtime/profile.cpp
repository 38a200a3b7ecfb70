#include "core/runtime/profile.hpp"

#include <algorithm>
#include <atomic>
#include <cstdio>

#include "core/error.hpp"
#include "core/runtime/flops.hpp"

namespace attnlab {

namespace {
// One profiler at a time, process-wide, serving only the thread that made it. (Not a
// thread_local: a profiler destroyed on another thread would leave its own thread's pointer
// dangling.)
std::atomic<OpProfiler*> g_active{nullptr};
}  // namespace

OpProfiler::OpProfiler()
    : last_mark_(Clock::now()), last_flops_(flops_counted()), owner_(std::this_thread::get_id()) {
  OpProfiler* none = nullptr;
  check(g_active.compare_exchange_strong(none, this), "OpProfiler",
        "a profiler is already active");
}

OpProfiler::~OpProfiler() { g_active.store(nullptr); }

OpProfiler* OpProfiler::active() {
  OpProfiler* p = g_active.load(std::memory_order_relaxed);
  return p && p->owner_ == std::this_thread::get_id() ? p : nullptr;
}

OpTime& OpProfiler::entry(const std::string& op) {
  OpTime& t = times_[op];
  t.op = op;
  return t;
}

void OpProfiler::mark(const std::string& section) {
  const Clock::time_point now = Clock::now();
  OpTime& t = entry(section);
  ++t.calls;
  t.forward_ms += std::chrono::duration<double, std::milli>(now - last_mark_).count();
  last_mark_ = now;
  const std::uint64_t flops = flops_counted();
  t.forward_flops += double(flops - last_flops_);
  last_flops_ = flops;
}

void OpProfiler::on_record(const char* op) { mark(op); }

void OpProfiler::on_backward(const char* op, double ms) {
  OpTime& t = entry(op);
  ++t.backward_calls;
  t.backward_ms += ms;
  const std::uint64_t flops = flops_counted();  // the node's products, run since the last event
  t.backward_flops += double(flops - last_flops_);
  last_flops_ = flops;
  // Backward time is not forward time: restart the forward clock after each node.
  last_mark_ = Clock::now();
}

std::vector<OpTime> OpProfiler::times() const {
  std::vector<OpTime> out;
  for (const auto& kv : times_) out.push_back(kv.second);
  std::sort(out.begin(), out.end(),
            [](const OpTime& a, const OpTime& b) { return a.total_ms() > b.total_ms(); });
  return out;
}

double OpProfiler::total_ms() const {
  double s = 0.0;
  for (const auto& kv : times_) s += kv.second.total_ms();
  return s;
}

double OpProfiler::total_flops() const {
  double s = 0.0;
  for (const auto& kv : times_) s += kv.second.total_flops();
  return s;
}

namespace {
// GFLOP/s of `flops` done in `ms`; blank when there was no counted work.
std::string rate(double flops, double ms) {
  if (flops <= 0 || ms <= 0) return "";
  char s[32];
  std::snprintf(s, sizeof s, "%.1f", flops / (ms * 1e6));
  return s;
}
}  // namespace

std::string OpProfiler::table() const {
  const double total = std::max(total_ms(), 1e-12);
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line, "%-30s %8s %11s %8s %11s %7s %9s %8s\n", "op", "calls", "forward ms",
                "bw calls", "backward ms", "share", "GFLOP", "GFLOP/s");
  out += line;
  for (const OpTime& t : times()) {
    std::snprintf(line, sizeof line, "%-30s %8ld %11.2f %8ld %11.2f %6.1f%% %9.3f %8s\n", t.op.c_str(),
                  t.calls, t.forward_ms, t.backward_calls, t.backward_ms,
                  100.0 * t.total_ms() / total, t.total_flops() * 1e-9,
                  rate(t.total_flops(), t.total_ms()).c_str());
    out += line;
  }
  std::snprintf(line, sizeof line, "%-30s %8s %11s %8s %11.2f %7s %9.3f %8s\n", "total", "", "", "", total, "",
                total_flops() * 1e-9, rate(total_flops(), total).c_str());
  out += line;
  return out;
}

}  // namespace attnlab
