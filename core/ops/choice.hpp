// The log-probability of a choice: what hard attention's REINFORCE gradient is made of.
//
// A hard-attention decoder does not average the patches with its weights p (..., N); it draws one
// patch s ~ p and reads it alone. The draw has no gradient, but the probability of the patch it
// drew does, and the score-function (REINFORCE) estimator weights that log-probability by how good
// the draw turned out: grad E_s[f(s)] = E_s[f(s) grad log p_s].
#pragma once

#include "core/tensor.hpp"

namespace attnlab {

// y[...] = log p[..., chosen[...]]: probabilities p (..., N) with the choices on the last axis,
// chosen (...) the index picked in each row; y has p's shape without its last axis.
// Backward: dp[..., chosen] = dy / p[..., chosen], zero elsewhere (d log p / dp = 1 / p, and the
// other entries are not read). A chosen entry with p = 0 gives y = -inf and an infinite gradient:
// a patch that cannot be drawn was drawn, so the caller has a bug.
// ShapeError naming the op for chosen's shape not p's without the last axis, or an index outside [0, N).
template <class T>
Tensor<T> log_of_chosen(const Tensor<T>& p, const IndexArray& chosen);

}  // namespace attnlab
