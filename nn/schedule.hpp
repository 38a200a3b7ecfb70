// Learning-rate schedules: lr as a function of the optimizer step (1-based: the first update
// uses schedule(1)). Typical loop: opt.set_lr(schedule(opt.steps() + 1)); opt.step();
#pragma once

#include <functional>

namespace attnlab::nn {

// Throws ShapeError (naming the schedule) for a step below 1.
using Schedule = std::function<double(long step)>;

// lr, every step.
Schedule constant_lr(double lr);

// "Attention Is All You Need", section 5.3 (the Annotated Transformer's `rate`):
//   lr = factor * d_model^-0.5 * min(step^-0.5, step * warmup^-1.5)
// Linear rise to its peak factor * (d_model * warmup)^-0.5 at step == warmup, then ~ 1/sqrt(step).
Schedule noam_lr(double d_model, long warmup, double factor = 1.0);

// Linear warm-up from 0 to peak (peak * step / warmup for step <= warmup), then half a cosine
// from peak down to floor at step == total, and floor after that. warmup may be 0.
Schedule warmup_cosine_lr(double peak, long warmup, long total, double floor = 0.0);

// Linear warm-up to peak, then peak * gamma^(step - warmup), with 0 < gamma <= 1.
Schedule warmup_exponential_lr(double peak, long warmup, double gamma);

}  // namespace attnlab::nn
