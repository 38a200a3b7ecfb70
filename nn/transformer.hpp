// The Transformer (Vaswani et al. 2017) from its blocks:
//
//   EncoderLayer   x -> self-attention -> feed-forward, each wrapped in a residual and a LayerNorm
//   DecoderLayer   y -> masked self-attention -> cross-attention on the encoder's memory -> FF
//   Encoder, Decoder        N layers ("layers.0.self_attn.w_q.weight"), optional final norm "norm"
//   Seq2SeqTransformer      embeddings * sqrt(d) + sinusoidal positions, encoder, decoder, output
//   EncoderModel            encoder-only: classification (pooled) or tagging (per token)
//   CausalLM                decoder-only language model (GPT): causal self-attention blocks
//
// Post-norm (the paper):  x = norm(x + drop(sublayer(x)))
// Pre-norm (GPT-2, ViT):  x = x + drop(sublayer(norm(x)))   -- the residual path stays an identity,
//                         which is why deep pre-norm stacks train without warm-up tricks; they
//                         need a final norm after the last layer.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "nn/attention/multi_head.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"
#include "nn/positional.hpp"

namespace attnlab::nn {

// What every layer of a stack shares.
struct LayerConfig {
  std::size_t d_model = 128;
  std::size_t heads = 8;
  std::size_t d_ff = 512;
  double dropout = 0.1;       // on sublayer outputs, inside the FF and on attention weights
  bool norm_first = false;    // false: post-norm (the paper); true: pre-norm
  Activation activation = Activation::ReLU;
  double eps = 1e-5;          // LayerNorm epsilon
};

// ---------------------------------------------------------------- layers

template <class T>
class EncoderLayer : public Module<T> {
 public:
  EncoderLayer(const LayerConfig& config, Generator& gen);
  // x (B, L, d). options go to the self-attention: key padding mask, causal (decoder-only
  // models), score bias (relative / ALiBi), qk transform (RoPE).
  Tensor<T> forward(const Tensor<T>& x, const MultiHeadOptions<T>& options = {});
  // The self-attention weights (B, h, L, L) of the last forward (not differentiable; for plots).
  const Tensor<T>& attention() const { return attention_; }
  const LayerConfig& config() const { return config_; }

  MultiHeadAttention<T> self_attn;
  FeedForward<T> ff;
  LayerNorm<T> norm1, norm2;
  Dropout<T> dropout1, dropout2;

 private:
  LayerConfig config_;
  Tensor<T> attention_;
};

template <class T>
class DecoderLayer : public Module<T> {
 public:
  DecoderLayer(const LayerConfig& config, Generator& gen);
  // x (B, T, d) the target so far, memory (B, S, d) the encoder's output. self_options is usually
  // causal with the target padding mask; cross_options carries the source padding mask.
  Tensor<T> forward(const Tensor<T>& x, const Tensor<T>& memory,
                    const MultiHeadOptions<T>& self_options,
                    const MultiHeadOptions<T>& cross_options = {});
  const Tensor<T>& self_attention() const { return self_weights_; }    // (B, h, T, T)
  const Tensor<T>& cross_attention() const { return cross_weights_; }  // (B, h, T, S)
  const LayerConfig& config() const { return config_; }

  MultiHeadAttention<T> self_attn, cross_attn;
  FeedForward<T> ff;
  LayerNorm<T> norm1, norm2, norm3;
  Dropout<T> dropout1, dropout2, dropout3;

 private:
  LayerConfig config_;
  Tensor<T> self_weights_, cross_weights_;
};

// ---------------------------------------------------------------- stacks

template <class T>
class Encoder : public Module<T> {
 public:
  Encoder(std::size_t num_layers, const LayerConfig& config, Generator& gen,
          bool final_norm = false);
  // The same options reach every layer (T5 and ALiBi share one bias across layers).
  Tensor<T> forward(const Tensor<T>& x, const MultiHeadOptions<T>& options = {});
  std::size_t size() const { return layers.size(); }
  EncoderLayer<T>& layer(std::size_t i) { return *layers.at(i); }
  // One (B, h, L, L) tensor per layer, from the last forward.
  std::vector<Tensor<T>> attention_weights() const;

  std::vector<std::unique_ptr<EncoderLayer<T>>> layers;
  std::unique_ptr<LayerNorm<T>> norm;  // null without a final norm
};

template <class T>
class Decoder : public Module<T> {
 public:
  Decoder(std::size_t num_layers, const LayerConfig& config, Generator& gen,
          bool final_norm = false);
  // x (B, T, d), memory (B, S, d); target_mask (B, T) and memory_mask (B, S), true = real token.
  Tensor<T> forward(const Tensor<T>& x, const Tensor<T>& memory,
                    const std::optional<Mask>& target_mask = std::nullopt,
                    const std::optional<Mask>& memory_mask = std::nullopt, bool causal = true);
  std::size_t size() const { return layers.size(); }
  DecoderLayer<T>& layer(std::size_t i) { return *layers.at(i); }
  std::vector<Tensor<T>> self_attention_weights() const;
  std::vector<Tensor<T>> cross_attention_weights() const;

  std::vector<std::unique_ptr<DecoderLayer<T>>> layers;
  std::unique_ptr<LayerNorm<T>> norm;
};

// ---------------------------------------------------------------- positions inside a model

// The positional method of a model, in one place: what it adds to the embeddings (sinusoidal,
// learned) and what it puts into every attention call (relative bias, ALiBi bias, RoPE hook).
// Children: "learned.weight" or "relative.weight" when the method has parameters.
template <class T>
class PositionalScheme : public Module<T> {
 public:
  PositionalScheme(Positional method, const LayerConfig& config, std::size_t max_length,
                   Generator& gen, bool bidirectional = true);
  // x (B, L, d) -> x plus the absolute positions, if the method has any.
  Tensor<T> embed(const Tensor<T>& x) const;
  // Fill options.bias / options.qk_transform for self-attention over L positions.
  void attention(std::size_t length, MultiHeadOptions<T>& options) const;
  Positional method() const { return method_; }

