// Softmax family and losses, each with a fused, hand-derived backward.
#pragma once

#include "core/allowed.hpp"
#include "core/tensor.hpp"

namespace attnlab {

template <class T> Tensor<T> softmax(const Tensor<T>& x, long axis = -1);

// The softmax along `axis` over the allowed entries only (allowed broadcasts to x's shape):
//   y_j = exp(x_j) / sum_{l allowed} exp(x_l) where allowed, 0 where hidden; a lane with nothing
//   allowed is all 0. Backward: dx = y * (dy - sum(dy * y)), the softmax's own, which is exactly 0
//   wherever y is (hidden entries, empty lanes). The attention ops use the same row kernel.
template <class T> Tensor<T> masked_softmax(const Tensor<T>& x, const Allowed& allowed, long axis = -1);
template <class T> Tensor<T> log_softmax(const Tensor<T>& x, long axis = -1);

enum class Reduction { Mean, Sum };

struct CrossEntropyOptions {
  Index ignore_index = -100;     // targets equal to this add nothing (and count for nothing in the mean)
  double label_smoothing = 0.0;  // target distribution (1 - eps) onehot + eps / C, as PyTorch
  Reduction reduction = Reduction::Mean;  // mean over the targets that are not ignored
};

// cross_entropy(logits (..., C), targets (...)): classes on the last axis.
template <class T>
Tensor<T> cross_entropy(const Tensor<T>& logits, const IndexArray& targets,
                        const CrossEntropyOptions& options = {});

// mse(a, b) = mean((a - b)^2); shapes must match.
template <class T> Tensor<T> mse(const Tensor<T>& a, const Tensor<T>& b);

}  // namespace attnlab
