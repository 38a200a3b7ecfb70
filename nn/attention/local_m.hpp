// Luong's local attention, monotonic alignment (local-m; Luong, Pham and Manning 2015, section
// 3.2): the window's centre is not predicted but taken from the decoder's own step,
//   p_t = t                                    (clipped to S - 1, S: the example's real length)
// on the bet that source and target run roughly in step. Inside [p_t - D, p_t + D] the weights are
// local-p's, the score's softmax over the window times a Gaussian of sigma = D / 2 around p_t:
//   a_t(s) = softmax_{|s - p_t| <= D}(score(h_t, hbar_s)) exp(-(s - p_t)^2 / (2 sigma^2)).
// (The paper's local-m uses the window alone; we keep the Gaussian so that local-m and local-p
// differ only in where the centre comes from.) Nothing here learns where to look: p_t is a
// constant, the gradient reaches the score, the query, the keys and the values as in local-p.
// The clipping keeps a real key in every window when the output outruns the input.
#pragma once

#include <cstddef>
#include <vector>

#include "nn/attention/local_p.hpp"

namespace attnlab::nn {

// The centres of local-m, (B, Lq): p[b, i] = min(first_step + i, S_b - 1), S_b the number of real
// keys of row b of real (B, Lk). ShapeError naming monotonic_centres for a row with no real key.
template <class T>
Array<T> monotonic_centres(const Allowed& real, std::size_t queries, std::size_t first_step);

// Local-m attention. query (B, Lq, dq): the decoder's states at output steps first_step ..
// first_step + Lq - 1 (teacher forcing: first_step 0), or (B, dq): one step, at first_step;
// keys (B, Lk, dk), values (B, Lk, dv), real (B, Lk) the keys that exist (a real prefix of each
// row). The result has local-p's shapes; positions are the centres. ShapeError naming
// local_m_attention and the shapes at fault, or when half_window is 0.
template <class T>
LocalAttentionResult<T> local_m_attention(const Score<T>& score, const Tensor<T>& query, const Tensor<T>& keys,
                                          const Tensor<T>& values, const Allowed& real, std::size_t half_window,
                                          std::size_t first_step);

}  // namespace attnlab::nn
