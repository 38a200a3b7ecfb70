// Where a model puts position: on the embeddings, or inside every attention call.
#pragma once

#include <memory>

#include "nn/positional/positional.hpp"
#include "nn/transformer/layers.hpp"

namespace attnlab::nn {

// The positional method of a model, in one place: what it adds to the embeddings (sinusoidal,
// learned) and what it puts into every attention call (relative bias, ALiBi bias, RoPE hook,
// Shaw's query-dependent bias). Children: "learned.weight", "relative.weight" or
// "shaw.key_table" when the method has parameters. shaw_max_distance is Shaw's clipping
// distance K (only Positional::ShawRelative reads it).
template <class T>
class PositionalScheme : public Module<T> {
 public:
  PositionalScheme(Positional method, const LayerConfig& config, std::size_t max_length,
                   Generator& gen, bool bidirectional = true, std::size_t shaw_max_distance = 8);
  // x (B, L, d) at positions offset .. offset + L - 1 -> x plus those absolute positions, if the
  // method has any.
  Tensor<T> embed(const Tensor<T>& x, std::size_t offset = 0) const;
  // Fill options.bias / options.qk_transform / options.query_bias for self-attention of the L queries at positions
  // offset .. offset + L - 1 over the keys at 0 .. offset + L - 1 (offset > 0: generation with a
  // KV cache, whose keys are already transformed).
  void attention(std::size_t length, MultiHeadOptions<T>& options, std::size_t offset = 0) const;
  Positional method() const { return method_; }

 private:
  Positional method_;
  std::size_t heads_;
  std::unique_ptr<SinusoidalPositionalEncoding<T>> sinusoidal_;
  std::unique_ptr<LearnedPositionalEmbedding<T>> learned_;
  std::unique_ptr<RelativePositionBias<T>> relative_;
  std::unique_ptr<RotaryEmbedding<T>> rotary_;
  std::unique_ptr<ShawRelativePosition<T>> shaw_;
};

}  // namespace attnlab::nn
