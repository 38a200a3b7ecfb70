// Learned absolute positions (BERT, GPT-2, ViT): one trained row per position. Simple and
// flexible, but a position never seen in training has no row at all, so it cannot extrapolate.
#include "core/ops/elementwise.hpp"
#include "core/ops/shape.hpp"
#include "nn/init.hpp"
#include "nn/positional/learned.hpp"

namespace attnlab::nn {

template <class T>
LearnedPositionalEmbedding<T>::LearnedPositionalEmbedding(std::size_t max_length, std::size_t d,
                                                          Generator& gen, double std)
    : max_length_(max_length), d_(d) {
  check(max_length > 0 && d > 0, "LearnedPositionalEmbedding",
        "max_length and d must be positive, got ", max_length, " and ", d);
  weight_ = this->register_parameter("weight", Tensor<T>::zeros({max_length, d}));
  normal(weight_, gen, 0.0, std);
}

// y = x + W[offset : offset + L] (broadcast over the leading dims of x).
// dx = dy; dW[offset + l] = sum over the leading dims of dy[..., l, :] (slice + add backwards).
template <class T>
Tensor<T> LearnedPositionalEmbedding<T>::forward(const Tensor<T>& x, std::size_t offset) const {
  need("LearnedPositionalEmbedding", x);
  const Shape s = x.shape();
  check(s.size() >= 2 && s.back() == d_, "LearnedPositionalEmbedding", "expected input (..., L, ",
        d_, "), got ", shape_str(s));
  const std::size_t length = s[s.size() - 2];
  check(offset + length <= max_length_, "LearnedPositionalEmbedding", "sequence length ", length,
        offset ? " at offset " + std::to_string(offset) : std::string(),
        " exceeds the maximum length ", max_length_, " of the learned table");
  return add(x, slice(weight_, 0, static_cast<long>(offset), static_cast<long>(offset + length)));
}

template class LearnedPositionalEmbedding<float>;
template class LearnedPositionalEmbedding<double>;

}  // namespace attnlab::nn
