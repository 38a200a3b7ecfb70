// multi_head_attention and multi_head_self_attention read the heads in place from (B, L, h*d)
// projections. They must equal scaled_dot_product_attention on explicitly split heads, merged
// back, in the forward, the weights and every gradient: with masks, a bias, causality, dropout
// (the same draws), in float and double; and they reject bad input by name.
#include <doctest/doctest.h>

#include <xtensor/xbuilder.hpp>

#include "core/ops.hpp"
#include "core/runtime/gemm_plan.hpp"
#include "core/runtime/parallel.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;

namespace {

// (B, L, h*d) -> (B, h, L, d)
template <class T>
Tensor<T> split_heads(const Tensor<T>& x, long h) {
  const Shape s = x.shape();
  return transpose(reshape(x, {long(s[0]), long(s[1]), h, long(s[2]) / h}), 1, 2);
}
// (B, h, L, d) -> (B, L, h*d)
template <class T>
Tensor<T> merge_heads(const Tensor<T>& x) {
  const Shape s = x.shape();
  return reshape(transpose(x, 1, 2), {long(s[0]), long(s[2]), long(s[1] * s[3])});
}

template <class T>
Tensor<T> leaf(const Shape& s, std::uint64_t seed) {
  return Tensor<T>(Array<T>(xt::cast<T>(rand_array(s, seed))), true);
}

template <class T>
double max_diff(const Array<T>& a, const Array<T>& b) {
  REQUIRE(a.shape() == b.shape());
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i)
    m = std::max(m, std::abs(double(a.data()[i]) - double(b.data()[i])));
  return m;
}

enum class Variant { Plain, Masked, Biased, Causal, Dropout };

// Runs both formulations on the same inputs and compares outputs, weights and gradients.
template <class T>
void compare(Variant variant, double tol) {
  const std::size_t B = 2, Lq = 5, Lk = 7, h = 3, dk = 4, dv = 2;
  const Tensor<T> q = leaf<T>({B, Lq, h * dk}, 1), k = leaf<T>({B, Lk, h * dk}, 2),
                  v = leaf<T>({B, Lk, h * dv}, 3);
  const Tensor<T> bias = leaf<T>({h, Lq, Lk}, 4);
  Generator g1(9), g2(9);
  auto options = [&](Generator& g) {
    AttentionOptions<T> o;
    if (variant == Variant::Masked) {
      Mask m = Mask::from_shape({B, 1, 1, Lk});
      for (std::size_t j = 0; j < Lk; ++j) m(0, 0, 0, j) = j < 4, m(1, 0, 0, j) = true;
      o.allowed = Allowed::where(m);
    }
    if (variant == Variant::Biased) o.bias = bias;
    if (variant == Variant::Causal) o.causal = true;
    if (variant == Variant::Dropout) o.dropout = 0.25, o.generator = &g;
    return o;
  };
  const auto fused = multi_head_attention(q, k, v, h, options(g1));
  const auto split = scaled_dot_product_attention(split_heads(q, h), split_heads(k, h),
                                                  split_heads(v, h), options(g2));
  CHECK(max_diff(fused.output.value(), merge_heads(split.output).value()) <= tol);
  CHECK(max_diff(fused.weights.value(), split.weights.value()) <= tol);

  const Array<T> up = xt::cast<T>(rand_array({B, Lq, h * dv}, 5));
  fused.output.backward(up);
  std::vector<Array<T>> first;
  for (const Tensor<T>* t : {&q, &k, &v, &bias})
    if (t->has_grad()) first.push_back(t->grad()), t->zero_grad();
  merge_heads(split.output).backward(up);
  std::size_t i = 0;
  for (const Tensor<T>* t : {&q, &k, &v, &bias})
    if (t->has_grad()) CHECK(max_diff(first.at(i++), t->grad()) <= tol);
  CHECK(i == first.size());
}

}  // namespace

TEST_CASE("multi_head_attention equals split heads + scaled_dot_product_attention + merge") {
  for (Variant v : {Variant::Plain, Variant::Masked, Variant::Biased, Variant::Causal,
                    Variant::Dropout}) {
    CAPTURE(int(v));
    compare<double>(v, 1e-14);
    compare<float>(v, 2e-6);
  }
}

