// The thread count a training loop steps at: the faster of one thread and all it was given,
// measured on the run itself, step by step.
//
// Why: whether a second thread pays depends on the model and on the machine. On a two-CPU Zen 3
// (docs/speed.md, ninth session) the quick runs of lessons 02, 10 and 17 at seed 7 were slower on
// two threads than on one in two rounds of two (0.86x to 0.98x the speed), while lesson 16's ViT
// ran 1.4x to 1.8x faster; and on a two-CPU Zen 5 the Bahdanau model's two-thread step was slower
// than one thread's in some minutes and faster in others. A size rule per parallel region was
// tried (core/runtime/region_rule.hpp) and cost 3 to 7 % where the pool pays. This chooses per
// loop instead, from whole steps: cheap to measure, and the thing a learner waits for.
//
// How: the first two steps run at `most` threads and are not timed (they allocate what later
// steps reuse). Then steps alternate one thread and `most` until each count has kTrialSteps timed
// steps, and the loop keeps the count with the lower median. After kRecheckEvery steps the other
// count runs kRecheckSteps steps, and the loop moves to it if their median beats the median of the
// kept count's last kRecheckEvery steps by kSwitchMargin (a machine's second core can slow down or
// come free in the middle of a run). Each recheck that keeps the count doubles the wait for the
// next (up to kRecheckMost steps), and a move starts it again from kRecheckEvery: the steps spent
// at the slower count stay few. The GPT of lesson 11, where two threads win, spent 20 of its quick
// run's 600 steps at one thread with a fixed wait of 64 and ran 2 to 3 % slower than without the
// choice; with the doubling, 10.
//
// The bits do not depend on it: every op gives the same bits at any thread count (products are
// cut into the same parts whatever the count; tests/test_matmul.cpp, tests/test_gemm_plan.cpp),
// so only the time changes. Its destructor sets the thread count back to `most`.
#pragma once

#include <cstddef>
#include <vector>

namespace attnlab {

class ThreadChoice {
 public:
  static constexpr std::size_t kUntimedSteps = 2, kTrialSteps = 4, kRecheckEvery = 64, kRecheckMost = 1024,
                               kRecheckSteps = 2;
  static constexpr double kSwitchMargin = 0.05;

  // `most`: the thread count to compare with one thread (the loop's threads() when it starts).
  // At 1 there is nothing to choose and every step runs at 1.
  explicit ThreadChoice(int most);
  ~ThreadChoice();
  ThreadChoice(const ThreadChoice&) = delete;
  ThreadChoice& operator=(const ThreadChoice&) = delete;

  // Sets the thread count the next step runs at (set_threads) and returns it.
  int before_step();
  // The wall time of the step begun by the last before_step, in ms.
  void after_step(double ms);
  // Sets the thread count back to `most`, for work between steps (the destructor does it too).
  void restore() const;

  // The count kept now (`most` until the trial has ended), and how many steps ran at each count.
  int kept() const { return kept_; }
  std::size_t steps_at_one() const { return steps_at_[0]; }
  std::size_t steps_at_most() const { return steps_at_[1]; }

 private:
  int count_for_step() const;  // the count the next step should run at

  int most_;
  int kept_;
  int current_ = 0;          // the count of the step under way
  std::size_t steps_ = 0;    // steps finished
  std::size_t steps_at_[2] = {0, 0};
  std::vector<double> trial_[2];    // the trial's times at one thread and at most
  std::vector<double> recent_;      // the kept count's last kRecheckEvery times
  std::vector<double> recheck_;     // the other count's times in the current recheck
  std::size_t since_recheck_ = 0;   // steps at the kept count since the trial or the last recheck
  std::size_t recheck_every_ = kRecheckEvery;  // steps at the kept count before the next recheck
};

}  // namespace attnlab
