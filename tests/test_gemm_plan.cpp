// GemmPlan: generated kernels and the BLAS fallback against a naive loop, for both layouts of A,
// strided rows, both float types, k = 0, and shapes past the kernel limit; the fused attention
// op gives the same result with the kernels on and off. The tall products of a Linear layer
// (core/runtime/tall_gemm) against the same loop: row counts that leave a remainder block,
// accumulation, sums over several slabs, the BLAS fallback, and the same bits at 1 and 2 threads.
// The transposed, scaled copies that feed the attention op's products, tiled and at the edges.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "core/ops.hpp"
#include "core/ops/transpose.hpp"
#include "core/runtime/blas.hpp"
#include "core/runtime/gemm_plan.hpp"
#include "core/runtime/panel_gemm.hpp"
#include "core/runtime/parallel.hpp"
#include "core/runtime/tall_gemm.hpp"

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

// Every entry is factor * x, one rounded product, whether the 8 x 8 tiles or the loop wrote it:
// compared bit for bit against the definition, at sizes that leave edge rows, edge columns,
// both, or no tile at all, with the row stride of a packed multi-head operand, and with output rows
// longer than the block (their padding untouched).
TEST_CASE_TEMPLATE("a transposed scaled copy is exact, tiles and edges alike", T, float, double) {
  Generator gen(5);
  for (std::size_t rows : {1, 7, 8, 16, 17, 50, 64})
    for (std::size_t cols : {1, 8, 9, 16, 23, 64})
      for (std::size_t pad : {0, 5, 128}) {
        const std::size_t ld = cols + pad;
        std::vector<T> in(rows * ld);
        for (T& x : in) x = T(gen.uniform() * 2 - 1);
        const T factor = T(0.25) + T(gen.uniform());
        const std::size_t ldo = rows + pad % 7;  // 0, 5 or 2 entries past each output row
        std::vector<T> out(cols * ldo, T(-7));
        detail::transpose_scaled(in.data(), rows, cols, ld, factor, out.data(), ldo);
        std::size_t wrong = 0;
        for (std::size_t c = 0; c < cols; ++c)
          for (std::size_t i = 0; i < ldo; ++i)
            wrong += out[c * ldo + i] != (i < rows ? factor * in[i * ld + c] : T(-7));
        INFO(rows, " x ", cols, ", ld ", ld);
        CHECK(wrong == 0);
      }
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

namespace {

template <class T>
std::vector<T> random_vector(std::size_t n, Generator& gen) {
  std::vector<T> v(n);
  for (auto& x : v) x = T(gen.uniform(-1, 1));
  return v;
}

template <class T>
double worst_difference(const std::vector<T>& got, const std::vector<T>& want) {
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::abs(double(got[i]) - double(want[i])));
  return worst;
}

template <class T>
double tolerance(std::size_t terms) {
  return (std::is_same_v<T, float> ? 1e-5 : 1e-13) * double(terms + 1);
}

}  // namespace

// Where the CPU has AVX-512 and OpenBLAS runs its AVX2 kernels, generated kernels take panels up
// to block_gemm_limit / 8 (tall_gemm.cpp); elsewhere up to small_gemm_limit / 8 at most.
bool large_panels() { return cpu_has_avx512() && !blas_runs_avx512(); }

// With AVX-512, panels of 512 x 512 and wider are cut into tiles of C (panel_gemm.hpp).
bool tiles() { return cpu_has_avx512() && small_gemm_enabled(); }

