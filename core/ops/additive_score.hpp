// The additive score of Bahdanau et al. 2015 as one op with a hand-derived backward:
//
//   s[b, i, j] = sum_h v[h] tanh(pq[b, i, h] + pk[b, j, h])
//
// where pq = W_q q and pk = W_k k are the projections (nn/attention/scores.hpp makes them).
// Written with separate ops it is unsqueeze, unsqueeze, a broadcast add, tanh and a linear map to
// one number, each materializing (B, Lq, Lk, H) once forward and once backward; a decoder with one
// query per step pays that at every step. This op records one node.
#pragma once

#include "core/tensor.hpp"

namespace attnlab {

// pq (B, Lq, H), pk (B, Lk, H), v (H) or (1, H) (nn::Linear(H -> 1) stores it as (1, H))
// -> scores (B, Lq, Lk). The same bits at any thread count.
template <class T>
Tensor<T> additive_score(const Tensor<T>& pq, const Tensor<T>& pk, const Tensor<T>& v);

}  // namespace attnlab