TEST_CASE("multi_head_self_attention equals multi_head_attention on the three column blocks") {
  const std::size_t B = 2, L = 4, h = 2, d = 3, w = h * d;
  const Tensor<double> qkv = leaf<double>({B, L, 3 * w}, 7);
  AttentionOptions<double> o;
  o.causal = true;
  const auto packed = multi_head_self_attention(qkv, h, o);
  const auto parts = split(qkv, {w, w, w}, -1);
  const auto three = multi_head_attention(parts[0], parts[1], parts[2], h, o);
  CHECK(max_diff(packed.output.value(), three.output.value()) <= 1e-15);
  CHECK(max_diff(packed.weights.value(), three.weights.value()) <= 1e-15);
  CHECK(packed.weights.shape() == Shape{B, h, L, L});
  const Array<double> up = rand_array({B, L, w}, 8);
  packed.output.backward(up);
  const Array<double> once = qkv.grad();
  qkv.zero_grad();
  three.output.backward(up);
  CHECK(max_diff(once, qkv.grad()) <= 1e-15);
}

TEST_CASE("multi-head entry points: bad inputs name the op and the shapes") {
  auto t = [](const Shape& s) { return Tensor<double>(xt::zeros<double>(s)); };
  using doctest::Contains;
  CHECK_THROWS_WITH_AS(multi_head_attention(t({2, 3, 6}), t({2, 4, 6}), t({2, 4, 6}), 4),
                       Contains("multi_head_attention: the widths are not divisible by the number "
                                "of heads: Q (2,3,6), K (2,4,6), V (2,4,6), heads 4"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(multi_head_attention(t({2, 3, 6}), t({2, 4, 4}), t({2, 4, 6}), 2),
                       Contains("widths of Q and K differ"), ShapeError);
  CHECK_THROWS_WITH_AS(multi_head_attention(t({2, 3, 6}), t({3, 4, 6}), t({3, 4, 6}), 2),
                       Contains("batch sizes differ"), ShapeError);
  CHECK_THROWS_WITH_AS(multi_head_attention(t({2, 3, 6}), t({2, 4, 6}), t({2, 5, 6}), 2),
                       Contains("Lk of K and V differ"), ShapeError);
  CHECK_THROWS_WITH_AS(multi_head_attention(t({3, 6}), t({4, 6}), t({4, 6}), 2),
                       Contains("must be (B, L, heads * d)"), ShapeError);
  CHECK_THROWS_WITH_AS(multi_head_attention(t({2, 3, 6}), t({2, 4, 6}), t({2, 4, 6}), 0),
                       Contains("not divisible"), ShapeError);
  CHECK_THROWS_WITH_AS(multi_head_self_attention(t({2, 3, 10}), 2),
                       Contains("multi_head_self_attention: the last axis is not 3 * heads * d "
                                "for a whole d: qkv (2,3,10), heads 2"),
                       ShapeError);
  AttentionOptions<double> o;
  o.allowed = Allowed::where(Mask(xt::ones<bool>({2, 3, 1, 4})));
  CHECK_THROWS_WITH_AS(multi_head_attention(t({2, 3, 6}), t({2, 4, 6}), t({2, 4, 6}), 2, o),
                       Contains("allowed entries of shape (2,3,1,4) do not broadcast to the scores "
                                "(2,2,3,4)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(multi_head_self_attention(Tensor<double>(), 2),
                       Contains("qkv is an empty tensor handle"), ShapeError);
}

TEST_CASE("two threads give the same bits as one (blocks run in parallel chunks)") {
  // Tiny blocks, and blocks of 128 x 128 x 32 = 2^19 multiply-adds: past small_gemm_limit, which
  // run in parallel with generated kernels (block_gemm_limit; without AVX-512 the four sums over
  // 128 keys or queries by OpenBLAS, one thread inside each block) or, with kernels off, one after
  // another through BLAS. Both ways agree to float rounding.
  struct Shape { std::size_t B, L, h, d; };
  const bool generated_before = small_gemm_enabled();
  for (const Shape sh : {Shape{4, 6, 4, 2}, Shape{2, 128, 2, 32}}) {
    INFO("L = ", sh.L);
    auto run = [&](int threads, bool generated) {
      set_threads(threads);
      set_small_gemm(generated);
      const Tensor<float> qkv = leaf<float>({sh.B, sh.L, 3 * sh.h * sh.d}, 11);
      Generator g(5);
      AttentionOptions<float> o;
      o.causal = true;
      o.dropout = 0.2;
      o.generator = &g;
      const auto r = multi_head_self_attention(qkv, sh.h, o);
      r.output.backward(xt::cast<float>(rand_array({sh.B, sh.L, sh.h * sh.d}, 12)));
      std::vector<Array<float>> out{r.output.value(), r.weights.value(), qkv.grad()};
      set_threads(1);
      set_small_gemm(generated_before);
      return out;
    };
    const auto one = run(1, true), two = run(2, true), blas = run(2, false);
    for (std::size_t i = 0; i < one.size(); ++i) {
      CHECK(max_diff(one[i], two[i]) == 0.0);
      CHECK(max_diff(one[i], blas[i]) <= 1e-5 * (1.0 + double(xt::amax(xt::abs(one[i]))())));
    }
  }
}
