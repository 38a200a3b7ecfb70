#include "nn/layers.hpp"

#include <cmath>

#include <xtensor/xoperation.hpp>
#include <xtensor/xview.hpp>

#include "nn/init.hpp"

namespace attnlab::nn {

// ---- Linear

template <class T>
Linear<T>::Linear(std::size_t in_features, std::size_t out_features, Generator& gen, bool bias)
    : in_(in_features), out_(out_features) {
  check(in_ > 0 && out_ > 0, "Linear", "sizes must be positive, got in ", in_, ", out ", out_);
  // PyTorch's default, U(-1/sqrt(in), 1/sqrt(in)) for both: the output variance stays about
  // that of one input whatever the fan-in.
  const double a = 1.0 / std::sqrt(static_cast<double>(in_));
  weight = this->register_parameter("weight", Tensor<T>::zeros({out_, in_}));
  uniform(weight, gen, -a, a);
  if (bias) {
    this->bias = this->register_parameter("bias", Tensor<T>::zeros({out_}));
    uniform(this->bias, gen, -a, a);
  }
}

template <class T>
Tensor<T> Linear<T>::forward(const Tensor<T>& x) const {
  need("Linear", x);
  check(x.ndim() >= 1 && x.shape().back() == in_, "Linear", "expected input (..., ", in_,
        "), got ", shape_str(x.shape()));
  return linear(x, weight, bias);
}

// ---- Embedding

template <class T>
Embedding<T>::Embedding(std::size_t num_embeddings, std::size_t dim, Generator& gen,
                        std::optional<Index> padding_idx)
    : num_(num_embeddings), dim_(dim), padding_idx_(padding_idx) {
  check(num_ > 0 && dim_ > 0, "Embedding", "sizes must be positive, got ", num_, " x ", dim_);
  if (padding_idx_ && *padding_idx_ < 0) *padding_idx_ += static_cast<Index>(num_);  // as PyTorch
  check(!padding_idx_ || (*padding_idx_ >= 0 && *padding_idx_ < static_cast<Index>(num_)),
        "Embedding", "padding_idx out of range for ", num_, " embeddings");
  weight = this->register_parameter("weight", Tensor<T>::zeros({num_, dim_}));
  normal(weight, gen, 0.0, 1.0);
  if (padding_idx_) xt::view(weight.mutable_value(), *padding_idx_, xt::all()) = T(0);
}

// out = W[ids], with the padding positions filled with 0: out = masked_fill(W[ids], ids == p, 0).
// The filled positions pass no gradient, so index_select's backward scatters exactly 0 into row
// p, and the output truly does not depend on row p (its gradient, 0, is the exact derivative).
template <class T>
Tensor<T> Embedding<T>::forward(const IndexArray& ids) const {
  for (Index id : ids)
    check(id >= 0 && id < static_cast<Index>(num_), "Embedding", "index ", id,
          " out of range for ", num_, " embeddings");
  Tensor<T> out = index_select(weight, 0, ids);
  if (!padding_idx_) return out;
  Shape mshape = shape_of(ids);
  mshape.push_back(1);
  Mask is_pad = xt::equal(ids, *padding_idx_);
  is_pad.reshape(mshape);
  return masked_fill(out, is_pad, T(0));
}

// ---- LayerNorm

template <class T>
LayerNorm<T>::LayerNorm(std::size_t dim, double eps, bool affine) : dim_(dim), eps_(eps) {
  check(dim_ > 0 && eps_ >= 0.0, "LayerNorm", "needs dim > 0 and eps >= 0, got dim ", dim_,
        ", eps ", eps_);
  if (affine) {
    weight = this->register_parameter("weight", Tensor<T>::ones({dim_}));
    bias = this->register_parameter("bias", Tensor<T>::zeros({dim_}));
  }
}

template <class T>
Tensor<T> LayerNorm<T>::forward(const Tensor<T>& x) const {
  need("LayerNorm", x);
  check(x.ndim() >= 1 && x.shape().back() == dim_, "LayerNorm", "expected input (..., ", dim_,
        "), got ", shape_str(x.shape()));
  return layer_norm(x, weight, bias, eps_);
}

// ---- Dropout

template <class T>
Dropout<T>::Dropout(double p, Generator& gen) : p_(p), gen_(gen.fork()) {
  check(p_ >= 0.0 && p_ < 1.0, "Dropout", "p must be in [0, 1), got ", p_);
}

template <class T>
Dropout<T>::Dropout(double p, std::uint64_t seed) : p_(p), gen_(seed) {
  check(p_ >= 0.0 && p_ < 1.0, "Dropout", "p must be in [0, 1), got ", p_);
}

template <class T>
Tensor<T> Dropout<T>::forward(const Tensor<T>& x) {
  need("Dropout", x);
  if (!this->training() || p_ == 0.0) return x;  // the identity: no node, no copy
  return dropout(x, p_, true, gen_);
}

// ---- FeedForward

template <class T>
FeedForward<T>::FeedForward(std::size_t d_model, std::size_t d_ff, Generator& gen, double p,
                            Activation activation)
    : linear1(d_model, d_ff, gen), dropout(p, gen), linear2(d_ff, d_model, gen),
      activation_(activation) {
  this->register_module("linear1", linear1);
  this->register_module("dropout", dropout);
  this->register_module("linear2", linear2);
}

template <class T>
Tensor<T> feed_forward(const Linear<T>& linear1, Dropout<T>& dropout, const Linear<T>& linear2,
                       Activation activation, const Tensor<T>& x) {
  Tensor<T> h = linear1(x);
  h = activation == Activation::ReLU ? relu(h) : gelu(std::move(h), GeluForm::Erf);  // GELU keeps its slope in h's array
  return linear2(dropout(h));
}

template <class T>
Tensor<T> FeedForward<T>::forward(const Tensor<T>& x) {
  return feed_forward(linear1, dropout, linear2, activation_, x);
}

#define ATTNLAB_INSTANTIATE(T)                                                                  \
  template class Linear<T>;                                                                     \
  template class Embedding<T>;                                                                  \
  template class LayerNorm<T>;                                                                  \
  template class Dropout<T>;                                                                    \
  template class FeedForward<T>;                                                                \
  template Tensor<T> feed_forward<T>(const Linear<T>&, Dropout<T>&, const Linear<T>&, Activation, \
                                     const Tensor<T>&);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
