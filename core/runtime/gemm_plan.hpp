// A product of one fixed small shape, planned once and run on many blocks (attention multiplies
// B x heads pairs of 17 x 17 x 16 or 50 x 50 x 16 matrices per call). For such shapes a kernel
// generated for exactly that shape (libxsmm's JIT) needs no packing and no per-call setup;
// OpenBLAS packs both operands into its panel layout on every call, which at these sizes costs
// more than the arithmetic. Measured on the development machine, one thread, 512 blocks:
// 17 x 17 x 16, OpenBLAS 30 GFLOP/s against 101; 50 x 50 x 16, 56 against 159 (bench_core
// prints the attention op both ways).
//
// Shapes with m n k at or above small_gemm_limit go to BLAS, which threads them itself. A caller
// that runs many independent products in parallel on its own threads (the attention op's blocks)
// may plan with block_gemm_limit instead: there every product runs on one thread, and a generated
// kernel is the better one-thread product well past small_gemm_limit. Measured in bench_core at
// the large encoder's attention, 64 blocks of 256 x 256 x 64 (4.2 M multiply-adds each), 2 threads:
// see the README's speed section.
#pragma once

#include <cstddef>

namespace attnlab {

inline constexpr std::size_t small_gemm_limit = std::size_t(1) << 18;
inline constexpr std::size_t block_gemm_limit = std::size_t(1) << 23;

// Whether the CPU has AVX-512. libxsmm generates code for the CPU it runs on, so this decides
// which products its kernels win (block_limit_over_keys here, the tall products' block sizes in
// tall_gemm.cpp).
bool cpu_has_avx512();

// The limit for a block's product that sums over n keys (or queries): block_gemm_limit, except
// that without AVX-512 a sum over 128 or more goes to BLAS. There libxsmm 1.17's AVX2 kernels
// fall behind OpenBLAS on one thread: the attention's P V and P^T dO at 128 and 256 keys (d = 16
// to 64) ran at 38 to 55 GFLOP/s against 58 to 71; at 64 keys the two were even, at 32 the
// kernels twice as fast. (The sums over the head size, S = Q K^T and dP = dO V^T, keep
// block_gemm_limit: at d = 64 the kernel won, 77 against 66.) With AVX-512 the kernels won the
// large encoder's 256 x 256 x 64 blocks outright (README, speed section).
std::size_t block_limit_over_keys(std::size_t n);

// C (m x n, rows ldc apart) = op(A) B with op(A) = A (m x k, rows lda apart) or, with trans_a,
// A^T for A stored k x m; B is k x n, rows ldb apart; all row-major. C is overwritten, or added
// to with accumulate (C += op(A) B). No alpha and no transposed B: generated kernels have neither
// for row-major operands, so callers fold a scale into a copy they transpose anyway. k = 0 is an
// empty sum.
template <class T>
class GemmPlan {
 public:
  GemmPlan() = default;
  GemmPlan(bool trans_a, std::size_t m, std::size_t n, std::size_t k, std::size_t lda,
           std::size_t ldb, std::size_t ldc, bool accumulate = false,
           std::size_t limit = small_gemm_limit);  // m n k at or above it: BLAS
  void operator()(const T* a, const T* b, T* c) const;
  bool generated() const { return kernel_ != nullptr; }  // false: BLAS does it

 private:
  bool trans_a_ = false, accumulate_ = false;
  std::size_t m_ = 0, n_ = 0, k_ = 0, lda_ = 0, ldb_ = 0, ldc_ = 0;
  void* kernel_ = nullptr;  // libxsmm_smmfunction or libxsmm_dmmfunction
};

// Whether plans made from now on use generated kernels. On unless ATTNLAB_SMALL_GEMM=0 is in
// the environment; set_small_gemm(false) sends every product to BLAS, to compare (bench_core
// does both in one run).
bool small_gemm_enabled();
void set_small_gemm(bool on);

}  // namespace attnlab
