// Parameter initializers. Each overwrites a tensor's value in place (not recorded on the tape),
// drawing from the given seeded Generator, so a model built from the same seed is the same model
// on every run and platform.
#pragma once

#include "core/random.hpp"
#include "core/tensor.hpp"

namespace attnlab::nn {

// fan_in and fan_out as PyTorch computes them for a weight of shape (out, in, *receptive):
// fan_in = in * prod(receptive), fan_out = out * prod(receptive). Needs at least 2 dims.
struct Fans {
  std::size_t in = 0, out = 0;
};
Fans fans(const Shape& shape);

// Glorot & Bengio (2010): U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out)); keeps the variance
// of activations and of gradients about equal through a linear layer.
template <class T>
void xavier_uniform(const Tensor<T>& t, Generator& gen, double gain = 1.0);
// N(mean, std^2); std 0.02 is the GPT / BERT / ViT choice for embeddings and projections.
template <class T>
void normal(const Tensor<T>& t, Generator& gen, double mean = 0.0, double std = 0.02);
// N(mean, std^2) restricted to [mean + lo * std, mean + hi * std] by redrawing (bounds in units
// of std, default +-2 std: no outliers among the initial weights).
template <class T>
void trunc_normal(const Tensor<T>& t, Generator& gen, double mean = 0.0, double std = 0.02,
                  double lo = -2.0, double hi = 2.0);
// U(lo, hi); PyTorch's default for Linear, GRU and friends is U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
template <class T>
void uniform(const Tensor<T>& t, Generator& gen, double lo, double hi);
template <class T>
void constant(const Tensor<T>& t, T value);
template <class T>
void zeros(const Tensor<T>& t);
template <class T>
void ones(const Tensor<T>& t);

}  // namespace attnlab::nn
