// The time of a forward pass and of the backward that follows it, apart: each round records a
// fresh forward (backward frees the tape it walks), times it, then times backward of the same
// tape. interleaved_medians (timing.hpp) times whole pieces of work; this splits one in two.
#pragma once

#include <functional>

#include "core/tensor.hpp"

namespace attnlab::lessons {

struct ForwardBackwardTime {
  double forward_ms = 0, backward_ms = 0;  // wall-clock medians over the counted rounds
};

// One warm-up round (not counted), then `rounds` counted ones: forward() records the tape,
// backward(upstream) walks it, reset() (not timed) drops what the round left, the inputs'
// gradients say. std::invalid_argument naming forward_backward_medians for rounds below 1 or an
// upstream gradient whose shape is not the output's.
ForwardBackwardTime forward_backward_medians(const std::function<Tensor<float>()>& forward, const Array<float>& upstream,
                                             const std::function<void()>& reset, int rounds);

}  // namespace attnlab::lessons
