// Luong (multiplicative) attention, three scores:
//   dot      q^T k                      (dq == dk; no parameters)
//   general  q^T W k,  W (dq, dk)       (w.weight; H = 64: 4,096)
//   concat   v^T tanh(W [q; k]),  W (H, dq + dk), v (1, H)  (w.weight, v.weight)
// then a masked softmax over the keys and a weighted sum of the values.
#pragma once

#include <memory>
#include <optional>

#include "core/ops.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

enum class LuongScore { Dot, General, Concat };

// Same inputs, outputs and mask contract as AdditiveAttention: query (B, Lq, dq) or (B, dq),
// keys (B, Lk, dk), values (B, Lk, dv), key_mask (B, Lk) true = real.
template <class T>
class LuongAttention : public Module<T> {
 public:
  // hidden_size is used by Concat only.
  LuongAttention(LuongScore score, std::size_t query_size, std::size_t key_size, Generator& gen,
                 std::size_t hidden_size = 0);
  AttentionResult<T> forward(const Tensor<T>& query, const Tensor<T>& keys, const Tensor<T>& values,
                             const std::optional<Mask>& key_mask = std::nullopt) const;
  // The scores before the softmax, (B, Lq, Lk), for a 3-D query.
  Tensor<T> scores(const Tensor<T>& query, const Tensor<T>& keys) const;
  LuongScore score() const { return score_; }

  std::unique_ptr<Linear<T>> w;  // General: Linear(dk -> dq); Concat: Linear(dq + dk -> H)
  std::unique_ptr<Linear<T>> v;  // Concat: Linear(H -> 1)

 private:
  LuongScore score_;
  std::size_t dq_, dk_;
};

}  // namespace attnlab::nn
