#include "core/runtime/panel_gemm.hpp"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/runtime/gemm_plan.hpp"
#include "core/runtime/parallel.hpp"

namespace attnlab {

namespace {

constexpr std::size_t tile = 64;   // rows and columns of a tile of C, and columns of a panel
constexpr std::size_t slab = 512;  // rows of A and B a transposed tile sums per kernel call

std::size_t blocks_of(std::size_t n) { return (n + tile - 1) / tile; }
std::size_t width_of(std::size_t block, std::size_t n) { return std::min(tile, n - block * tile); }

// The copies live as long as the thread that asked for the product, so a training step does not
// allocate (and fault in) megabytes on every call.
template <class T>
std::vector<T>& scratch(int which) {
  static thread_local std::vector<T> buffers[2];
  return buffers[which];
}

// Columns [j0, j0 + w) of the rows x ld matrix src, as a contiguous rows x w panel.
template <class T>
void copy_columns(const T* src, std::size_t rows, std::size_t ld, std::size_t j0, std::size_t w, T* dst) {
  for (std::size_t t = 0; t < rows; ++t) std::copy(src + t * ld + j0, src + t * ld + j0 + w, dst + t * w);
}

// The same panel of B = W^T, read from W (n x k) as stored: dst[t][c] = W[j0 + c][t]. In blocks
// of 64 of k, so the 64 x 64 block being turned stays in L1.
template <class T>
void copy_transposed(const T* w_rows, std::size_t k, std::size_t j0, std::size_t w, T* dst) {
  for (std::size_t t0 = 0; t0 < k; t0 += tile) {
    const std::size_t t1 = std::min(k, t0 + tile);
    for (std::size_t c = 0; c < w; ++c) {
      const T* src = w_rows + (j0 + c) * k;
      for (std::size_t t = t0; t < t1; ++t) dst[t * w + c] = src[t];
    }
  }
}

// A kernel for every shape a tile can take: generated, whatever its size.
template <class T>
GemmPlan<T> tile_plan(bool trans_a, std::size_t h, std::size_t w, std::size_t k, std::size_t lda,
                      std::size_t ldc, bool accumulate) {
  return GemmPlan<T>(trans_a, h, w, k, lda, /*ldb=*/w, ldc, accumulate, std::numeric_limits<std::size_t>::max());
}

}  // namespace

bool tiles_win(std::size_t m, std::size_t n, std::size_t k) {
  return small_gemm_enabled() && cpu_has_avx512() && m >= 128 && n * k >= (std::size_t(1) << 15);
}

bool transposed_tiles_win(std::size_t m, std::size_t n) {
  return small_gemm_enabled() && cpu_has_avx512() && m * n >= small_gemm_limit;
}

template <class T>
void gemm_panels(std::size_t m, std::size_t n, std::size_t k, const T* a, const T* b, bool b_transposed, T* c,
                 bool accumulate, const T* bias) {
  if (m == 0 || n == 0) return;
  accumulate = accumulate || bias;  // the products go on top of the bias
  const std::size_t row_blocks = blocks_of(m), panels = blocks_of(n);
  std::vector<T>& packed = scratch<T>(0);
  packed.resize(k * n);
  // Panel j holds columns [64 j, 64 j + w) of B: k x w from k * 64 j on.
  parallel_for(panels, 1, [&](std::size_t first, std::size_t end) {
    for (std::size_t j = first; j < end; ++j) {
      T* dst = packed.data() + k * j * tile;
      if (b_transposed)
        copy_transposed(b, k, j * tile, width_of(j, n), dst);
      else
        copy_columns(b, k, n, j * tile, width_of(j, n), dst);
    }
  }, k * n);

  const std::size_t m_rest = m % tile, n_rest = n % tile;
  const GemmPlan<T> full = tile_plan<T>(false, tile, tile, k, k, n, accumulate),
                    short_rows = tile_plan<T>(false, m_rest, tile, k, k, n, accumulate),
                    short_cols = tile_plan<T>(false, tile, n_rest, k, k, n, accumulate),
                    corner = tile_plan<T>(false, m_rest, n_rest, k, k, n, accumulate);
  // Tiles in row-major order: a thread's run of tiles shares its block of A's rows.
  parallel_for(row_blocks * panels, 1, [&](std::size_t first, std::size_t end) {
    for (std::size_t t = first; t < end; ++t) {
      const std::size_t i = t / panels, j = t % panels;
      const bool rows_short = i * tile + tile > m, cols_short = j * tile + tile > n;
      const GemmPlan<T>& plan = rows_short ? (cols_short ? corner : short_rows) : (cols_short ? short_cols : full);
      T* ct = c + i * tile * n + j * tile;
      if (bias) set_rows(ct, width_of(i, m), width_of(j, n), n, bias + j * tile);
      plan(a + i * tile * k, packed.data() + k * j * tile, ct);
    }
  }, m * n * k);
}

template <class T>
void gemm_panels_transposed(std::size_t m, std::size_t n, std::size_t r, const T* a, const T* b, T* c) {
  if (m == 0 || n == 0) return;
  if (r == 0) {
    std::fill(c, c + m * n, T(0));
    return;
  }
  const std::size_t row_blocks = blocks_of(m), panels = blocks_of(n);
  std::vector<T>& a_panels = scratch<T>(0);
  std::vector<T>& b_panels = scratch<T>(1);
  a_panels.resize(r * m);
  b_panels.resize(r * n);
  // A's column block i (r x h) and B's panel j (r x w), each contiguous.
  parallel_for(row_blocks + panels, 1, [&](std::size_t first, std::size_t end) {
    for (std::size_t p = first; p < end; ++p) {
      if (p < row_blocks)
        copy_columns(a, r, m, p * tile, width_of(p, m), a_panels.data() + r * p * tile);
      else
        copy_columns(b, r, n, (p - row_blocks) * tile, width_of(p - row_blocks, n),
                     b_panels.data() + r * (p - row_blocks) * tile);
    }
  }, r * (m + n));

  parallel_for(row_blocks * panels, 1, [&](std::size_t first, std::size_t end) {
    for (std::size_t t = first; t < end; ++t) {
      const std::size_t i = t / panels, j = t % panels, h = width_of(i, m), w = width_of(j, n);
      const T* ap = a_panels.data() + r * i * tile;
      const T* bp = b_panels.data() + r * j * tile;
      T* cp = c + i * tile * n + j * tile;
      for (std::size_t s = 0; s < r; s += slab) {
        const std::size_t len = std::min(slab, r - s);
        // A's panel is stored r x h: as the kernel's op(A) = A^T it is read with rows h apart.
        tile_plan<T>(true, h, w, len, h, n, /*accumulate=*/s > 0)(ap + s * h, bp + s * w, cp);
      }
    }
  }, m * n * r);
}

template void gemm_panels<float>(std::size_t, std::size_t, std::size_t, const float*, const float*, bool, float*, bool,
                                 const float*);
template void gemm_panels<double>(std::size_t, std::size_t, std::size_t, const double*, const double*, bool, double*,
                                  bool, const double*);
template void gemm_panels_transposed<float>(std::size_t, std::size_t, std::size_t, const float*, const float*, float*);
template void gemm_panels_transposed<double>(std::size_t, std::size_t, std::size_t, const double*, const double*,
                                             double*);

}  // namespace attnlab