TEST_CASE_TEMPLATE("a tall product equals the definition, with remainders and accumulation", T, float, double) {
  Generator gen(3);
  struct Shape { std::size_t m, n, k; bool generated; };
  // With AVX-512 the wide panels of 100 and 20 rows are too short for tiles (row blocks, BLAS);
  // the last three are tiles: whole ones, and short rows, columns and corners.
  for (const Shape s : {Shape{2176, 64, 64, true}, Shape{131, 48, 16, true}, Shape{5, 7, 3, true},
                        Shape{100, 600, 600, large_panels() || tiles()}, Shape{20, 2048, 1024, tiles()},
                        Shape{128, 512, 512, tiles()}, Shape{130, 520, 600, tiles()}, Shape{300, 100, 400, tiles()}}) {
    CAPTURE(s.m);
    CHECK(tall_gemm_generated(s.n, s.k) == s.generated);
    const auto a = random_vector<T>(s.m * s.k, gen), b = random_vector<T>(s.k * s.n, gen);
    const std::vector<T> want = naive(false, s.m, s.n, s.k, a, s.k, b, s.n);
    std::vector<T> c(s.m * s.n, T(99));
    gemm_tall(s.m, s.n, s.k, a.data(), b.data(), c.data());
    CHECK(worst_difference(c, want) <= tolerance<T>(s.k));
    // accumulate: C += A B on top of what is there (here the product itself, so 2 A B).
    gemm_tall(s.m, s.n, s.k, a.data(), b.data(), c.data(), /*accumulate=*/true);
    std::vector<T> twice(want);
    for (auto& x : twice) x *= T(2);
    CHECK(worst_difference(c, twice) <= 2 * tolerance<T>(s.k));
    // The weight form: C = A W^T with W = B^T (n x k) as stored, the same product.
    std::vector<T> w(s.n * s.k);
    for (std::size_t i = 0; i < s.k; ++i)
      for (std::size_t j = 0; j < s.n; ++j) w[j * s.k + i] = b[i * s.n + j];
    std::vector<T> cw(s.m * s.n, T(99));
    gemm_tall_weight(s.m, s.n, s.k, a.data(), w.data(), cw.data());
    CHECK(worst_difference(cw, want) <= tolerance<T>(s.k));
    // With a bias: every row starts as the bias, set block by block, and the same sums follow as
    // when C is filled with it first and the products accumulate onto it: the same bits.
    const auto bias = random_vector<T>(s.n, gen);
    std::vector<T> filled(s.m * s.n), biased(s.m * s.n, T(99));
    for (std::size_t r = 0; r < s.m; ++r) std::copy(bias.begin(), bias.end(), filled.begin() + r * s.n);
    gemm_tall_weight(s.m, s.n, s.k, a.data(), w.data(), filled.data(), /*accumulate=*/true);
    gemm_tall_weight(s.m, s.n, s.k, a.data(), w.data(), biased.data(), /*accumulate=*/false, bias.data());
    CHECK(filled == biased);
    std::vector<T> with_bias(want);
    for (std::size_t r = 0; r < s.m; ++r)
      for (std::size_t j = 0; j < s.n; ++j) with_bias[r * s.n + j] += bias[j];
    CHECK(worst_difference(biased, with_bias) <= tolerance<T>(s.k + 1));
  }
}

TEST_CASE_TEMPLATE("a transposed tall product sums every row, over one slab or many", T, float, double) {
  Generator gen(4);
  struct Shape { std::size_t m, n, r; };
  // The last three are tiles with AVX-512, the third summing two whole slabs and a part.
  for (const Shape s : {Shape{64, 64, 2176}, Shape{16, 48, 511}, Shape{16, 48, 1025}, Shape{3, 5, 7},
                        Shape{600, 600, 40}, Shape{512, 512, 512}, Shape{520, 700, 1100}}) {
    CAPTURE(s.r);
    const auto a = random_vector<T>(s.r * s.m, gen), b = random_vector<T>(s.r * s.n, gen);
    const std::vector<T> want = naive(true, s.m, s.n, s.r, a, s.m, b, s.n);
    std::vector<T> c(s.m * s.n, T(99));  // overwritten, not added to
    gemm_tall_transposed(s.m, s.n, s.r, a.data(), b.data(), c.data());
    CHECK(worst_difference(c, want) <= tolerance<T>(s.r));
  }
}

TEST_CASE("tall products: blocks under 32 rows take kernels only with AVX-512") {
  CHECK(tall_gemm_generated(64, 64));  // 64 x 64 panel: blocks of 32 rows
  // 64 x 192: blocks of 16 rows, which lost to OpenBLAS on an AVX2 machine (tall_gemm.cpp)
  CHECK(tall_gemm_generated(192, 64) == cpu_has_avx512());
  CHECK(tall_gemm_generated(256, 64) == cpu_has_avx512());  // 8 rows
  // 512 x 512: 8 rows exceed small_gemm_limit, not block_gemm_limit (blocks of 16 rows)
  CHECK(tall_gemm_generated(512, 512) == (large_panels() || tiles()));
  // not even 8 rows under either limit: BLAS, or tiles with AVX-512
  CHECK(tall_gemm_generated(2048, 1024) == tiles());
  CHECK(tiles_win(2048, 512, 512) == tiles());
  CHECK(tiles_win(4096, 512, 128) == tiles());  // the GPT's feed-forward
  CHECK_FALSE(tiles_win(4096, 128, 128));       // narrower panels keep blocks of whole rows
  CHECK_FALSE(tiles_win(64, 512, 512));         // too few rows to pay for the panels' copy
  CHECK(transposed_tiles_win(512, 512) == tiles());
  CHECK_FALSE(transposed_tiles_win(512, 128));  // row blocks add into the whole of C
}

