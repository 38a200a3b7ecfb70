// GEMM on contiguous row-major blocks, the only way attnlab multiplies matrices.
// Transposes are flags, never copies. (Direct CBLAS: this file must not meet xtensor-blas,
// whose bundled headers define the CBLAS enums a second time.)
#pragma once

#include <cstddef>
#include <string>

namespace attnlab {

// C (m x n) = alpha * op(A) * op(B) + beta * C, with op(A) m x k and op(B) k x n.
// lda/ldb/ldc are the row strides of A, B, C as stored (A is m x k, or k x m when trans_a).
template <class T>
void gemm(bool trans_a, bool trans_b, std::size_t m, std::size_t n, std::size_t k, T alpha,
          const T* a, std::size_t lda, const T* b, std::size_t ldb, T beta, T* c, std::size_t ldc);

// Whether OpenBLAS runs AVX-512 kernels. A DYNAMIC_ARCH OpenBLAS (Debian's) picks its kernels
// once, when it loads: those OPENBLAS_CORETYPE names if it is set, else those of the CPU as its
// table knows it. On the development machines (two-core AMD EPYC with AVX-512) 0.3.21 picks its
// Cooperlake (AVX-512) kernels itself, but their environment sets OPENBLAS_CORETYPE=Haswell,
// which halves raw sgemm (122 against 229 GFLOP/s on one thread, bench_race's reference product).
// attnlab leaves the choice to the user; bench_race reports it.
bool blas_runs_avx512();

// The name of the kernels OpenBLAS runs ("Haswell", "Zen", "SkylakeX", "Cooperlake", ...).
std::string openblas_core_name();

// Threads: set_threads in core/runtime/parallel.hpp sets OpenBLAS's and our own.

}  // namespace attnlab
