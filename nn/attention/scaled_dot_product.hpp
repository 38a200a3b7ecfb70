// ScaledDotProductAttention: a module around the fused core op, adding the key-mask contract of
// the other attention modules and attention dropout driven by the module's training flag.
#pragma once

#include <optional>

#include "core/ops.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// q (B, Lq, d), k (B, Lk, d), v (B, Lk, dv) (any equal leading dims: (..., L, d));
// key_mask (B, Lk), true = a real key (leading dims of k, then Lk).
// Returns output (B, Lq, dv) and weights (B, Lq, Lk) (softmax before dropout).
template <class T>
class ScaledDotProductAttention : public Module<T> {
 public:
  ScaledDotProductAttention(double dropout, Generator& gen);
  explicit ScaledDotProductAttention(double dropout = 0.0, std::uint64_t seed = 0);
  AttentionResult<T> forward(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v,
                             const std::optional<Mask>& key_mask = std::nullopt,
                             bool causal = false);
  double dropout() const { return p_; }

 private:
  double p_;
  Generator gen_;
};

}  // namespace attnlab::nn