 private:
  Positional method_;
  std::size_t heads_;
  std::unique_ptr<SinusoidalPositionalEncoding<T>> sinusoidal_;
  std::unique_ptr<LearnedPositionalEmbedding<T>> learned_;
  std::unique_ptr<RelativePositionBias<T>> relative_;
  std::unique_ptr<RotaryEmbedding<T>> rotary_;
};

// ---------------------------------------------------------------- models

struct Seq2SeqConfig {
  std::size_t src_vocab = 1000, tgt_vocab = 1000;
  std::size_t encoder_layers = 3, decoder_layers = 3;
  LayerConfig layer;
  std::optional<bool> final_norm;   // default: with pre-norm layers (they need one), not post-norm
  bool tie_output = false;          // output projection weight = target embedding weight
  std::optional<Index> pad_id;      // padding row of both embeddings
};

// Embeddings are initialized N(0, 1/d) and multiplied by sqrt(d) (as fairseq): unit-scale token
// vectors, comparable to the sinusoidal table, and a sensible scale for a tied output projection.
template <class T>
class Seq2SeqTransformer : public Module<T> {
 public:
  Seq2SeqTransformer(const Seq2SeqConfig& config, Generator& gen);
  // src (B, S) ids, src_mask (B, S) true = real token -> memory (B, S, d).
  Tensor<T> encode(const IndexArray& src, const std::optional<Mask>& src_mask = std::nullopt);
  // tgt (B, T) ids (the decoder input, shifted right) -> logits (B, T, tgt_vocab).
  Tensor<T> decode(const IndexArray& tgt, const Tensor<T>& memory,
                   const std::optional<Mask>& src_mask = std::nullopt,
                   const std::optional<Mask>& tgt_mask = std::nullopt);
  Tensor<T> forward(const IndexArray& src, const IndexArray& tgt,
                    const std::optional<Mask>& src_mask = std::nullopt,
                    const std::optional<Mask>& tgt_mask = std::nullopt);
  const Seq2SeqConfig& config() const { return config_; }

  Embedding<T> src_embed, tgt_embed;
  SinusoidalPositionalEncoding<T> positions;
  Dropout<T> src_dropout, tgt_dropout;
  Encoder<T> encoder;
  Decoder<T> decoder;
  std::unique_ptr<Linear<T>> output;  // "output.weight", "output.bias" when untied
  Tensor<T> output_bias;              // "output_bias" when tied (the weight is tgt_embed.weight)

 private:
  Tensor<T> embed(const Embedding<T>& table, Dropout<T>& drop, const IndexArray& ids);
  Seq2SeqConfig config_;
};

enum class Pooling {
  None,   // per-token logits (B, L, C): tagging
  Mean,   // mean over the real tokens -> (B, C): classification
  First,  // the first token's vector (a [CLS] token the data puts first) -> (B, C)
};

struct EncoderModelConfig {
  std::size_t vocab = 100, num_classes = 2, num_layers = 2;
  std::size_t max_length = 512;     // only the learned table needs it
  LayerConfig layer;
  Positional positional = Positional::Sinusoidal;
  Pooling pooling = Pooling::Mean;
  std::optional<bool> final_norm;   // default: with pre-norm layers
  std::optional<Index> pad_id;
};

template <class T>
class EncoderModel : public Module<T> {
 public:
  EncoderModel(const EncoderModelConfig& config, Generator& gen);
  // ids (B, L), mask (B, L) true = real token -> logits (B, C) or (B, L, C) (Pooling::None).
  Tensor<T> forward(const IndexArray& ids, const std::optional<Mask>& mask = std::nullopt);
  // The encoder's output (B, L, d) before pooling and head.
  Tensor<T> features(const IndexArray& ids, const std::optional<Mask>& mask = std::nullopt);
  std::vector<Tensor<T>> attention_weights() const { return encoder.attention_weights(); }
  const EncoderModelConfig& config() const { return config_; }

  Embedding<T> embed;
  PositionalScheme<T> positional;
  Dropout<T> dropout;
  Encoder<T> encoder;
  Linear<T> head;

 private:
  EncoderModelConfig config_;
};

struct CausalLMConfig {
  std::size_t vocab = 100, num_layers = 2;
  std::size_t max_length = 512;
  LayerConfig layer{128, 8, 512, 0.1, /*norm_first=*/true, Activation::GELU, 1e-5};
  Positional positional = Positional::Learned;
  bool tie_output = true;
};

// GPT: token embedding + positions, pre-norm causal self-attention blocks (an Encoder run with
// causal = true: a decoder-only model has no cross-attention), final norm, output projection.
template <class T>
class CausalLM : public Module<T> {
 public:
  CausalLM(const CausalLMConfig& config, Generator& gen);
  // ids (B, L) -> logits (B, L, vocab); position t sees tokens 0..t only.
  Tensor<T> forward(const IndexArray& ids, const std::optional<Mask>& mask = std::nullopt);
  std::vector<Tensor<T>> attention_weights() const { return blocks.attention_weights(); }
  const CausalLMConfig& config() const { return config_; }

  Embedding<T> embed;
  PositionalScheme<T> positional;
  Dropout<T> dropout;
  Encoder<T> blocks;  // with its final norm
  std::unique_ptr<Linear<T>> output;  // "output.weight", "output.bias" when untied
  Tensor<T> output_bias;              // "output_bias" when tied (the weight is embed.weight)

 private:
  CausalLMConfig config_;
};

}  // namespace attnlab::nn
