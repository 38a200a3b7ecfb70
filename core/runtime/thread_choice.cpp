#include "core/runtime/thread_choice.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/runtime/parallel.hpp"

namespace attnlab {

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

ThreadChoice::ThreadChoice(int most) : most_(most), kept_(most) {
  check(most >= 1, "ThreadChoice", "needs at least 1 thread, got ", most);
}

ThreadChoice::~ThreadChoice() { restore(); }

void ThreadChoice::restore() const {
  if (threads() != most_) set_threads(most_);
}

int ThreadChoice::count_for_step() const {
  if (most_ == 1 || steps_ < kUntimedSteps) return most_;
  if (trial_[0].size() < kTrialSteps || trial_[1].size() < kTrialSteps)
    return trial_[0].size() <= trial_[1].size() ? 1 : most_;  // one thread first: the untimed steps ran at most
  const int other = kept_ == 1 ? most_ : 1;
  return since_recheck_ >= recheck_every_ ? other : kept_;
}

int ThreadChoice::before_step() {
  current_ = count_for_step();
  if (threads() != current_) set_threads(current_);
  return current_;
}

void ThreadChoice::after_step(double ms) {
  check(current_ != 0, "ThreadChoice", "after_step without a before_step");
  ++steps_at_[current_ == most_ ? 1 : 0];
  const bool timed = most_ > 1 && steps_ >= kUntimedSteps;
  ++steps_;
  if (!timed) return;
  std::vector<double>& trial = trial_[current_ == most_ ? 1 : 0];
  if (trial_[0].size() < kTrialSteps || trial_[1].size() < kTrialSteps) {
    trial.push_back(ms);
    if (trial_[0].size() == kTrialSteps && trial_[1].size() == kTrialSteps) {
      // Ties keep all the threads: the lesson asked for them.
      kept_ = median_of(trial_[0]) < median_of(trial_[1]) ? 1 : most_;
      recent_ = trial_[kept_ == most_ ? 1 : 0];
    }
    return;
  }
  if (current_ == kept_) {
    recent_.push_back(ms);
    if (recent_.size() > kRecheckEvery) recent_.erase(recent_.begin());
    ++since_recheck_;
    return;
  }
  recheck_.push_back(ms);
  if (recheck_.size() < kRecheckSteps) return;
  if (median_of(recheck_) < (1.0 - kSwitchMargin) * median_of(recent_)) {
    kept_ = current_;
    recent_ = recheck_;
    recheck_every_ = kRecheckEvery;
  } else {
    recheck_every_ = std::min(2 * recheck_every_, kRecheckMost);
  }
  recheck_.clear();
  since_recheck_ = 0;
}

}  // namespace attnlab
