#include "core/runtime/blas.hpp"

#include <cblas.h>

#include <algorithm>
#include <string>

#include "core/runtime/flops.hpp"
#include "core/runtime/parallel.hpp"
#include "core/runtime/vmath.hpp"

namespace attnlab {

namespace {

// One row of C (m == 1) or an outer product (k == 1), written as plain loops. These are the
// shapes of a batched product with one query per block (a decoder step's context, (1 x Lk) times
// (Lk x dv), and its two gradients): BLAS pays its per-call setup and packing for 2 Lk dv flops,
// about 1.3 us a call at Lk 25, dv 128, where these loops take a quarter of that.
//   m == 1:  c_j = alpha sum_p a_p op(B)_pj + beta c_j   (a_p = A[0][p], or A[p][0] with trans_a)
//   k == 1:  c_ij = alpha a_i b_j + beta c_ij
// Every inner loop runs along a contiguous row; the sums over p are in a fixed order.
template <class T>
void degenerate_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, T alpha,
                     const T* a, std::size_t lda, const T* b, std::size_t ldb, T beta, T* c,
                     std::size_t ldc) {
  auto put = [alpha, beta](T& out, T value) { out = alpha * value + (beta == T(0) ? T(0) : beta * out); };
  if (k == 1) {
    for (std::size_t i = 0; i < m; ++i) {
      const T ai = ta ? a[i] : a[i * lda];
      T* ci = c + i * ldc;
      for (std::size_t j = 0; j < n; ++j) put(ci[j], ai * (tb ? b[j * ldb] : b[j]));
    }
    return;
  }
  auto a_at = [&](std::size_t p) { return ta ? a[p * lda] : a[p]; };
  if (tb) {  // op(B)_pj = B[j][p]: each c_j is a dot product of two rows
    for (std::size_t j = 0; j < n; ++j) {
      const T* bj = b + j * ldb;
      put(c[j], ta ? vmath::sum_of<T>(k, [&](std::size_t p) { return a[p * lda] * bj[p]; })
                   : vmath::dot(a, bj, k));
    }
    return;
  }
  // c = sum_p a_p B[p]: rows of B added in p order into c (scaled by beta first).
  for (std::size_t j = 0; j < n; ++j) c[j] = beta == T(0) ? T(0) : beta * c[j];
  for (std::size_t p = 0; p < k; ++p) {
    const T s = alpha * a_at(p);
    const T* bp = b + p * ldb;
    for (std::size_t j = 0; j < n; ++j) c[j] += s * bp[j];
  }
}

// Below this many multiply-adds a one-row or rank-one product runs as loops.
constexpr std::size_t kDegenerateLimit = std::size_t(1) << 14;

bool degenerate(std::size_t m, std::size_t n, std::size_t k) {
  return (m == 1 || k == 1) && m * n * k <= kDegenerateLimit;
}

// From this many multiply-adds on (about 50 us of one core) a product is cut into parts on
// attnlab's pool, each part one single-threaded BLAS call: the rows of C, or its columns when C is
// wider than tall. OpenBLAS itself stays on one thread (core/runtime/parallel.cpp says why).
//
// The bits must not depend on the thread count, so the cuts must not either. OpenBLAS's sum for
// an entry of C depends on where the entry falls in the call's register tiles and cache blocks,
// which are counted from the start of each call: cutting a 512 x 512 x 512 float product into
// 2 parts changed the last bit of 3 % of C against one call, and aligning the cuts to the tiles
// (16 x 6) fixed rows but not columns, whose blocking OpenBLAS halves by the call's width. So the
// number of parts is fixed for the process: the CPUs it may run on, at most 8. At every thread
// count the same parts are computed, in parallel or one after another (tests/test_matmul.cpp).
// One thread on a 2-CPU machine pays 1 to 2 % for the extra call (packing B twice).
constexpr std::size_t kSplitWork = std::size_t(1) << 22;

std::size_t product_parts() { return static_cast<std::size_t>(machine_threads()); }

template <class T, class Blas>
void gemm_in_parts(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const T* a,
                   std::size_t lda, const T* b, std::size_t ldb, T* c, std::size_t ldc, Blas&& blas) {
  const std::size_t parts = product_parts();
  if (parts == 1 || m * n * k < kSplitWork) return blas(m, n, a, b, c);
  const bool by_rows = m >= n;
  const std::size_t len = by_rows ? m : n, step = (len + parts - 1) / parts;
  parallel_for(parts, 1, [&](std::size_t first, std::size_t last) {
    for (std::size_t p = first; p < last; ++p) {
      const std::size_t lo = std::min(len, p * step), hi = std::min(len, lo + step);
      if (lo == hi) continue;
      if (by_rows)  // rows lo..hi of op(A): row offsets, or column offsets of A stored k x m
        blas(hi - lo, n, a + (ta ? lo : lo * lda), b, c + lo * ldc);
      else  // columns lo..hi of op(B)
        blas(m, hi - lo, a, b + (tb ? lo * ldb : lo), c + lo);
    }
  }, m * n * k + m);  // the size rule measures each shape of product apart
}

// One BLAS call, the precision chosen by overload.
void blas_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, float alpha, const float* a,
               std::size_t lda, const float* b, std::size_t ldb, float beta, float* c, std::size_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
              beta, c, static_cast<int>(ldc));
}
void blas_gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, double alpha, const double* a,
               std::size_t lda, const double* b, std::size_t ldb, double beta, double* c, std::size_t ldc) {
  cblas_dgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, static_cast<int>(m),
              static_cast<int>(n), static_cast<int>(k), alpha, a, static_cast<int>(lda), b, static_cast<int>(ldb),
              beta, c, static_cast<int>(ldc));
}

}  // namespace

template <class T>
void gemm(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, T alpha, const T* a, std::size_t lda,
          const T* b, std::size_t ldb, T beta, T* c, std::size_t ldc) {
  if (m == 0 || n == 0) return;
  count_product(m, n, k);
  if (degenerate(m, n, k)) return degenerate_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  gemm_in_parts(ta, tb, m, n, k, a, lda, b, ldb, c, ldc,
                [&](std::size_t pm, std::size_t pn, const T* pa, const T* pb, T* pc) {
                  blas_gemm(ta, tb, pm, pn, k, alpha, pa, lda, pb, ldb, beta, pc, ldc);
                });
}

template void gemm<float>(bool, bool, std::size_t, std::size_t, std::size_t, float, const float*, std::size_t,
                          const float*, std::size_t, float, float*, std::size_t);
template void gemm<double>(bool, bool, std::size_t, std::size_t, std::size_t, double, const double*, std::size_t,
                           const double*, std::size_t, double, double*, std::size_t);

std::string openblas_core_name() { return openblas_get_corename(); }

bool blas_runs_avx512() {
  static const bool avx512 = [] {
    const std::string core = openblas_core_name();
    for (const char* name : {"SkylakeX", "Cooperlake", "SapphireRapids"})
      if (core == name) return true;
    return false;
  }();
  return avx512;
}

}  // namespace attnlab
