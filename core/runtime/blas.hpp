// GEMM on contiguous row-major blocks, the only way attnlab multiplies matrices.
// Transposes are flags, never copies. (Direct CBLAS: this file must not meet xtensor-blas,
// whose bundled headers define the CBLAS enums a second time.)
#pragma once

#include <cstddef>

namespace attnlab {

// C (m x n) = alpha * op(A) * op(B) + beta * C, with op(A) m x k and op(B) k x n.
// lda/ldb/ldc are the row strides of A, B, C as stored (A is m x k, or k x m when trans_a).
template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, T alpha,
          const T* a, std::size_t lda, const T* b, std::size_t ldb, T beta, T* c, std::size_t ldc);

// Whether OpenBLAS runs AVX-512 kernels. It picks them from its table of CPUs it knows, not from
// the CPU's flags: Debian 12's OpenBLAS 0.3.21 runs its Haswell (AVX2) kernels on AMD's Zen 4
// and Zen 5 although they have AVX-512 (OPENBLAS_CORETYPE=SkylakeX in the environment forces
// its AVX-512 kernels there).
bool blas_runs_avx512();

// Threads: set_threads in core/runtime/parallel.hpp sets OpenBLAS's and our own.

}  // namespace attnlab
