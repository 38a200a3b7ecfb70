// One training loop for every lesson. A lesson says how to compute the loss of a batch (given the
// rows of its training set that make the batch) and fit does the rest the same way everywhere:
//
//   for each epoch e: the rows in the order nn::data::epoch_order(examples, seed, e), cut into
//   batches; per batch: zero the gradients, loss, backward, clip the global norm, set the lr of
//   the schedule, step the optimizer; then the held-out scores (in eval mode, no tape).
//
// It shows a progress bar and keeps a History: the loss, lr, wall and CPU time of every step, the
// mean training loss of every epoch and the held-out scores after it, which the figure helpers
// (lessons/kit/figures.hpp) and the report read directly.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.hpp"
#include "nn/module.hpp"
#include "nn/optim.hpp"
#include "nn/schedule.hpp"

namespace attnlab::lessons {

// Named held-out numbers, in order: {{"loss", 0.12}, {"accuracy", 0.97}}.
using Scores = std::vector<std::pair<std::string, double>>;

struct FitOptions {
  std::string label = "train";  // the progress bar's
  int epochs = 1;
  std::size_t batch = 32;       // examples per step; 0: all of them (full batch)
  std::uint64_t seed = 0;       // the order of epoch e is a function of (seed, e) alone
  bool shuffle = true;
  double clip = 0.0;            // global gradient-norm clip; 0: none
  nn::Schedule lr;              // lr of each step (1-based); empty: the optimizer's own, throughout
  std::function<Scores()> validate;                   // after every epoch; empty: none
  std::function<void(std::size_t step)> after_step;   // e.g. a snapshot early in training
};

// The steps fit(model, opt, examples, loss, o) takes: ceil(examples / o.batch) per epoch (the last
// batch of an epoch may be short; batch 0: one step), times o.epochs. A schedule in o.lr that is
// to end where training ends runs over this many steps.
long fit_steps(std::size_t examples, const FitOptions& o);

struct History {
  std::vector<double> loss, lr;              // every step
  std::vector<double> step_ms, step_cpu_ms;  // wall and CPU time of every step
  std::vector<double> epoch_loss;            // the mean training loss of every epoch
  std::vector<std::pair<std::string, std::vector<double>>> validation;  // every score, every epoch
  std::size_t steps = 0, steps_per_epoch = 0;
  double seconds = 0.0;

  // The held-out values of one score, one per epoch; std::out_of_range naming it when absent.
  const std::vector<double>& validation_of(const std::string& name) const;
  double median_step_ms() const;
  double median_step_cpu_ms() const;
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

// The loss of the batch made of these rows of the training set.
using BatchLoss = std::function<Tensor<float>(const std::vector<std::size_t>& rows)>;

// Evaluation in order: body(rows) for rows 0..batch-1, batch..2 batch-1, ... of n examples (the
// last batch may be shorter).
template <class Body>
void in_batches(std::size_t n, std::size_t batch, Body&& body) {
  if (batch == 0) throw std::invalid_argument("in_batches: the batch size must be positive, got 0");
  for (std::size_t lo = 0; lo < n; lo += batch) {
    std::vector<std::size_t> rows(std::min(n, lo + batch) - lo);
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = lo + i;
    body(rows);
  }
}

// Rows 0..n-1 of an (n, ...) result computed `batch` rows at a time without the tape, for
// evaluating a model on a whole set without holding all its activations: block(rows) gives the
// (rows.size(), ...) block of those rows (consecutive, as in_batches makes them).
Array<float> rows_in_batches(std::size_t n, std::size_t batch,
                             const std::function<Array<float>(const std::vector<std::size_t>& rows)>& block);

// A classifier's validation scores from its class probabilities (N, C) and the labels (N):
// "accuracy" and "loss", the mean cross-entropy in nats (nn::log_loss).
Scores class_scores(const Array<float>& probabilities, const IndexArray& labels);

// Trains `model`'s parameters with `opt` on `examples` training examples. The model is in
// training mode during the steps and in eval mode when fit returns.
History fit(nn::Module<float>& model, nn::Optimizer<float>& opt, std::size_t examples, const BatchLoss& loss,
            const FitOptions& options);

}  // namespace attnlab::lessons
