// An encoder-only model (BERT-like): classification (pooled) or tagging (per token).
#pragma once

#include <optional>
#include <vector>

#include "nn/transformer/scheme.hpp"
#include "nn/transformer/stacks.hpp"

namespace attnlab::nn {

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
  std::size_t shaw_max_distance = 8;  // Shaw's clipping distance K (Positional::ShawRelative only)
  Pooling pooling = Pooling::Mean;
  std::optional<bool> final_norm;   // default: with pre-norm layers
  std::optional<Index> pad_id;
};

template <class T>
class EncoderModel : public Module<T> {
 public:
  EncoderModel(const EncoderModelConfig& config, Generator& gen);
  // ids (B, L), allowed_keys (B, L) the real tokens (Allowed::where(batch.real)) -> logits (B, C)
  // or (B, L, C) (Pooling::None). Mean pooling averages over the real tokens only.
  Tensor<T> forward(const IndexArray& ids, const std::optional<Allowed>& allowed_keys = std::nullopt);
  // The encoder's output (B, L, d) before pooling and head.
  Tensor<T> features(const IndexArray& ids, const std::optional<Allowed>& allowed_keys = std::nullopt);
  // The pooling and the head on the encoder's output h (B, L, d): forward(ids, keys) is
  // classify(features(ids, keys), keys). Apart, the head can train on features computed without
  // the tape (a frozen encoder: lesson 15's linear probe before fine-tuning). ShapeError naming
  // EncoderModel::classify when h is not (B, L, d_model) or the allowed keys are not (B, L).
  Tensor<T> classify(const Tensor<T>& h, const std::optional<Allowed>& allowed_keys = std::nullopt);
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

}  // namespace attnlab::nn
