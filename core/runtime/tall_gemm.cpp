#include "core/runtime/tall_gemm.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/runtime/blas.hpp"
#include "core/runtime/gemm_plan.hpp"
#include "core/runtime/panel_gemm.hpp"
#include "core/runtime/parallel.hpp"

namespace attnlab {

namespace {

// The fewest rows a block may have. libxsmm generates code for the CPU it runs on. With AVX-512
// blocks of 8 and 16 rows beat OpenBLAS (the README's table: 1.6 to 2.1 times at one thread).
// With AVX2 only they lose to it: measured in bench_core section d on a two-core AVX2 EPYC, 1
// thread, generated against OpenBLAS: ViT qkv (64 -> 192, blocks of 16 rows) 70.6 against 78.4
// GFLOP/s, feed-forward in (64 -> 256, 8 rows) 70.8 against 79.2; while blocks of 32 rows
// (64 -> 64) won, 83.5 against 71.3. So without AVX-512 a block needs 32 rows.
std::size_t min_block_rows() { return cpu_has_avx512() ? 8 : 32; }

// The m n k below which a block's product gets a kernel. libxsmm generates code for the widest
// vectors the CPU has; OpenBLAS runs the kernels of the CPU it recognizes (blas_runs_avx512).
// Where the CPU has AVX-512 and OpenBLAS does not use it, the kernels win at every panel of a
// Linear layer: on a two-core Zen 5 (bench_core d, one thread, OpenBLAS on its Haswell kernels),
// blocks of 64 rows ran 128 -> 512 at 145 GFLOP/s against 83 and 512 -> 512 at 134 against 97
// (2 threads: 191 against 134, 199 against 166). With OpenBLAS on its own AVX-512 kernels
// (OPENBLAS_CORETYPE=SkylakeX, same machine) it won 512 -> 512, 169 against 125, and tied
// 128 -> 512, 141 against 142: there the kernels keep to panels below small_gemm_limit / 8.
std::size_t kernel_limit() {
  return cpu_has_avx512() && !blas_runs_avx512() ? block_gemm_limit : small_gemm_limit;
}

// Rows per block: the largest power of two up to 64 whose product with the panel still gets a
// kernel; 0 when even min_block_rows() rows do not (BLAS then).
std::size_t rows_per_block(std::size_t panel) {
  if (!small_gemm_enabled() || panel == 0) return 0;
  for (std::size_t rows = 64; rows >= min_block_rows(); rows /= 2)
    if (rows * panel < kernel_limit()) return rows;
  return 0;
}

// Blocks per parallel chunk: about 2^16 multiply-adds, worth a thread's wake-up.
std::size_t grain(std::size_t block_work) { return grain_for(block_work, std::size_t(1) << 16); }

// Work a thread must get before a product with too few rows for a block each is cut finer: a
// decoder step's products (64 rows, 64 or 192 -> 192, Bahdanau's GRU cell) fill one block of 64
// rows, so the second thread sat idle through every step of the recurrence.
constexpr std::size_t kSplitBlockWork = std::size_t(1) << 18;

// Rows per block for m rows: as rows_per_block, halved while there are fewer blocks than threads
// and a half block still has kSplitBlockWork multiply-adds and min_block_rows() rows. The kernels
// sum each entry of C over k in the same order whatever the block's height (libxsmm's register
// tiles run along the rows and columns, never along k), so the bits do not change with the cut;
// tests/test_gemm_plan.cpp checks them at one, two and three threads.
std::size_t rows_for(std::size_t m, std::size_t panel) {
  std::size_t rows = rows_per_block(panel);
  while (rows / 2 >= min_block_rows() && (m + rows - 1) / rows < static_cast<std::size_t>(threads()) &&
         rows / 2 * panel >= kSplitBlockWork)
    rows /= 2;
  return rows;
}

}  // namespace

bool tall_gemm_generated(std::size_t n, std::size_t k) {
  return tiles_win(std::numeric_limits<std::size_t>::max(), n, k) || rows_per_block(n * k) != 0;
}

template <class T>
void gemm_tall(std::size_t m, std::size_t n, std::size_t k, const T* a, const T* b, T* c, bool accumulate,
               const T* bias) {
  if (m == 0 || n == 0) return;
  if (tiles_win(m, n, k)) return gemm_panels(m, n, k, a, b, /*b_transposed=*/false, c, accumulate, bias);
  accumulate = accumulate || bias;  // the products go on top of the bias
  const std::size_t rows = rows_for(m, n * k);
  if (rows == 0 || k == 0) {
    if (bias) set_rows(c, m, n, n, bias);
    GemmPlan<T>(false, m, n, k, k, n, n, accumulate)(a, b, c);  // BLAS, or C = 0 for k = 0
    return;
  }
  const GemmPlan<T> block(false, rows, n, k, k, n, n, accumulate, kernel_limit());
  const std::size_t full = m / rows, rest = m % rows;
  const GemmPlan<T> last(false, rest, n, k, k, n, n, accumulate, kernel_limit());
  parallel_for(full + (rest ? 1 : 0), grain(rows * n * k), [&](std::size_t first, std::size_t end) {
    for (std::size_t i = first; i < end; ++i) {
      if (bias) set_rows(c + i * rows * n, i < full ? rows : rest, n, n, bias);
      (i < full ? block : last)(a + i * rows * k, b, c + i * rows * n);
    }
  });
}

template <class T>
void gemm_tall_weight(std::size_t m, std::size_t n, std::size_t k, const T* a, const T* w, T* c, bool accumulate,
                      const T* bias) {
  if (m == 0 || n == 0) return;
  if (tiles_win(m, n, k)) return gemm_panels(m, n, k, a, w, /*b_transposed=*/true, c, accumulate, bias);
  // Row blocks take B as stored, so W^T (k x n) is copied once: k n entries against m k n
  // multiply-adds.
  std::vector<T> wt(k * n);
  for (std::size_t o = 0; o < n; ++o)
    for (std::size_t i = 0; i < k; ++i) wt[i * n + o] = w[o * k + i];
  gemm_tall(m, n, k, a, wt.data(), c, accumulate, bias);
}

template <class T>
void gemm_tall_transposed(std::size_t m, std::size_t n, std::size_t r, const T* a, const T* b, T* c) {
  if (m == 0 || n == 0) return;
  if (transposed_tiles_win(m, n)) return gemm_panels_transposed(m, n, r, a, b, c);
  const std::size_t rows = rows_per_block(m * n);
  if (rows == 0 || r == 0) {
    GemmPlan<T>(true, m, n, r, m, n, n)(a, b, c);
    return;
  }
  // Slabs of 512 rows: a partial sum costs m n adds per 512 m n multiply-adds.
  constexpr std::size_t slab_rows = 512;
  const std::size_t slabs = (r + slab_rows - 1) / slab_rows;
  if (slabs == 1 && threads() > 1 && m * n * r >= 2 * kSplitBlockWork) {
    // One slab (a decoder step's weight gradient sums 64 rows): the rows of C are cut instead,
    // each part the same kernels' sums over the same blocks of r, so the same bits.
    parallel_for(m, grain_for(n * r, kSplitBlockWork), [&](std::size_t lo, std::size_t hi) {
      std::fill(c + lo * n, c + hi * n, T(0));
      const GemmPlan<T> part(true, hi - lo, n, rows, m, n, n, /*accumulate=*/true, kernel_limit());
      std::size_t i = 0;
      for (; i + rows <= r; i += rows) part(a + i * m + lo, b + i * n, c + lo * n);
      if (i < r) GemmPlan<T>(true, hi - lo, n, r - i, m, n, n, true, kernel_limit())(a + i * m + lo, b + i * n, c + lo * n);
    });
    return;
  }
  const GemmPlan<T> block(true, m, n, rows, m, n, n, /*accumulate=*/true, kernel_limit());
  std::vector<T> partial(slabs > 1 ? (slabs - 1) * m * n : 0);
  parallel_for(slabs, grain(slab_rows * m * n), [&](std::size_t first, std::size_t end) {
    for (std::size_t s = first; s < end; ++s) {
      T* sum = s == 0 ? c : partial.data() + (s - 1) * m * n;
      std::fill(sum, sum + m * n, T(0));
      const std::size_t lo = s * slab_rows, hi = std::min(r, lo + slab_rows);
      std::size_t i = lo;
      for (; i + rows <= hi; i += rows) block(a + i * m, b + i * n, sum);
      if (i < hi) GemmPlan<T>(true, m, n, hi - i, m, n, n, true, kernel_limit())(a + i * m, b + i * n, sum);
    }
  });
  for (std::size_t s = 1; s < slabs; ++s) {
    const T* p = partial.data() + (s - 1) * m * n;
    for (std::size_t j = 0; j < m * n; ++j) c[j] += p[j];
  }
}

template void gemm_tall<float>(std::size_t, std::size_t, std::size_t, const float*, const float*, float*, bool,
                               const float*);
template void gemm_tall<double>(std::size_t, std::size_t, std::size_t, const double*, const double*, double*, bool,
                                const double*);
template void gemm_tall_weight<float>(std::size_t, std::size_t, std::size_t, const float*, const float*, float*,
                                      bool, const float*);
template void gemm_tall_weight<double>(std::size_t, std::size_t, std::size_t, const double*, const double*, double*,
                                       bool, const double*);
template void gemm_tall_transposed<float>(std::size_t, std::size_t, std::size_t, const float*, const float*, float*);
template void gemm_tall_transposed<double>(std::size_t, std::size_t, std::size_t, const double*, const double*, double*);

}  // namespace attnlab
