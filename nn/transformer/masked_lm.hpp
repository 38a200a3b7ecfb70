// BERT (Devlin et al. 2018), small: an encoder-only model pretrained by masked language modelling.
// The body is an EncoderModel (embeddings, positions, a bidirectional encoder: every token attends
// to every real token on both sides) whose classifier reads the first token, [CLS], for
// fine-tuning; pretraining adds the masked-language-model head on the tokens to predict.
#pragma once

#include <optional>

#include "nn/layers.hpp"
#include "nn/transformer/encoder_model.hpp"

namespace attnlab::nn {

// BERT's prediction head: h (N, d) -> logits (N, V) =
//   LayerNorm(gelu(h W^T + b)) E^T + bias
// a dense layer and a norm, then the token embedding E (V, d) itself as the output projection
// (tied: E gets gradients from both ends). Built on ops that carry their own backward.
template <class T>
class MaskedLMHead : public Module<T> {
 public:
  // `embedding` is the token table the output is tied to; it stays registered by its owner.
  MaskedLMHead(const Tensor<T>& embedding, double eps, Generator& gen);
  Tensor<T> forward(const Tensor<T>& h) const;

  Linear<T> transform;  // "transform.weight", "transform.bias": (d, d)
  LayerNorm<T> norm;    // "norm.weight", "norm.bias"
  Tensor<T> bias;       // "bias": (V), zeros at first

 private:
  Tensor<T> embedding_;
};

// Pretraining: the tokens at `positions` of the encoder's output go through the head. Only they:
// with 15 % of the tokens as targets, the head costs a seventh of what it would on every token.
template <class T>
class MaskedLM : public Module<T> {
 public:
  // config.num_classes and pooling describe the classifier used when fine-tuning (Pooling::First:
  // the [CLS] token the data puts first); pretraining leaves that classifier untouched.
  MaskedLM(const EncoderModelConfig& config, Generator& gen);
  // ids (B, L), allowed_keys (B, L) the real tokens, positions (N) the flat indices b * L + l of the
  // tokens to predict -> logits (N, vocab). ShapeError naming MaskedLM for a position outside
  // [0, B * L) or positions that are not 1-D.
  Tensor<T> forward(const IndexArray& ids, const std::optional<Allowed>& allowed_keys, const IndexArray& positions);

  EncoderModel<T> model;  // "model.embed.weight", "model.encoder.layers.0...", "model.head.weight"
  MaskedLMHead<T> mlm;    // "mlm.transform.weight", "mlm.norm.weight", "mlm.bias"
};

}  // namespace attnlab::nn
