// Exact attention without the n x n matrix: the tiling and online softmax of FlashAttention
// (Dao et al. 2022), on the CPU, and sliding-window (local) attention on the same kernel.
//
// scaled_dot_product_attention stores the weights P (Lq x Lk per block) for its backward, so its
// memory grows like n^2. tiled_attention computes the same output block by block, keeping per
// query row only a running max, a running sum and the output so far; the backward recomputes each
// block of P from the saved row statistic log-sum-exp. Memory: O(n d). The result equals
// scaled_dot_product_attention to rounding, in the output and in every gradient.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "core/allowed.hpp"
#include "core/ops/attention.hpp"
#include "core/tensor.hpp"

namespace attnlab {

// allowed, causal and scale as for scaled_dot_product_attention (AttentionScoreOptions), and the tiles.
template <class T>
struct TiledAttentionOptions : AttentionScoreOptions {
  // Rows of Q and of K per tile; 0: chosen from d so that each tile product fits a generated
  // kernel (64 queries, 64 keys at d <= 32, 32 keys at d = 64).
  std::size_t block_q = 0, block_k = 0;
};

// Q (..., Lq, d), K (..., Lk, d), V (..., Lk, dv), the same leading dims -> (..., Lq, dv).
// A key that is not allowed gets weight exactly 0 and gradient exactly 0; a query with no key
// allowed gets a zero row and zero gradient, never NaN. A tile in which the mask allows nothing is
// skipped (block-sparse attention): a sparse pattern costs the tiles it touches, plus one pass
// over the mask to find them.
template <class T>
Tensor<T> tiled_attention(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v,
                          const TiledAttentionOptions<T>& options = {});

// Sliding-window attention (Longformer's local attention, Beltagy et al. 2020): query i sees the
// keys j with |i - j| <= window (causal: i - window <= j <= i), positions aligned at the start,
// and whatever options.allowed allows among them. Exact softmax attention restricted to a band of
// width 2 window + 1, computed by the tiled kernel, which skips every tile outside the band: time
// O(n window d), memory O(n d).
template <class T>
Tensor<T> local_attention(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v,
                          std::size_t window, const TiledAttentionOptions<T>& options = {});

// A sparse pattern as a description, not a mask (Longformer, BigBird, the Sparse Transformer):
// query i may see key j when
//   |i - j| <= window                      the sliding window (0: the diagonal alone)
//   or i or j is a global position         global tokens see every key and are seen by every query
//   or stride > 0 and |i - j| % stride == 0 the strided pattern, every stride-th position back and forth
// (and causal: only j <= i; and options.allowed, when given, must also allow it). Positions are
// aligned at the start. The global positions are the same in every batch block (global), or one
// list per batch block (global_by_block, B lists for B blocks of (..., Lq, d) flattened; then
// global must be empty): Longformer's global attention on the tokens that ask.
struct SparsePattern {
  long window = 0;
  std::vector<long> global;
  std::vector<std::vector<long>> global_by_block;
  long stride = 0;
};

// Exact softmax attention restricted to the pattern, on the tiled kernel: each tile's entries are
// decided from the description (a window band, O(n) global flags, the stride), the tiles the
// pattern leaves empty are skipped, and no n x n mask is built or kept. Memory O(n d), time
// O(n (2 window + 1 + globals) d) without a stride. The same output and gradients, bit for bit,
// as tiled_attention with the pattern written out as options.allowed. A row that sees nothing
// (Lq > Lk beyond the window, say) is a zero row with zero gradient. ShapeError naming
// sparse_attention and the value at fault for a window or stride below 0, a global position below 0
// or not below min(Lq, Lk), a position given twice, or global_by_block not of B lists (or given
// with global).
template <class T>
Tensor<T> sparse_attention(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, const SparsePattern& pattern,
                           const TiledAttentionOptions<T>& options = {});

}  // namespace attnlab
