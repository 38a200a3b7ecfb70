// Stacks of layers: the output of layer i is the input of layer i + 1; the options (masks,
// positional bias, RoPE hook) are the same for every layer.
#include <string>

#include "nn/transformer/stacks.hpp"

namespace attnlab::nn {

template <class T>
Encoder<T>::Encoder(std::size_t num_layers, const LayerConfig& config, Generator& gen,
                    bool final_norm) {
  check(num_layers > 0, "Encoder", "need at least one layer, got ", num_layers);
  for (std::size_t i = 0; i < num_layers; ++i) {
    layers.push_back(std::make_unique<EncoderLayer<T>>(config, gen));
    this->register_module("layers." + std::to_string(i), *layers.back());
  }
  if (final_norm) {
    norm = std::make_unique<LayerNorm<T>>(config.d_model, config.eps);
    this->register_module("norm", *norm);
  }
}

template <class T>
Tensor<T> Encoder<T>::forward(const Tensor<T>& x, const MultiHeadOptions<T>& options) {
  Tensor<T> h = x;
  for (auto& layer : layers) h = layer->forward(h, options);
  return norm ? norm->forward(h) : h;
}

template <class T>
Tensor<T> Encoder<T>::forward_cached(const Tensor<T>& x, std::vector<KVCache<T>>& caches,
                                     const MultiHeadOptions<T>& options) {
  check(caches.size() == layers.size(), "Encoder", "one cache per layer: ", layers.size(), " layers, ", caches.size(),
        " caches");
  Tensor<T> h = x;
  for (std::size_t i = 0; i < layers.size(); ++i) h = layers[i]->forward_cached(h, caches[i], options);
  return norm ? norm->forward(h) : h;
}

template <class T>
std::vector<Tensor<T>> Encoder<T>::attention_weights() const {
  std::vector<Tensor<T>> out;
  for (const auto& layer : layers) out.push_back(layer->attention());
  return out;
}

template <class T>
void Encoder<T>::keep_score_parts(bool on) {
  for (auto& layer : layers) layer->self_attn.keep_score_parts(on);
}

template <class T>
std::vector<ScoreParts<T>> Encoder<T>::score_parts() const {
  std::vector<ScoreParts<T>> out;
  for (const auto& layer : layers) out.push_back(layer->self_attn.score_parts());
  return out;
}

template <class T>
Decoder<T>::Decoder(std::size_t num_layers, const LayerConfig& config, Generator& gen,
                    bool final_norm) {
  check(num_layers > 0, "Decoder", "need at least one layer, got ", num_layers);
  for (std::size_t i = 0; i < num_layers; ++i) {
    layers.push_back(std::make_unique<DecoderLayer<T>>(config, gen));
    this->register_module("layers." + std::to_string(i), *layers.back());
  }
  if (final_norm) {
    norm = std::make_unique<LayerNorm<T>>(config.d_model, config.eps);
    this->register_module("norm", *norm);
  }
}

template <class T>
Tensor<T> Decoder<T>::forward(const Tensor<T>& x, const Tensor<T>& memory,
                              const std::optional<Allowed>& target_allowed,
                              const std::optional<Allowed>& memory_allowed, bool causal) {
  MultiHeadOptions<T> self_options, cross_options;
  self_options.allowed_keys = target_allowed;
  self_options.causal = causal;
  cross_options.allowed_keys = memory_allowed;
  return forward(x, memory, self_options, cross_options);
}

template <class T>
Tensor<T> Decoder<T>::forward(const Tensor<T>& x, const Tensor<T>& memory, const MultiHeadOptions<T>& self_options,
                              const MultiHeadOptions<T>& cross_options) {
  Tensor<T> h = x;
  for (auto& layer : layers) h = layer->forward(h, memory, self_options, cross_options);
  return norm ? norm->forward(h) : h;
}

template <class T>
std::vector<Tensor<T>> Decoder<T>::self_attention_weights() const {
  std::vector<Tensor<T>> out;
  for (const auto& layer : layers) out.push_back(layer->self_attention());
  return out;
}

template <class T>
std::vector<Tensor<T>> Decoder<T>::cross_attention_weights() const {
  std::vector<Tensor<T>> out;
  for (const auto& layer : layers) out.push_back(layer->cross_attention());
  return out;
}

template class Encoder<float>;
template class Encoder<double>;
template class Decoder<float>;
template class Decoder<double>;

}  // namespace attnlab::nn
