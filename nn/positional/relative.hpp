// T5 relative position bias: a learned bias per head and distance bucket, added to the scores.
#pragma once

#include <cstddef>
#include <vector>

#include "core/tensor.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// The T5 bucket of a relative distance r = j - i (key minus query). Half the buckets are exact
// small distances, the other half log-spaced up to max_distance; everything farther shares the
// last bucket, which is why the table works for any length. With bidirectional, keys before and
// after the query use separate halves of the buckets.
std::size_t relative_position_bucket(long relative, std::size_t num_buckets,
                                     std::size_t max_distance, bool bidirectional);

// The buckets that some offset of a sequence of `length` reaches and no offset of a sequence of
// `trained_length` does, in increasing order: the rows of a trained table that training on the
// shorter sequences never touched, still as initialized. ShapeError naming unseen_buckets when
// trained_length is 0 or above length.
std::vector<std::size_t> unseen_buckets(std::size_t trained_length, std::size_t length, std::size_t num_buckets,
                                        std::size_t max_distance, bool bidirectional);

// A learned (num_buckets, heads) table "weight", turned into the additive score bias
// (1, heads, Lq, Lk): bias[0, h, i, j] = W[bucket(j - i), h]. Queries sit at positions
// q_offset .. q_offset + Lq - 1, keys at 0 .. Lk - 1. T5 shares one table across layers.
template <class T>
class RelativePositionBias : public Module<T> {
 public:
  RelativePositionBias(std::size_t heads, Generator& gen, std::size_t num_buckets = 32,
                       std::size_t max_distance = 128, bool bidirectional = true);
  Tensor<T> forward(std::size_t lq, std::size_t lk, std::size_t q_offset = 0) const;
  std::size_t heads() const { return heads_; }
  std::size_t num_buckets() const { return buckets_; }
  const Tensor<T>& weight() const { return weight_; }

 private:
  std::size_t heads_, buckets_, max_distance_;
  bool bidirectional_;
  Tensor<T> weight_;  // a handle to the registered parameter
};

// The gather behind RelativePositionBias, as one op: out[0, h, i, j] = table[bucket[i, j], h];
// d table[b, h] = sum over (i, j) with bucket[i, j] = b of d out[0, h, i, j].
template <class T>
Tensor<T> relative_bias_lookup(const Tensor<T>& table, const IndexArray& bucket);

}  // namespace attnlab::nn
