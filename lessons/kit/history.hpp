// What a training run leaves behind: its History (the loss, lr, wall and CPU time of every step,
// the mean training loss of every epoch and the held-out scores after it), which the figure helpers
// (lessons/kit/figures.hpp) and the report read directly, and the held-out Scores that fill it.
// train() (lessons/kit/train.hpp) writes it.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "core/array.hpp"

namespace attnlab::lessons {

// Named held-out numbers, in order: {{"loss", 0.12}, {"accuracy", 0.97}}.
using Scores = std::vector<std::pair<std::string, double>>;

struct History {
  std::vector<double> loss, lr;              // every step
  std::vector<double> step_ms, step_cpu_ms;  // wall and CPU time of every step
  std::vector<double> epoch_loss;            // the mean training loss of every epoch
  std::vector<std::pair<std::string, std::vector<double>>> validation;  // every score, every epoch
  std::size_t steps = 0, steps_per_epoch = 0;
  double seconds = 0.0;
  // The threads the loop was given, and how many steps it ran on one thread instead: it steps at
  // whichever of the two it measures faster (core/runtime/thread_choice.hpp).
  int threads = 1;
  std::size_t steps_at_one_thread = 0;

  // The held-out values of one score, one per epoch; std::out_of_range naming it when absent.
  const std::vector<double>& validation_of(const std::string& name) const;
  double median_step_ms() const;
  double median_step_cpu_ms() const;
  // The threads the steps ran on, for a sentence: "2 threads", "1 thread", or "1 thread in 120 of
  // 128 steps and 2 in the rest, the loop keeping whichever it measured faster".
  std::string threads_text() const;
  // The CPU seconds spent training up to the end of each epoch: an x axis for held-out scores
  // against the time they cost.
  std::vector<double> epoch_cpu_seconds() const;
  // The step at the end of each epoch, 1 x, 2 x, ... steps_per_epoch: an x axis for held-out scores.
  std::vector<double> epoch_steps() const;
  // The step at the end of the first epoch after which the held-out `score` was at least `level`
  // (0: never); std::out_of_range naming it when absent.
  std::size_t steps_to_reach(const std::string& score, double level) const;
};

// A later phase's training appended to an earlier one's (pretraining at two lengths, say): one
// history of every step and epoch, its validation scores those of the earlier phase continued.
History joined(History earlier, const History& later);

// A classifier's validation scores from its class probabilities (N, C) and the labels (N):
// "accuracy" and "loss", the mean cross-entropy in nats (nn::log_loss).
Scores class_scores(const Array<float>& probabilities, const IndexArray& labels);

}  // namespace attnlab::lessons
