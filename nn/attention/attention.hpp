// Attention over a score function: every single-head attention of the course is this module with
// another Score (nn/attention/scores.hpp).
//
//   s = score(q, k)                          (B, Lq, Lk)   how well each key matches each query
//   a = masked_softmax(s, allowed keys)      over the keys, per query: weights >= 0 summing to 1
//   o = a v                                  (B, Lq, dv)   the weighted mean of the values
//
// A dot-product score (dot, scaled dot) runs as the fused scaled_dot_product_attention op: the
// same three lines as one node with a hand-derived backward. The shape checks of every family
// live here, once.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/ops.hpp"
#include "nn/attention/scores.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// Keys and values that queries will ask of again and again, with what the score made of the keys
// (Score::read_keys): a Bahdanau decoder asks one query per step of the same annotations, and
// reads them once per sequence instead of once per step. Made by Attention::memory, and asked
// by the same Attention: another one, even of the same kind and sizes, would compare its queries
// with keys read by someone else's weights, so forward refuses it.
template <class T>
struct Memory {
  Tensor<T> keys;                  // (B, Lk, dk), as given
  Tensor<T> read;                  // the score's reading of them: W_k k for additive
  Tensor<T> values;                // (B, Lk, dv)
  std::optional<Allowed> allowed;  // (B, 1, Lk): the same keys exist for every query
  const Score<T>* read_by = nullptr;  // the score of the Attention that made it (an identity only)
};

template <class T>
class Attention : public Module<T> {
 public:
  // dropout: on the attention weights while training (the module's own generator, from seed).
  explicit Attention(std::unique_ptr<Score<T>> score, double dropout = 0.0, std::uint64_t seed = 0);

  // query (B, Lq, dq), or (B, dq) for one decoder step (then the outputs drop the Lq axis:
  // output (B, dv), weights (B, Lk)); keys (B, Lk, dk); values (B, Lk, dv); allowed_keys (B, Lk),
  // the keys that exist (a padded batch: Allowed::where(batch.real)).
  // Returns the output (B, Lq, dv) and the weights (B, Lq, Lk). A key that is not allowed gets
  // weight 0 and gradient 0; a query with no key allowed gets a zero output, never NaN.
  AttentionResult<T> forward(const Tensor<T>& query, const Tensor<T>& keys, const Tensor<T>& values,
                             const std::optional<Allowed>& allowed_keys = std::nullopt) const;
  AttentionResult<T> operator()(const Tensor<T>& query, const Tensor<T>& keys, const Tensor<T>& values,
                                const std::optional<Allowed>& allowed_keys = std::nullopt) const {
    return forward(query, keys, values, allowed_keys);
  }

  // The same in two halves: memory() checks the keys, values and allowed keys and reads the keys
  // once; forward(query, memory) asks it, as often as wanted, with the same results.
  Memory<T> memory(const Tensor<T>& keys, const Tensor<T>& values,
                   const std::optional<Allowed>& allowed_keys = std::nullopt) const;
  AttentionResult<T> forward(const Tensor<T>& query, const Memory<T>& memory) const;

  const Score<T>& score() const { return *score_; }
  double dropout() const { return p_; }
  Generator& generator() const { return gen_; }  // the dropout draws (reseed it to repeat them)

 private:
  std::string who() const { return "Attention (" + score_->name() + ")"; }

  std::unique_ptr<Score<T>> score_;
  double p_;
  mutable Generator gen_;  // dropout draws; forward is logically const
};

}  // namespace attnlab::nn
