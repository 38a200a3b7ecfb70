// GemmPlan: generated kernels and the BLAS fallback against a naive loop, for both layouts of A,
// strided rows, both float types, k = 0, and shapes past the kernel limit; the fused attention
// op gives the same result with the kernels on and off.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/ops.hpp"
#include "core/runtime/gemm_plan.hpp"

using namespace attnlab;

namespace {

// C = op(A) B by the definition, A stored m x k (or k x m when trans_a) with rows lda apart.
template <class T>
std::vector<T> naive(bool trans_a, std::size_t m, std::size_t n, std::size_t k,
                     const std::vector<T>& a, std::size_t lda, const std::vector<T>& b,
                     std::size_t ldb) {
  std::vector<T> c(m * n, T(0));
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      double acc = 0;
      for (std::size_t p = 0; p < k; ++p)
        acc += double(trans_a ? a[p * lda + i] : a[i * lda + p]) * double(b[p * ldb + j]);
      c[i * n + j] = T(acc);
    }
  return c;
}

template <class T>
void check_plan(bool trans_a, std::size_t m, std::size_t n, std::size_t k, std::size_t pad,
                bool expect_generated) {
  Generator gen(11);
  const std::size_t lda = (trans_a ? m : k) + pad, ldb = n + pad, ldc = n + pad;
  std::vector<T> a((trans_a ? k : m) * lda), b(k * ldb), c(m * ldc, T(7));
  for (auto& x : a) x = T(gen.uniform(-1, 1));
  for (auto& x : b) x = T(gen.uniform(-1, 1));
  const GemmPlan<T> plan(trans_a, m, n, k, lda, ldb, ldc);
  CHECK(plan.generated() == expect_generated);
  plan(a.data(), b.data(), c.data());
  const std::vector<T> want = naive(trans_a, m, n, k, a, lda, b, ldb);
  const double tol = std::is_same_v<T, float> ? 1e-5 * double(k + 1) : 1e-13 * double(k + 1);
  double worst = 0;
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = 0; j < n; ++j)
      worst = std::max(worst, std::abs(double(c[i * ldc + j]) - double(want[i * n + j])));
  CHECK(worst <= tol);
  // Padding between rows is not written.
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t j = n; j < ldc; ++j) CHECK(c[i * ldc + j] == T(7));
}

}  // namespace

TEST_CASE_TEMPLATE("a planned product equals the definition", T, float, double) {
  for (bool trans_a : {false, true})
    for (std::size_t pad : {std::size_t(0), std::size_t(5)}) {
      check_plan<T>(trans_a, 17, 17, 16, pad, true);
      check_plan<T>(trans_a, 50, 16, 50, pad, true);
      check_plan<T>(trans_a, 3, 1, 7, pad, true);
      check_plan<T>(trans_a, 0, 4, 3, pad, false);  // nothing to write
      check_plan<T>(trans_a, 4, 3, 0, pad, false);  // an empty sum: C = 0
      check_plan<T>(trans_a, 128, 128, 64, pad, false);  // past the limit: BLAS, threaded
    }
}

TEST_CASE_TEMPLATE("switched off, every plan goes to BLAS with the same result", T, float, double) {
  set_small_gemm(false);
  check_plan<T>(false, 17, 17, 16, 3, false);
  check_plan<T>(true, 17, 17, 16, 3, false);
  set_small_gemm(true);
}

TEST_CASE("attention agrees with itself with generated kernels on and off") {
  Generator gen(5);
  const Tensor<double> qkv = Tensor<double>::rand({3, 9, 3 * 2 * 8}, gen, -1, 1, true);
  const Array<double> up = random_uniform<double>({3, 9, 16}, gen, -1, 1);
  auto run = [&](bool generated) {
    set_small_gemm(generated);
    qkv.zero_grad();
    AttentionOptions<double> opt;
    opt.causal = true;
    const Tensor<double> out = multi_head_self_attention(qkv, 2, opt).output;
    out.backward(up);
    set_small_gemm(true);
    return std::make_pair(Array<double>(out.value()), Array<double>(qkv.grad()));
  };
  const auto [out_on, grad_on] = run(true);
  const auto [out_off, grad_off] = run(false);
  CHECK(xt::amax(xt::abs(out_on - out_off))() < 1e-13);
  CHECK(xt::amax(xt::abs(grad_on - grad_off))() < 1e-13);
}
