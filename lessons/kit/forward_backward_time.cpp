#include "lessons/kit/forward_backward_time.hpp"

#include <stdexcept>
#include <vector>

#include "lessons/story/clock.hpp"
#include "lessons/story/stats.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::lessons {

ForwardBackwardTime forward_backward_medians(const std::function<Tensor<float>()>& forward, const Array<float>& upstream,
                                             const std::function<void()>& reset, int rounds) {
  if (rounds < 1) throw std::invalid_argument(text("forward_backward_medians: rounds must be at least 1, got ", rounds));
  std::vector<double> fwd, bwd;
  for (int r = 0; r <= rounds; ++r) {  // round 0 warms up and is not counted
    const double t0 = wall_ms();
    const Tensor<float> out = forward();
    const double t1 = wall_ms();
    if (out.shape() != shape_of(upstream))
      throw std::invalid_argument(text("forward_backward_medians: the upstream gradient ", shape_str(upstream.shape()),
                                       " is not the shape of the output ", shape_str(out.shape())));
    out.backward(upstream);
    const double t2 = wall_ms();
    if (reset) reset();
    if (r > 0) fwd.push_back(t1 - t0), bwd.push_back(t2 - t1);
  }
  return {median(fwd), median(bwd)};
}

}  // namespace attnlab::lessons