TEST_CASE("attention blocks: sums over 128 keys or more go to BLAS only without AVX-512") {
  CHECK(block_limit_over_keys(127) == block_gemm_limit);
  const bool avx512 = cpu_has_avx512();
  CHECK(block_limit_over_keys(128) == (avx512 ? block_gemm_limit : 0));
  // Planned with it, P V over 256 keys (d = 64) is a generated kernel only with AVX-512.
  const GemmPlan<float> pv(false, 256, 64, 256, 256, 64, 64, false, block_limit_over_keys(256));
  CHECK(pv.generated() == (avx512 && small_gemm_enabled()));
}

namespace {

// C = A B and dW = A^T dY (a sum over the m rows) for A (m x k), B (k x n) and dY (m x n), at a
// thread count, by generated kernels or by BLAS; the settings are restored after.
std::pair<std::vector<float>, std::vector<float>> tall_products(std::size_t m, std::size_t n, std::size_t k,
                                                                const std::vector<float>& a,
                                                                const std::vector<float>& b,
                                                                const std::vector<float>& dy, int threads,
                                                                bool generated) {
  set_threads(threads);
  set_small_gemm(generated);
  std::vector<float> c(m * n), dw(k * n);
  gemm_tall(m, n, k, a.data(), b.data(), c.data());
  gemm_tall_transposed(k, n, m, a.data(), dy.data(), dw.data());
  set_small_gemm(true);
  set_threads(1);
  return {c, dw};
}

// Both products of random operands: the same bits at two and three threads as at one (row blocks
// and tiles are independent, slab sums are added in slab order, and however the rows are cut the
// kernels sum each entry alike), and within rounding of BLAS.
void check_same_bits_at_any_thread_count(std::size_t m, std::size_t n, std::size_t k, Generator& gen) {
  CAPTURE(m);
  CAPTURE(n);
  CAPTURE(k);
  const auto a = random_vector<float>(m * k, gen), b = random_vector<float>(k * n, gen);
  const auto dy = random_vector<float>(m * n, gen);
  const auto one = tall_products(m, n, k, a, b, dy, 1, true), two = tall_products(m, n, k, a, b, dy, 2, true),
             three = tall_products(m, n, k, a, b, dy, 3, true), blas = tall_products(m, n, k, a, b, dy, 1, false);
  CHECK(one.first == two.first);
  CHECK(one.first == three.first);
  CHECK(one.second == two.second);
  CHECK(one.second == three.second);
  CHECK(worst_difference(one.first, blas.first) <= tolerance<float>(k));
  CHECK(worst_difference(one.second, blas.second) <= tolerance<float>(m));
}

}  // namespace

TEST_CASE("tall products: empty sums, kernels switched off, and the same bits at any thread count") {
  Generator gen(6);
  const std::size_t m = 1000, n = 32, k = 24;
  const auto a = random_vector<float>(m * k, gen), b = random_vector<float>(k * n, gen);
  std::vector<float> zero(m * n, 5.0f);
  gemm_tall<float>(m, n, 0, a.data(), b.data(), zero.data());  // k = 0: C = 0
  CHECK(worst_difference(zero, std::vector<float>(m * n, 0.0f)) == 0.0);
  check_same_bits_at_any_thread_count(m, n, k, gen);
}

// A decoder step's products have too few rows for a block per thread: with more threads the
// blocks get fewer rows and a weight gradient's one slab is cut by the rows of C (tall_gemm.cpp),
// and the kernels' sums must not notice.
TEST_CASE("tall products with few rows: the same bits at one, two and three threads") {
  Generator gen(8);
  check_same_bits_at_any_thread_count(64, 192, 192, gen);
  check_same_bits_at_any_thread_count(64, 192, 64, gen);
  check_same_bits_at_any_thread_count(50, 192, 192, gen);
  check_same_bits_at_any_thread_count(64, 256, 128, gen);
}

TEST_CASE("tiles: the same bits at one, two and three threads, and the same sums as BLAS") {
  Generator gen(7);
  check_same_bits_at_any_thread_count(300, 520, 600, gen);  // short rows, short columns and a short slab
}
