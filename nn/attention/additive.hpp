// Additive (Bahdanau) attention: score(q, k) = v^T tanh(W_q q + W_k k), then a masked softmax
// over the keys and a weighted sum of the values.
// Parameters (no biases by default): w_q.weight (H, dq), w_k.weight (H, dk), v.weight (1, H);
// H = dq = dk = 64: 4,096 + 4,096 + 64 = 8,256.
#pragma once

#include <optional>

#include "core/ops.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// Inputs (decided):
//   query  (B, Lq, dq), or (B, dq) for a single decoder step (then Lq = 1 is squeezed away:
//          output (B, dv), weights (B, Lk));
//   keys   (B, Lk, dk); values (B, Lk, dv);
//   key_mask (B, Lk), true = a real key.
// Returns output (B, Lq, dv), the context vectors, and weights (B, Lq, Lk).
// Masked keys get zero weight and zero gradient; a query whose keys are all masked gets a zero
// context (never NaN).
template <class T>
class AdditiveAttention : public Module<T> {
 public:
  AdditiveAttention(std::size_t query_size, std::size_t key_size, std::size_t hidden_size,
                    Generator& gen, bool bias = false);
  AttentionResult<T> forward(const Tensor<T>& query, const Tensor<T>& keys, const Tensor<T>& values,
                             const std::optional<Mask>& key_mask = std::nullopt) const;
  // The scores before the softmax, (B, Lq, Lk), for a 3-D query.
  Tensor<T> scores(const Tensor<T>& query, const Tensor<T>& keys) const;

  Linear<T> w_q, w_k, v;
};

}  // namespace attnlab::nn
