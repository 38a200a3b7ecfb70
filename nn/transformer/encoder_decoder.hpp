// PyTorch's nn.Transformer: an Encoder and a Decoder, each ending in its own LayerNorm, on vectors.
// No embeddings, positions or output projection (in PyTorch too they are the caller's; the
// Seq2SeqTransformer adds them). Names as PyTorch's, so its state_dict loads by name:
//   encoder.layers.0.self_attn.in_proj_weight ... encoder.norm.weight,
//   decoder.layers.0.multihead_attn.out_proj.bias ... decoder.norm.bias
#pragma once

#include <optional>

#include "nn/transformer/stacks.hpp"

namespace attnlab::nn {

struct TransformerConfig {
  std::size_t encoder_layers = 6, decoder_layers = 6;
  LayerConfig layer;
};

template <class T>
class Transformer : public Module<T> {
 public:
  Transformer(const TransformerConfig& config, Generator& gen);
  // src (B, S, d) -> memory (B, S, d); src_allowed (B, S): the real source tokens.
  Tensor<T> encode(const Tensor<T>& src, const std::optional<Allowed>& src_allowed = std::nullopt);
  // tgt (B, T, d) attends to itself (causally by default) and to memory -> (B, T, d).
  Tensor<T> decode(const Tensor<T>& tgt, const Tensor<T>& memory,
                   const std::optional<Allowed>& src_allowed = std::nullopt,
                   const std::optional<Allowed>& tgt_allowed = std::nullopt, bool causal = true);
  // decode(tgt, encode(src)): PyTorch's m(src, tgt, tgt_mask=<causal>,
  // src_key_padding_mask=~src_allowed, tgt_key_padding_mask=~tgt_allowed,
  // memory_key_padding_mask=~src_allowed) with batch_first=True.
  Tensor<T> forward(const Tensor<T>& src, const Tensor<T>& tgt,
                    const std::optional<Allowed>& src_allowed = std::nullopt,
                    const std::optional<Allowed>& tgt_allowed = std::nullopt, bool causal = true);
  const TransformerConfig& config() const { return config_; }

  Encoder<T> encoder;  // with its final norm
  Decoder<T> decoder;  // with its final norm

 private:
  TransformerConfig config_;
};

}  // namespace attnlab::nn
