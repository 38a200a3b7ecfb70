// A linear probe: how much of a label a linear classifier can read off fixed features. The
// features are standardized with the training set's means and spreads (so one learning rate suits
// any of them), then a linear layer is trained to convergence on the whole training set at once
// (full-batch AdamW at a constant rate, weight decay against the separable case). Lesson 15 probes a
// frozen BERT's outputs with it, and a bag of characters.
#pragma once

#include <cstdint>
#include <string>

#include "core/array.hpp"

namespace attnlab::lessons {

struct LabelledFeatures {
  Array<float> x;  // (N, k)
  IndexArray y;    // (N): labels in [0, classes)
};

struct ProbeRecipe {
  std::string label = "probe";  // the progress bar's
  std::size_t classes = 2;
  int steps = 300;              // full-batch steps
  double lr = 1e-2, weight_decay = 0.05;
  std::uint64_t init_seed = 0;   // the linear layer's initial weights
  std::uint64_t order_seed = 0;  // the order of the rows in the batch
};

struct ProbeScores {
  double validation = 0, test = 0;  // accuracies
};

// Trains the probe on `train` and scores it on `validation` and `test`. std::invalid_argument
// naming linear_probe and the shapes when a set's features are not (N, k) with the training set's
// k, its labels are not N, a label lies outside [0, classes), or the training set is empty.
ProbeScores linear_probe(LabelledFeatures train, LabelledFeatures validation, LabelledFeatures test, const ProbeRecipe& r);

}  // namespace attnlab::lessons
