// OpProfiler: where a training step spends its time, op by op. Opt-in: while an OpProfiler
// lives, the tape times every op recorded on the thread that made it, and backward() (on that
// thread) times each node's backward under the op's name. One profiler at a time.
//
// Forward time is measured between marks: each recorded op is charged the time since the previous
// mark, which covers the op's own computation plus any glue code that ran before it (shape
// checks in a module, building a mask). mark(name) charges the time since the previous mark to a
// named section of your own, e.g. the optimizer step, so it is not charged to the next op.
// Backward time is exact per node. Cost when no profiler lives: one atomic load per op.
// Work is charged the same way: the floating-point operations of the products run in between
// (core/runtime/flops.hpp), so the table gives each op's GFLOP/s beside its time.
//
//   OpProfiler prof;
//   for (...) { loss = model(x); prof.mark("forward glue"); loss.backward(); opt.step();
//               prof.mark("optimizer"); }
//   std::cout << prof.table();
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace attnlab {

struct OpTime {
  std::string op;
  long calls = 0;            // forward records (or marks)
  double forward_ms = 0.0;   // time charged at record / mark
  long backward_calls = 0;
  double backward_ms = 0.0;
  double forward_flops = 0.0, backward_flops = 0.0;  // products' operations charged alongside
  double total_ms() const { return forward_ms + backward_ms; }
  double total_flops() const { return forward_flops + backward_flops; }
};

class OpProfiler {
 public:
  OpProfiler();   // starts profiling this thread's ops (one profiler at a time, process-wide)
  ~OpProfiler();
  OpProfiler(const OpProfiler&) = delete;
  OpProfiler& operator=(const OpProfiler&) = delete;

  void mark(const std::string& section);  // charge the time since the last mark to `section`
  std::vector<OpTime> times() const;      // slowest (forward + backward) first
  double total_ms() const;
  double total_flops() const;
  std::string table() const;  // a text table: op, calls, forward, backward, share, GFLOP/s

  // Called by the tape.
  static OpProfiler* active();
  void on_record(const char* op);
  void on_backward(const char* op, double ms);

 private:
  using Clock = std::chrono::steady_clock;
  OpTime& entry(const std::string& op);
  std::map<std::string, OpTime> times_;
  Clock::time_point last_mark_;
  std::uint64_t last_flops_ = 0;  // flops_counted() at the last mark or backward
  std::thread::id owner_;
};

}  // namespace attnlab
