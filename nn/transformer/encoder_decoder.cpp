// memory = Encoder(src), out = Decoder(tgt, memory): the two stacks, nothing more.
#include "nn/transformer/encoder_decoder.hpp"

namespace attnlab::nn {

template <class T>
Transformer<T>::Transformer(const TransformerConfig& c, Generator& gen)
    : encoder(c.encoder_layers, c.layer, gen, /*final_norm=*/true),
      decoder(c.decoder_layers, c.layer, gen, /*final_norm=*/true), config_(c) {
  this->register_module("encoder", encoder);
  this->register_module("decoder", decoder);
}

template <class T>
Tensor<T> Transformer<T>::encode(const Tensor<T>& src, const std::optional<Allowed>& src_allowed) {
  MultiHeadOptions<T> options;
  options.allowed_keys = src_allowed;
  return encoder.forward(src, options);
}

template <class T>
Tensor<T> Transformer<T>::decode(const Tensor<T>& tgt, const Tensor<T>& memory,
                                 const std::optional<Allowed>& src_allowed,
                                 const std::optional<Allowed>& tgt_allowed, bool causal) {
  return decoder.forward(tgt, memory, tgt_allowed, src_allowed, causal);
}

template <class T>
Tensor<T> Transformer<T>::forward(const Tensor<T>& src, const Tensor<T>& tgt,
                                  const std::optional<Allowed>& src_allowed,
                                  const std::optional<Allowed>& tgt_allowed, bool causal) {
  return decode(tgt, encode(src, src_allowed), src_allowed, tgt_allowed, causal);
}

template class Transformer<float>;
template class Transformer<double>;

}  // namespace attnlab::nn
