// The encoder-decoder Transformer of "Attention Is All You Need".
#pragma once

#include <memory>
#include <optional>

#include "nn/positional/sinusoidal.hpp"
#include "nn/transformer/scheme.hpp"
#include "nn/transformer/stacks.hpp"

namespace attnlab::nn {

struct Seq2SeqConfig {
  std::size_t src_vocab = 1000, tgt_vocab = 1000;
  std::size_t encoder_layers = 3, decoder_layers = 3;
  LayerConfig layer;
  std::optional<bool> final_norm;   // default: with pre-norm layers (they need one), not post-norm
  bool tie_output = false;          // output projection weight = target embedding weight
  std::optional<Index> pad_id;      // padding row of both embeddings
  // Where position enters: Sinusoidal (the paper) adds the table to both embeddings; RelativeBias
  // (T5), Rotary and ALiBi act inside the self-attention of the encoder (both directions) and of
  // the decoder (its own past), and the cross-attention stays without positions, as in T5; None
  // leaves the model blind to order. Learned is refused: it has no entry past its table.
  Positional positional = Positional::Sinusoidal;
};

// Embeddings are initialized N(0, 1/d) and multiplied by sqrt(d) (as fairseq): unit-scale token
// vectors, comparable to the sinusoidal table, and a sensible scale for a tied output projection.
template <class T>
class Seq2SeqTransformer : public Module<T> {
 public:
  Seq2SeqTransformer(const Seq2SeqConfig& config, Generator& gen);
  // src (B, S) ids, src_allowed (B, S) the real source tokens -> memory (B, S, d).
  Tensor<T> encode(const IndexArray& src, const std::optional<Allowed>& src_allowed = std::nullopt);
  // tgt (B, T) ids (the decoder input, shifted right) -> logits (B, T, tgt_vocab).
  Tensor<T> decode(const IndexArray& tgt, const Tensor<T>& memory,
                   const std::optional<Allowed>& src_allowed = std::nullopt,
                   const std::optional<Allowed>& tgt_allowed = std::nullopt);
  Tensor<T> forward(const IndexArray& src, const IndexArray& tgt,
                    const std::optional<Allowed>& src_allowed = std::nullopt,
                    const std::optional<Allowed>& tgt_allowed = std::nullopt);
  const Seq2SeqConfig& config() const { return config_; }

  Embedding<T> src_embed, tgt_embed;
  SinusoidalPositionalEncoding<T> positions;  // used with Positional::Sinusoidal only
  // With any other method, the encoder's ("src_positions.relative.weight" for T5 buckets) and the
  // decoder's ("tgt_positions. ...", causal) positions inside self-attention; null when sinusoidal.
  std::unique_ptr<PositionalScheme<T>> src_positions, tgt_positions;
  Dropout<T> src_dropout, tgt_dropout;
  Encoder<T> encoder;
  Decoder<T> decoder;
  std::unique_ptr<Linear<T>> output;  // "output.weight", "output.bias" when untied
  Tensor<T> output_bias;              // "output_bias" when tied (the weight is tgt_embed.weight)

 private:
  Tensor<T> embed(const Embedding<T>& table, Dropout<T>& drop, const IndexArray& ids);
  Seq2SeqConfig config_;
};

}  // namespace attnlab::nn
