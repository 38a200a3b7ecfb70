// Products too wide for a kernel over a block of whole rows: the large encoder's 512 -> 512 and
// 512 <-> 2048 layers. There a block of 16 rows times the whole 512 x 512 panel (1 MB) reads the
// panel from beyond the core's L2 for 16 rows of work, and wider panels went to OpenBLAS. Here C
// is cut into tiles of 64 x 64 instead. B's columns are first copied into panels of 64, each
// k x 64 and contiguous, so a tile's kernel reads its panel at unit stride and the panel stays in
// L2 while the blocks of rows go by; each tile is one generated kernel over the whole sum.
//
// Measured on a two-core Zen 5 (AVX-512; OpenBLAS on its Haswell kernels, as the machine's
// environment sets), one thread, best of 7 calls, quiet: (2048 rows,
// 512 -> 512) 237 GFLOP/s in tiles against 183 in blocks of 16 rows and 115 by OpenBLAS;
// (2048, 512 -> 2048) 233 against 122 by OpenBLAS; (2048, 2048 -> 512) 234 against 117. On
// narrower panels (128 -> 512, 64 -> 256) whole-row blocks already ran at 230 to 240, and tiles
// gained a few per cent at most, so they keep the row blocks (tall_gemm.cpp).
#pragma once

#include <cstddef>

namespace attnlab {

// Whether a product with an n x k panel goes to tiles: generated kernels on, the CPU with
// AVX-512 (libxsmm generates for the CPU it runs on; without AVX-512 its kernels lost to OpenBLAS
// on one thread at far smaller panels), and n k at least small_gemm_limit.
bool panel_gemm_applies(std::size_t n, std::size_t k);

// C (m x n) = A (m x k) B (k x n), or C += A B with accumulate; all dense row-major. With
// b_transposed, B is given as its transpose, n x k (a Linear layer's weight W, for C = X W^T), and
// is transposed into the panels as they are copied. Each entry of C is one kernel's sum over k, on
// one thread: the same bits at any thread count.
template <class T>
void gemm_panels(std::size_t m, std::size_t n, std::size_t k, const T* a, const T* b, bool b_transposed, T* c,
                 bool accumulate);

// C (m x n) = A^T B for A (r x m) and B (r x n): a sum over the r rows (a weight gradient,
// dW = dY^T X). A's and B's columns are copied into panels of 64 (r x 64 each); a tile sums its
// rows in slabs of 512, in order, on one thread: the same bits at any thread count.
template <class T>
void gemm_panels_transposed(std::size_t m, std::size_t n, std::size_t r, const T* a, const T* b, T* c);

}  // namespace attnlab
