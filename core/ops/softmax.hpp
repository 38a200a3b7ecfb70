// Softmax family and losses, each with a fused, hand-derived backward.
#pragma once

#include "core/tensor.hpp"

namespace attnlab {

template <class T> Tensor<T> softmax(const Tensor<T>& x, long axis = -1);
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
