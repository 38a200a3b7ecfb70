// Timing pieces of work fairly on a shared machine: each round runs every piece once, in turn, so
// a burst of load from a neighbour hits all of them alike; the medians over the rounds are kept.
// And the cost of an op against its size: time and peak memory of each op at each n, the ops
// interleaved within every round, the memory counted exactly by the allocator.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "nn/module.hpp"

namespace attnlab::lessons {

struct Timing {
  double wall_ms = 0, cpu_ms = 0;  // medians; CPU time counts this process's own work only
};

// One warm-up round (not counted), then `rounds` counted ones, all on one thread (the thread
// count is set back after): these timings compare work, and with a pool the CPU time would also
// count a second thread polling for its next job, up to 200 us a region (core/runtime/parallel.cpp),
// which on a small op can be most of what is measured: on a 2-core CI machine at 2 threads lesson
// 03's additive step measured 1.00 times the dot step's CPU time, its attention alone 94 % of it;
// on one thread here, 1.42 times and 5.4 times for the attention.
std::vector<Timing> interleaved_medians(const std::vector<std::function<void()>>& work, int rounds);
// The same, with before[i] (when set) run ahead of every call of work[i], outside the time
// measured. std::invalid_argument naming interleaved_medians unless there is one `before` a work.
std::vector<Timing> interleaved_medians(const std::vector<std::function<void()>>& work, int rounds,
                                        const std::vector<std::function<void()>>& before);

// One training step of each model, timed by interleaved_medians: zero the gradients, loss(i)
// (model i's loss on the batch it is timed on), backward, a step of an Adam of its own (lr 1e-3,
// on the model's parameters, so the weights move as in training). std::invalid_argument naming
// training_step_medians for no models or rounds below 1.
std::vector<Timing> training_step_medians(const std::vector<nn::Module<float>*>& models,
                                          const std::function<Tensor<float>(std::size_t i)>& loss, int rounds);

// ------------------------------------------------------------------ cost against n

// One op made ready at one size: `reset` runs before every call and is not measured (it drops
// what the last call left, say the inputs' gradients), `run` is the call measured.
struct SizedWork {
  std::function<void()> reset, run;
};

struct CostedOp {
  std::string name;
  std::function<SizedWork(std::size_t n)> at;  // the op and its inputs at size n
};

// What an op cost at each size it ran at.
struct CostCurve {
  std::string name;
  std::vector<double> n;            // the sizes measured, increasing
  std::vector<double> wall_ms, cpu_ms;  // medians over the rounds
  std::vector<double> peak_mib;     // the most bytes held beyond what was held before the call, in MiB
  std::vector<double> page_faults;  // minor page faults (pages mapped in afresh) of the last call

  // The value of `of` (one of the vectors above) at size n; NaN where the op did not run.
  double at(const std::vector<double>& of, double size) const;
  bool ran_at(double size) const;
  // The exponent p of `of` ~ n^p over the last `points` sizes (least squares on log-log axes):
  // how it grows where the sizes are largest. std::invalid_argument when fewer sizes were measured.
  double last_slope(const std::vector<double>& of, std::size_t points = 3) const;
};

struct CostOptions {
  // An op stops after the first size at which its peak, grown like n^2 to the next size, would pass
  // this many bytes: the n^2 op stops at the budget, the linear ones run on.
  double budget_bytes = std::numeric_limits<double>::infinity();
  // Counted rounds at size n (a warm-up round comes first, which also measures the peak).
  std::function<int(std::size_t n)> rounds = [](std::size_t) { return 3; };
};

// Every op at every size, in order of the sizes; at each size the ops that still run are timed
// together by interleaved_medians (each op's reset outside the time). The peak is measured on the warm-up call with attnlab's kernels
// and OpenBLAS on one thread (peak_bytes_at_one_thread: the same number on every run); it is 0
// when the allocator does not count (core/runtime/allocator.hpp). std::invalid_argument naming
// costs_against_n and the culprit for no ops, no sizes, sizes not increasing, or rounds below 1.
std::vector<CostCurve> costs_against_n(const std::vector<CostedOp>& ops, const std::vector<std::size_t>& sizes,
                                       const CostOptions& options = {});

// The curves at size n against curves[reference], as a table: each one's CPU ms and peak MiB at n,
// and the reference's CPU time and memory over its own; when last > n, a column of the peak at
// last ("over budget" where the op stopped before). std::invalid_argument naming cost_table for a
// reference that is not one of the curves.
struct CostTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};
CostTable cost_table(const std::vector<CostCurve>& curves, std::size_t reference, double n, double last);

// ------------------------------------------------------------------ attention against n

using AttentionFn = std::function<Tensor<float>(const Tensor<float>& q, const Tensor<float>& k, const Tensor<float>& v)>;

// Forward and backward of an attention on one sequence of n tokens, one head of width d, in float:
// q, k, v (1, n, d) and the upstream gradient drawn from Generator(1000 + n), so every op sees the
// same inputs at one n; reset drops the inputs' gradients, so the bytes counted are the call's
// own (its output, what it saves, its scratch and the three new gradients). make(n) gives the
// attention at length n (Linformer's projections have n columns).
CostedOp attention_cost(const std::string& name, std::function<AttentionFn(std::size_t n)> make, std::size_t d);
// The same for an attention that does not depend on n.
CostedOp attention_cost(const std::string& name, AttentionFn attend, std::size_t d);

}  // namespace attnlab::lessons
