#include "core/runtime/gemm_plan.hpp"

#include <libxsmm.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "core/runtime/blas.hpp"
#include "core/runtime/flops.hpp"

namespace attnlab {

namespace {
std::atomic<bool>& small_gemm_switch() {
  static std::atomic<bool> on = [] {
    const char* v = std::getenv("ATTNLAB_SMALL_GEMM");
    return !(v && std::strcmp(v, "0") == 0);
  }();
  return on;
}
}  // namespace

bool small_gemm_enabled() { return small_gemm_switch().load(); }
void set_small_gemm(bool on) { small_gemm_switch().store(on); }

bool cpu_has_avx512() {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  return avx512;
}

std::size_t block_limit_over_keys(std::size_t n) {
  return cpu_has_avx512() || n < 128 ? block_gemm_limit : 0;
}

namespace {

// libxsmm is column-major. A row-major matrix stored with row stride ld is, read column-major,
// its transpose with leading dimension ld. So row-major C = op(A) B is column-major
// C^T (n x m) = B^T (n x k) op(A)^T (k x m): the kernel's first operand is our B as stored (no
// flag) and its second is our A as stored:
//   trans_a false: A stored m x k reads as A^T (k x m), what the kernel wants: no flag;
//   trans_a true:  A stored k x m reads as A (m x k), so the kernel transposes its second
//                  operand (LIBXSMM_GEMM_FLAG_TRANS_B).
// (A transposed B would be the kernel's first operand transposed, which libxsmm 1.17 does not
// generate.)
template <class T>
void* dispatch(bool trans_a, std::size_t m, std::size_t n, std::size_t k, std::size_t lda,
               std::size_t ldb, std::size_t ldc, bool accumulate) {
  const libxsmm_blasint M = libxsmm_blasint(n), N = libxsmm_blasint(m), K = libxsmm_blasint(k);
  const libxsmm_blasint la = libxsmm_blasint(ldb), lb = libxsmm_blasint(lda),
                        lc = libxsmm_blasint(ldc);
  const int flags = trans_a ? LIBXSMM_GEMM_FLAG_TRANS_B : LIBXSMM_GEMM_FLAG_NONE;
  const T alpha = 1, beta = accumulate ? 1 : 0;
  if constexpr (std::is_same_v<T, float>)
    return reinterpret_cast<void*>(
        libxsmm_smmdispatch(M, N, K, &la, &lb, &lc, &alpha, &beta, &flags, nullptr));
  else
    return reinterpret_cast<void*>(
        libxsmm_dmmdispatch(M, N, K, &la, &lb, &lc, &alpha, &beta, &flags, nullptr));
}

}  // namespace

template <class T>
GemmPlan<T>::GemmPlan(bool trans_a, std::size_t m, std::size_t n, std::size_t k, std::size_t lda,
                      std::size_t ldb, std::size_t ldc, bool accumulate, std::size_t limit)
    : trans_a_(trans_a), accumulate_(accumulate), m_(m), n_(n), k_(k), lda_(lda), ldb_(ldb), ldc_(ldc) {
  if (small_gemm_enabled() && m > 0 && n > 0 && k > 0 && m * n * k < limit)
    kernel_ = dispatch<T>(trans_a, m, n, k, lda, ldb, ldc, accumulate);
}

template <class T>
void GemmPlan<T>::operator()(const T* a, const T* b, T* c) const {
  if (k_ == 0) {  // BLAS would leave C untouched (and rejects the zero strides)
    if (!accumulate_)
      for (std::size_t i = 0; i < m_; ++i) std::fill(c + i * ldc_, c + i * ldc_ + n_, T(0));
    return;
  }
  if (!kernel_) {  // gemm counts the product itself
    gemm<T>(trans_a_, false, m_, n_, k_, T(1), a, lda_, b, ldb_, accumulate_ ? T(1) : T(0), c, ldc_);
    return;
  }
  count_product(m_, n_, k_);
  if constexpr (std::is_same_v<T, float>)
    reinterpret_cast<libxsmm_smmfunction>(kernel_)(b, a, c);
  else
    reinterpret_cast<libxsmm_dmmfunction>(kernel_)(b, a, c);
}

template class GemmPlan<float>;
template class GemmPlan<double>;

}  // namespace attnlab
