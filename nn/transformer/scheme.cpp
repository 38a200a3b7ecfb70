// A model's positional method in one module, so that the encoder-only model and the language
// model can switch between the six methods with one enum (the positional-encoding lesson trains
// the same encoder with each).
#include "nn/transformer/scheme.hpp"

namespace attnlab::nn {

template <class T>
PositionalScheme<T>::PositionalScheme(Positional method, const LayerConfig& config,
                                      std::size_t max_length, Generator& gen, bool bidirectional,
                                      std::size_t shaw_max_distance)
    : method_(method), heads_(config.heads) {
  switch (method) {
    case Positional::None:
      break;
    case Positional::Sinusoidal:
      sinusoidal_ = std::make_unique<SinusoidalPositionalEncoding<T>>(config.d_model);
      break;
    case Positional::Learned:
      learned_ = std::make_unique<LearnedPositionalEmbedding<T>>(max_length, config.d_model, gen);
      this->register_module("learned", *learned_);
      break;
    case Positional::RelativeBias:
      relative_ = std::make_unique<RelativePositionBias<T>>(config.heads, gen, 32, 128,
                                                            bidirectional);
      this->register_module("relative", *relative_);
      break;
    case Positional::Rotary:
      check(config.heads > 0 && config.d_model % config.heads == 0, "PositionalScheme",
            "d_model ", config.d_model, " is not divisible by heads ", config.heads);
      rotary_ = std::make_unique<RotaryEmbedding<T>>(config.d_model / config.heads);
      break;
    case Positional::ALiBi:
      break;
    case Positional::ShawRelative:  // one table of 2K + 1 vectors of d_k, shared by heads and layers
      check(config.heads > 0 && config.d_model % config.heads == 0, "PositionalScheme",
            "d_model ", config.d_model, " is not divisible by heads ", config.heads);
      shaw_ = std::make_unique<ShawRelativePosition<T>>(config.d_model / config.heads, shaw_max_distance, gen);
      this->register_module("shaw", *shaw_);
      break;
  }
}

template <class T>
Tensor<T> PositionalScheme<T>::embed(const Tensor<T>& x, std::size_t offset) const {
  if (sinusoidal_) return sinusoidal_->forward(x, offset);
  if (learned_) return learned_->forward(x, offset);
  return x;
}

template <class T>
void PositionalScheme<T>::attention(std::size_t length, MultiHeadOptions<T>& options, std::size_t offset) const {
  if (relative_) options.bias = relative_->forward(length, offset + length, offset);
  if (method_ == Positional::ALiBi) options.bias = alibi_bias<T>(heads_, length, offset + length, offset);
  if (rotary_) {
    const RotaryEmbedding<T>* rope = rotary_.get();
    options.qk_transform = [rope, offset](const Tensor<T>& t) { return rope->forward(t, offset); };
  }
  if (shaw_) {
    const ShawRelativePosition<T>* shaw = shaw_.get();
    options.query_bias = [shaw, length, offset](const Tensor<T>& q) { return shaw->forward(q, offset + length, offset); };
  }
}

template class PositionalScheme<float>;
template class PositionalScheme<double>;

}  // namespace attnlab::nn
