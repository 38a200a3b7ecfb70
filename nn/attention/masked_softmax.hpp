// Softmax over keys with a key mask, composed from ops so that its contract holds by construction:
//   w = softmax(masked_fill(scores, !mask, -1e9)) * mask
// Masked keys get exactly zero weight and (through the final product) exactly zero gradient; a
// row whose keys are all masked comes out all zero instead of uniform, and never NaN (an -inf
// fill would give exp(-inf - -inf) = NaN; a bare -1e9 fill would give uniform weights).
#pragma once

#include <optional>
#include <string>

#include "core/ops.hpp"

namespace attnlab::nn {

// scores (B, Lq, Lk); key_mask (B, Lk), true = a real key. Without a mask, a plain softmax.
// `who` names the caller in errors ("AdditiveAttention: key mask (2,5) does not match keys (2,4)").
template <class T>
Tensor<T> masked_softmax(const Tensor<T>& scores, const std::optional<Mask>& key_mask,
                         const std::string& who = "masked_softmax");

}  // namespace attnlab::nn
