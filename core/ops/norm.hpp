// Normalization and regularization.
#pragma once

#include "core/tensor.hpp"

namespace attnlab {

// layer_norm over the last axis: y = (x - mean) / sqrt(var + eps) * gamma + beta.
// gamma and beta have shape (last,) or are undefined (no affine part).
template <class T>
Tensor<T> layer_norm(const Tensor<T>& x, const Tensor<T>& gamma, const Tensor<T>& beta,
                     double eps = 1e-5);

// Inverted dropout: in training, zero each value with probability p and scale the rest by
// 1 / (1 - p); in evaluation (training = false) or with p = 0, the identity.
template <class T>
Tensor<T> dropout(const Tensor<T>& x, double p, bool training, Generator& gen);

}  // namespace attnlab
