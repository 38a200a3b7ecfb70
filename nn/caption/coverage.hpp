// The doubly stochastic attention of Show, Attend and Tell (Xu et al. 2015, section 4.2.1).
//
// Each word's weights over the patches sum to 1 (a softmax). The paper asks the other sum to come
// near 1 as well: over a caption, every patch should get about one word's worth of attention in
// total, so that the decoder looks at every part of the image at some point. It adds to the loss
//
//   lambda * sum_i (tau - sum_t alpha_ti)^2      (tau = 1 in the paper)
//
// per image, which pushes weight from patches read by many words to patches read by none.
#pragma once

#include "core/tensor.hpp"

namespace attnlab::nn {

// weights (B, L, N): alpha_t of L steps over N patches; lengths (B): how many of the first steps
// of each row count (a caption's words through <eos>; steps after it are padding and left out).
// y = (1/B) sum_b sum_i (tau - S_bi)^2,  S_bi = sum_{t < len_b} alpha_bti: a scalar.
// Backward: d alpha_bti = -(2/B) (tau - S_bi) dy for t < len_b, 0 for the steps left out.
// ShapeError naming the function for weights that are not 3-d, lengths not (B), or a length
// outside [0, L].
template <class T>
Tensor<T> doubly_stochastic_penalty(const Tensor<T>& weights, const IndexArray& lengths, double tau = 1.0);

}  // namespace attnlab::nn
