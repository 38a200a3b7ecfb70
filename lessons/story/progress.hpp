// A progress bar with ETA and running loss on a terminal; plain periodic lines otherwise
// (a log file or CI gets about ten lines per run, not thousands of carriage returns).
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace attnlab::lessons {

class Progress {
 public:
  // total: number of steps; label: what is counted ("epoch 3/10", "train").
  Progress(std::size_t total, std::string label, std::FILE* out = stdout);
  Progress(std::size_t total, std::string label, std::FILE* out, bool terminal);
  // After each step; loss is the running (smoothed) loss shown, note a short status ("epoch 2/6").
  void step(double loss, const std::string& note = "");
  // Ends the bar's line; prints the final summary.
  void finish();
  ~Progress();

  double running_loss() const { return running_; }

 private:
  void draw(bool final);
  std::size_t total_, done_ = 0;
  std::string label_, note_;
  std::FILE* out_;
  bool terminal_;
  bool finished_ = false;
  double running_ = 0.0;
  std::size_t next_report_ = 0;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace attnlab::lessons
