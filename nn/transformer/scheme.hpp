// Where a model puts position: on the embeddings, or inside every attention call.
#pragma once

#include <memory>

#include "nn/positional/positional.hpp"
#include "nn/transformer/layers.hpp"

namespace attnlab::nn {

// The positional method of a model, in one place: what it adds to the embeddings (sinusoidal,
// learned) and what it puts into every attention call (relative bias, ALiBi bias, RoPE hook).
// Children: "learned.weight" or "relative.weight" when the method has parameters.
template <class T>
class PositionalScheme : public Module<T> {
 public:
  PositionalScheme(Positional method, const LayerConfig& config, std::size_t max_length,
                   Generator& gen, bool bidirectional = true);
  // x (B, L, d) at positions offset .. offset + L - 1 -> x plus those absolute positions, if the
  // method has any.
  Tensor<T> embed(const Tensor<T>& x, std::size_t offset = 0) const;
  // Fill options.bias / options.qk_transform for self-attention of the L queries at positions
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
};

}  // namespace attnlab::nn
