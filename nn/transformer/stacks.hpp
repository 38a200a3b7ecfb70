// Encoder and Decoder: N layers ("layers.0.self_attn.in_proj_weight"), optional final norm "norm",
// named as PyTorch's nn.TransformerEncoder and nn.TransformerDecoder.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "nn/transformer/layers.hpp"

namespace attnlab::nn {

template <class T>
class Encoder : public Module<T> {
 public:
  Encoder(std::size_t num_layers, const LayerConfig& config, Generator& gen,
          bool final_norm = false);
  // The same options reach every layer (T5 and ALiBi share one bias across layers).
  Tensor<T> forward(const Tensor<T>& x, const MultiHeadOptions<T>& options = {});
  // New positions after the cached ones, one KVCache per layer (causal self-attention only).
  Tensor<T> forward_cached(const Tensor<T>& x, std::vector<KVCache<T>>& caches, const MultiHeadOptions<T>& options = {});
  std::size_t size() const { return layers.size(); }
  EncoderLayer<T>& layer(std::size_t i) { return *layers.at(i); }
  // One (B, h, L, L) tensor per layer, from the last forward.
  std::vector<Tensor<T>> attention_weights() const;
  // Every layer's self-attention keeps (or stops keeping) its ScoreParts (nn/attention/multi_head.hpp);
  // score_parts(): one per layer, from the last forward.
  void keep_score_parts(bool on);
  std::vector<ScoreParts<T>> score_parts() const;

  std::vector<std::unique_ptr<EncoderLayer<T>>> layers;
  std::unique_ptr<LayerNorm<T>> norm;  // null without a final norm
};

template <class T>
class Decoder : public Module<T> {
 public:
  Decoder(std::size_t num_layers, const LayerConfig& config, Generator& gen,
          bool final_norm = false);
  // x (B, T, d), memory (B, S, d); target_allowed (B, T) and memory_allowed (B, S): the real tokens.
  Tensor<T> forward(const Tensor<T>& x, const Tensor<T>& memory,
                    const std::optional<Allowed>& target_allowed = std::nullopt,
                    const std::optional<Allowed>& memory_allowed = std::nullopt, bool causal = true);
  // The same with the options of each attention given whole: self_options (masks, causal, score
  // bias, RoPE hook) reach every layer's self-attention, cross_options its cross-attention.
  Tensor<T> forward(const Tensor<T>& x, const Tensor<T>& memory, const MultiHeadOptions<T>& self_options,
                    const MultiHeadOptions<T>& cross_options);
  std::size_t size() const { return layers.size(); }
  DecoderLayer<T>& layer(std::size_t i) { return *layers.at(i); }
  std::vector<Tensor<T>> self_attention_weights() const;
  std::vector<Tensor<T>> cross_attention_weights() const;

  std::vector<std::unique_ptr<DecoderLayer<T>>> layers;
  std::unique_ptr<LayerNorm<T>> norm;
};

}  // namespace attnlab::nn
