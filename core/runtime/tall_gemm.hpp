// Products of a tall matrix with a small panel: the shapes of a Linear layer, whose rows are
// every (example, position) of a batch (2,176 for a ViT batch of 128 images of 17 tokens) and
// whose other sides are feature widths (64 to 256). OpenBLAS runs these at about 100 GFLOP/s on
// the development machine; the rows cut into blocks of 8 to 64, each block a product of a fixed
// small shape by a generated kernel (core/runtime/gemm_plan.hpp), run at about 200, and the
// blocks spread over attnlab's threads (bench_core, section d, measures both in one run).
//
// That is with AVX-512. Without it, blocks of 8 and 16 rows lost to OpenBLAS, so there a block
// needs 32 rows (tall_gemm.cpp gives the measurement). With it, panels of 2^15 entries and more
// (128 -> 256 and wider) go to tiles of C instead of blocks of whole rows, and weight gradients of
// 512 x 512 and more (core/runtime/panel_gemm.hpp says where each won). The rest fall back to
// one BLAS call when the panel is too large for a kernel (n k above small_gemm_limit / 8, or / 32
// without AVX-512; block_gemm_limit / 8 where the CPU has AVX-512 and OpenBLAS does not use it) or
// generated kernels are switched off.
#pragma once

#include <cstddef>

namespace attnlab {

// C (m x n) = A (m x k) B (k x n), or C += A B with accumulate; all dense row-major. Blocks of
// rows are independent, so the result has the same bits at any thread count. With a bias (n
// entries), C = bias + A B in every row: each block's rows are set to the bias just before its
// kernel adds the products on top (in the cache, where a pass over all of C beforehand wrote it
// out and read it back: 3 % of a GPT step), the same sums as with C filled first.
template <class T>
void gemm_tall(std::size_t m, std::size_t n, std::size_t k, const T* a, const T* b, T* c,
               bool accumulate = false, const T* bias = nullptr);

// C (m x n) = A W^T, or C += A W^T, or bias + A W^T, for W (n x k) as stored: a Linear layer's
// y = x W^T + b. The kernels take their B as stored, so W^T is copied first (into the panels
// themselves where the panel is wide enough for tiles, core/runtime/panel_gemm.hpp).
template <class T>
void gemm_tall_weight(std::size_t m, std::size_t n, std::size_t k, const T* a, const T* w, T* c,
                      bool accumulate = false, const T* bias = nullptr);

// C (m x n) = A^T B for A (r x m) and B (r x n), a sum over the r rows (a weight gradient,
// dW = dY^T X). The rows are cut into slabs of a fixed size, each slab's sum formed by kernels,
// slabs in parallel, and the slab sums added in slab order: the same bits at any thread count.
template <class T>
void gemm_tall_transposed(std::size_t m, std::size_t n, std::size_t r, const T* a, const T* b, T* c);

// Whether a panel of n k entries goes to generated kernels, tiles or row blocks, given enough rows
// (else to one BLAS call): callers that would copy an operand only to suit the kernels skip the
// copy when it does not.
bool tall_gemm_generated(std::size_t n, std::size_t k);

}  // namespace attnlab
