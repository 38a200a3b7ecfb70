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
// gained a few per cent at most, so they keep the row blocks (tall_gemm.cpp); the rules below say
// where tiles take over.
#pragma once

#include <algorithm>

#include <cstddef>

namespace attnlab {

// Whether C = A B with m rows and an n x k panel goes to tiles: generated kernels on, the CPU with
// AVX-512 (libxsmm generates for the CPU it runs on; without AVX-512 its kernels lost to OpenBLAS
// on one thread at far smaller panels), n k at least 2^15 and at least 128 rows (the panels' copy
// costs k n entries, the product m n k multiply-adds). Measured at the GPT's shapes (4,096 rows,
// one thread, CPU time, best of 7, with other work on the machine): 128 -> 384 241 GFLOP/s in tiles
// against 192 in blocks of 64 rows, 128 -> 512 244 against 217, 512 -> 128 236 against 206,
// 128 -> 256 242 against 220; at 128 -> 128 (2^14) 242 against 239, so it keeps its blocks.
bool tiles_win(std::size_t m, std::size_t n, std::size_t k);

// Whether C = A^T B, an m x n sum over rows, goes to tiles: as above, with m n at least 2^18. Below
// that the row blocks' kernels, which add into the whole of C, won: at the GPT's 512 x 128 over
// 4,096 rows 224 GFLOP/s against 184 in tiles (the copies of A's and B's columns cost r (m + n)
// entries against m n r multiply-adds); at 512 x 512 over 2,048 rows tiles won, 207 against 190.
bool transposed_tiles_win(std::size_t m, std::size_t n);

// C (m x n) = A (m x k) B (k x n), or C += A B with accumulate, or C = bias + A B in every row
// with a bias (n entries; each tile's rows are set to it just before its kernel); all dense
// row-major. With b_transposed, B is given as its transpose, n x k (a Linear layer's weight W,
// for C = X W^T), and is transposed into the panels as they are copied. Each entry of C is one
// kernel's sum over k, on one thread: the same bits at any thread count.
template <class T>
void gemm_panels(std::size_t m, std::size_t n, std::size_t k, const T* a, const T* b, bool b_transposed, T* c,
                 bool accumulate, const T* bias = nullptr);

// `rows` rows of w entries each, ldc apart from c on, set to values[0, w): a bias written into a
// block of C just before a kernel adds the products onto it.
template <class T>
inline void set_rows(T* c, std::size_t rows, std::size_t w, std::size_t ldc, const T* values) {
  for (std::size_t r = 0; r < rows; ++r) std::copy(values, values + w, c + r * ldc);
}

// C (m x n) = A^T B for A (r x m) and B (r x n): a sum over the r rows (a weight gradient,
// dW = dY^T X). A's and B's columns are copied into panels of 64 (r x 64 each); a tile sums its
// rows in slabs of 512, in order, on one thread: the same bits at any thread count.
template <class T>
void gemm_panels_transposed(std::size_t m, std::size_t n, std::size_t r, const T* a, const T* b, T* c);

}  // namespace attnlab
