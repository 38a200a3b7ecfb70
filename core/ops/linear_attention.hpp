// Linear attention (Katharopoulos et al. 2020, "Transformers are RNNs"): the softmax kernel
// exp(q.k) replaced by a product of feature maps phi(q).phi(k), phi(x) = elu(x) + 1 > 0, so that
// the sum over keys can be taken once for all queries:
//
//   O_i = phi(q_i)^T S / (phi(q_i) . z),   S = sum_j phi(k_j) v_j^T  (d x dv),  z = sum_j phi(k_j)
//
// Time and memory O(n d dv) instead of O(n^2 d). Causal: S and z become running sums over
// j <= i, an RNN with a d x dv state. Not equal to softmax attention: an approximation whose
// price lesson 18 measures.
#pragma once

#include "core/tensor.hpp"

namespace attnlab {

struct LinearAttentionOptions {
  bool causal = false;  // query i sees keys j <= i (then Lq must equal Lk)
  double eps = 1e-6;    // added to every denominator phi(q_i) . z, which is > 0 but may underflow
};

// Q (..., Lq, d), K (..., Lk, d), V (..., Lk, dv), the same leading dims -> (..., Lq, dv).
template <class T>
Tensor<T> linear_attention(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v,
                           const LinearAttentionOptions& options = {});

}  // namespace attnlab
