// The basic layers, with PyTorch's parameter names and layouts so that weights can be exchanged:
// Linear (weight (out, in), bias (out)), Embedding (weight (num, dim)), LayerNorm (weight, bias),
// Dropout, and the Transformer's position-wise feed-forward (linear1, activation, dropout, linear2).
#pragma once

#include <cstdint>
#include <optional>

#include "core/ops.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// y = x W^T + b over the last axis of x (..., in) -> (..., out).
// Init as PyTorch: W and b ~ U(-1/sqrt(in), 1/sqrt(in)).
template <class T>
class Linear : public Module<T> {
 public:
  Linear(std::size_t in_features, std::size_t out_features, Generator& gen, bool bias = true);
  Tensor<T> forward(const Tensor<T>& x) const;
  Tensor<T> operator()(const Tensor<T>& x) const { return forward(x); }
  std::size_t in_features() const { return in_; }
  std::size_t out_features() const { return out_; }

  Tensor<T> weight;  // (out, in)
  Tensor<T> bias;    // (out), or undefined without bias

 private:
  std::size_t in_, out_;
};

// A lookup table: ids (...) -> rows (..., dim). Init N(0, 1) as PyTorch.
// With a padding index, that row is initialized to zero, padding positions return zeros, and the
// row never receives a gradient (exactly 0). PyTorch returns the padding row itself, which is the
// same as long as nobody overwrites that row with nonzero values.
template <class T>
class Embedding : public Module<T> {
 public:
  Embedding(std::size_t num_embeddings, std::size_t dim, Generator& gen,
            std::optional<Index> padding_idx = std::nullopt);
  Tensor<T> forward(const IndexArray& ids) const;
  Tensor<T> operator()(const IndexArray& ids) const { return forward(ids); }
  std::size_t num_embeddings() const { return num_; }
  std::size_t dim() const { return dim_; }
  std::optional<Index> padding_idx() const { return padding_idx_; }

  Tensor<T> weight;  // (num_embeddings, dim)

 private:
  std::size_t num_, dim_;
  std::optional<Index> padding_idx_;
};

// Layer normalization over the last axis (size dim): weight ones, bias zeros.
template <class T>
class LayerNorm : public Module<T> {
 public:
  explicit LayerNorm(std::size_t dim, double eps = 1e-5, bool affine = true);
  Tensor<T> forward(const Tensor<T>& x) const;
  Tensor<T> operator()(const Tensor<T>& x) const { return forward(x); }
  std::size_t dim() const { return dim_; }
  double eps() const { return eps_; }

  Tensor<T> weight;  // (dim), gamma; undefined when not affine
  Tensor<T> bias;    // (dim), beta

 private:
  std::size_t dim_;
  double eps_;
};

// Inverted dropout driven by the module's training flag. It owns a generator forked from the
// one given (or seeded), so its masks are reproducible and independent of other modules'.
template <class T>
class Dropout : public Module<T> {
 public:
  Dropout(double p, Generator& gen);
  explicit Dropout(double p = 0.0, std::uint64_t seed = 0);
  Tensor<T> forward(const Tensor<T>& x);
  Tensor<T> operator()(const Tensor<T>& x) { return forward(x); }
  double p() const { return p_; }
  Generator& generator() { return gen_; }

 private:
  double p_;
  Generator gen_;
};

enum class Activation { ReLU, GELU };  // GELU: the exact (erf) form, PyTorch's default

// The position-wise feed-forward, (..., d_model) -> (..., d_model):
//   linear2(dropout(act(linear1(x))))
// One definition for FeedForward and for the Transformer layers, which hold linear1, dropout and
// linear2 themselves, as PyTorch's do (their names must be "linear1.weight", not "ff.linear1...").
template <class T>
Tensor<T> feed_forward(const Linear<T>& linear1, Dropout<T>& dropout, const Linear<T>& linear2,
                       Activation activation, const Tensor<T>& x);

// The feed-forward as a module of its own. Names as PyTorch's TransformerEncoderLayer:
// linear1.weight (d_ff, d_model), linear2.weight ...
template <class T>
class FeedForward : public Module<T> {
 public:
  FeedForward(std::size_t d_model, std::size_t d_ff, Generator& gen, double dropout = 0.0,
              Activation activation = Activation::ReLU);
  Tensor<T> forward(const Tensor<T>& x);
  Tensor<T> operator()(const Tensor<T>& x) { return forward(x); }

  Linear<T> linear1;
  Dropout<T> dropout;
  Linear<T> linear2;

 private:
  Activation activation_;
};

}  // namespace attnlab::nn
