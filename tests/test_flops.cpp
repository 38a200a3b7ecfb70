// The floating-point work of matrix products is counted once per product, 2 m n k each, on every
// path a product can take (BLAS, split into parts on the pool, a generated kernel, the plain loops
// of a one-row product), at any thread count.
#include <doctest/doctest.h>

#include <vector>

#include "core/ops.hpp"
#include "core/ops/attention.hpp"
#include "core/runtime/blas.hpp"
#include "core/runtime/flops.hpp"
#include "core/runtime/gemm_plan.hpp"
#include "core/runtime/parallel.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

// The operations counted while f runs.
template <class F>
std::uint64_t counted(F&& f) {
  const std::uint64_t before = flops_counted();
  f();
  return flops_counted() - before;
}

std::uint64_t product(std::uint64_t m, std::uint64_t n, std::uint64_t k) { return 2 * m * n * k; }

Tensor<float> floats(const Shape& shape, std::uint64_t seed) {
  return Tensor<float>(Array<float>(xt::cast<float>(rand_array(shape, seed))), true);
}

}  // namespace

TEST_CASE("gemm counts 2 m n k once, whichever path the product takes") {
  for (int threads : {1, 2}) {
    set_threads(threads);
    for (auto [m, n, k] : {std::array<std::size_t, 3>{1, 40, 30},   // one row: plain loops
                           std::array<std::size_t, 3>{7, 5, 1},      // rank one: plain loops
                           std::array<std::size_t, 3>{33, 17, 9},    // one BLAS call
                           std::array<std::size_t, 3>{256, 256, 128}}) {  // in parts on the pool
      std::vector<float> a(m * k, 0.5f), b(k * n, 0.25f), c(m * n);
      CAPTURE(threads);
      CAPTURE(m);
      CHECK(counted([&] { gemm<float>(false, false, m, n, k, 1.0f, a.data(), k, b.data(), n, 0.0f, c.data(), n); }) ==
            product(m, n, k));
    }
    // Nothing to compute, nothing counted.
    std::vector<float> none(1);
    CHECK(counted([&] { gemm<float>(false, false, 0, 4, 4, 1.0f, none.data(), 4, none.data(), 4, 0.0f, none.data(), 4); }) == 0);
  }
  set_threads(1);
}

TEST_CASE("a planned product counts once, by its kernel or by BLAS") {
  std::vector<double> a(17 * 16, 1.0), b(16 * 17, 2.0), c(17 * 17);
  const GemmPlan<double> small(false, 17, 17, 16, 16, 17, 17);  // a generated kernel when enabled
  CHECK(counted([&] { small(a.data(), b.data(), c.data()); }) == product(17, 17, 16));
  const GemmPlan<double> by_blas(false, 17, 17, 16, 16, 17, 17, false, /*limit=*/0);
  REQUIRE_FALSE(by_blas.generated());
  CHECK(counted([&] { by_blas(a.data(), b.data(), c.data()); }) == product(17, 17, 16));
}

TEST_CASE("a matmul's backward counts twice its forward; attention counts its two products per head") {
  Tensor<float> x = floats({2, 8, 6}, 1), w = floats({6, 5}, 2);
  Tensor<float> y;
  CHECK(counted([&] { y = matmul(x, w); }) == 2 * product(8, 5, 6));
  CHECK(counted([&] { sum(y).backward(); }) == 2 * 2 * product(8, 5, 6));

  // B = 2, h = 3, Lq = 4, Lk = 8, d = 5, dv = 6: S = Q K^T and O = P V in every head. (Lk a
  // multiple of 8: the op pads keys to whole vectors and counts the padded products it runs.)
  for (int threads : {1, 2}) {
    set_threads(threads);
    Tensor<float> q = floats({2, 3, 4, 5}, 3), k = floats({2, 3, 8, 5}, 4), v = floats({2, 3, 8, 6}, 5);
    Tensor<float> out;
    const std::uint64_t forward = 2 * 3 * (product(4, 8, 5) + product(4, 6, 8));
    CHECK(counted([&] { out = scaled_dot_product_attention(q, k, v).output; }) == forward);
    // Backward: dP = dO V^T, dV = P^T dO, dQ = dS K, dK = dS^T Q: twice the forward.
    CHECK(counted([&] { sum(out).backward(); }) == 2 * forward);
  }
  set_threads(1);
}
