// Where a training step spends its time, op by op: a few forward and backward passes under the
// engine's OpProfiler (core/runtime/profile.hpp), with the time of making each batch and the glue
// between ops charged to sections of their own, and the largest shares in words for the prose.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/runtime/profile.hpp"
#include "core/tensor.hpp"
#include "nn/module.hpp"

namespace attnlab::lessons {

struct StepProfile {
  int steps = 0;
  std::string table;          // OpProfiler::table(): op, calls, forward, backward, share
  std::vector<OpTime> times;  // slowest first
  double total_ms = 0;
  // The first k ops and their shares of the total: "'linear' 41%, 'attention' 22% and 'gelu' 9%".
  std::string largest(std::size_t k = 3) const;
};

// `steps` rounds of: next_batch() (charged to "making the batch"), model.zero_grad(), loss(batch)
// ("forward glue" after its ops), backward ("backward glue"). No optimizer step: the model is
// unchanged but for its gradients. std::invalid_argument naming profile_steps for steps below 1.
template <class Batch>
StepProfile profile_steps(nn::Module<float>& model, const std::function<Batch()>& next_batch,
                          const std::function<Tensor<float>(const Batch&)>& loss, int steps) {
  if (steps < 1) throw std::invalid_argument("profile_steps: needs at least one step, got " + std::to_string(steps));
  OpProfiler prof;
  for (int i = 0; i < steps; ++i) {
    const Batch batch = next_batch();
    prof.mark("making the batch");
    model.zero_grad();
    Tensor<float> l = loss(batch);
    prof.mark("forward glue");
    l.backward();
    prof.mark("backward glue");
  }
  return {steps, prof.table(), prof.times(), prof.total_ms()};
}

}  // namespace attnlab::lessons
