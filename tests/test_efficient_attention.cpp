// The attention ops of lessons 17 and 18: tiled_attention and local_attention equal the fused
// scaled_dot_product_attention (with the band as a mask) in the output and in every gradient, to
// rounding, at every tile size, mask and thread count; their memory grows like n, not n^2;
// linear_attention against its definition; the Linformer module against its composition; masks
// give exact zeros; bad inputs name the op.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "core/runtime/allocator.hpp"
#include "core/runtime/parallel.hpp"
#include "nn/attention/linformer.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;
using TD = Tensor<double>;
using TF = Tensor<float>;

namespace {

double max_abs(const Array<double>& a, const Array<double>& b) {
  REQUIRE(a.shape() == b.shape());
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(a.data()[i] - b.data()[i]));
  return m;
}

struct Grads {
  Array<double> out, dq, dk, dv;
};

// Output and the three gradients of `op` for one upstream gradient.
Grads run(const std::function<TD(const TD&, const TD&, const TD&)>& op, const Array<double>& q,
          const Array<double>& k, const Array<double>& v, std::uint64_t seed) {
  TD Q(q, true), K(k, true), V(v, true);
  const TD out = op(Q, K, V);
  out.backward(rand_array(out.shape(), seed));
  return {out.value(), Q.grad(), K.grad(), V.grad()};
}

void check_same(const Grads& a, const Grads& b, double tol) {
  CHECK(max_abs(a.out, b.out) <= tol);
  CHECK(max_abs(a.dq, b.dq) <= tol);
  CHECK(max_abs(a.dk, b.dk) <= tol);
  CHECK(max_abs(a.dv, b.dv) <= tol);
}

// The band of local attention as a mask: |i - j| <= w (causal: 0 <= i - j <= w), (Lq, Lk).
Mask band(std::size_t Lq, std::size_t Lk, std::size_t w, bool causal) {
  Mask m = Mask::from_shape({Lq, Lk});
  for (std::size_t i = 0; i < Lq; ++i)
    for (std::size_t j = 0; j < Lk; ++j)
      m(i, j) = (j <= i ? i - j <= w : !causal && j - i <= w);
  return m;
}

struct Case {
  const char* name;
  Shape q, k, v;
  bool causal = false;
  bool pad = false;          // a padding mask (B, 1, 1, Lk) on a 4-D case
  bool hide_row = false;     // query 1 sees nothing (via the mask)
  std::size_t bq = 0, bk = 0;
};

std::optional<Allowed> mask_of(const Case& c) {
  if (!c.pad && !c.hide_row) return std::nullopt;
  const std::size_t rank = c.q.size(), Lq = c.q[rank - 2], Lk = c.k[rank - 2];
  if (c.pad) {
    Mask m = Mask::from_shape({c.q[0], 1, 1, Lk});
    for (std::size_t b = 0; b < c.q[0]; ++b)
      for (std::size_t j = 0; j < Lk; ++j) m(b, 0, 0, j) = j < Lk - 2 * b;
    return Allowed::where(m);
  }
  Mask m = xt::ones<bool>({Lq, Lk});
  for (std::size_t j = 0; j < Lk; ++j) m(1, j) = false;
  return Allowed::where(m);
}

}  // namespace

TEST_CASE("tiled_attention equals scaled_dot_product_attention: output and gradients, every tile size") {
  const std::vector<Case> cases = {
      {"plain", {2, 13, 8}, {2, 13, 8}, {2, 13, 5}},
      {"Lq != Lk", {2, 7, 4}, {2, 19, 4}, {2, 19, 3}},
      {"causal", {3, 17, 4}, {3, 17, 4}, {3, 17, 4}, true},
      {"causal Lq > Lk", {1, 11, 4}, {1, 6, 4}, {1, 6, 2}, true},
      {"padding", {2, 2, 9, 4}, {2, 2, 9, 4}, {2, 2, 9, 3}, false, true},
      {"causal + padding", {2, 2, 9, 4}, {2, 2, 9, 4}, {2, 2, 9, 3}, true, true},
      {"hidden row", {10, 4}, {12, 4}, {12, 2}, false, false, true},
      {"one long block", {1, 150, 16}, {1, 150, 16}, {1, 150, 16}, true},
  };
  const std::vector<std::pair<std::size_t, std::size_t>> tiles = {{0, 0}, {1, 1}, {3, 2}, {4, 5}, {64, 3}};
  for (const Case& c : cases)
    for (auto [bq, bk] : tiles) {
      CAPTURE(c.name);
      CAPTURE(bq);
      CAPTURE(bk);
      const Array<double> q = rand_array(c.q, 1, -2, 2), k = rand_array(c.k, 2, -2, 2), v = rand_array(c.v, 3);
      const std::optional<Allowed> mask = mask_of(c);
      const Grads want = run(
          [&](const TD& Q, const TD& K, const TD& V) {
            AttentionOptions<double> o;
            o.allowed = mask;
            o.causal = c.causal;
            return scaled_dot_product_attention(Q, K, V, o).output;
          },
          q, k, v, 4);
      const Grads got = run(
          [&](const TD& Q, const TD& K, const TD& V) {
            TiledAttentionOptions<double> o;
            o.allowed = mask;
            o.causal = c.causal;
            o.block_q = bq;
            o.block_k = bk;
            return tiled_attention(Q, K, V, o);
          },
          q, k, v, 4);
      check_same(got, want, 1e-13);
    }
}

TEST_CASE("tiled_attention in float equals the fused op in float, and the double result, to float rounding") {
  const Shape s{2, 300, 64};
  const Array<double> q = rand_array(s, 5, -2, 2), k = rand_array(s, 6, -2, 2), v = rand_array(s, 7);
  for (bool causal : {false, true}) {
    TF Q(xt::cast<float>(q), true), K(xt::cast<float>(k), true), V(xt::cast<float>(v), true);
    TF Q2(xt::cast<float>(q), true), K2(xt::cast<float>(k), true), V2(xt::cast<float>(v), true);
    const Array<float> up = xt::cast<float>(rand_array({2, 300, 64}, 8));
    TiledAttentionOptions<float> to;
    to.causal = causal;
    AttentionOptions<float> fo;
    fo.causal = causal;
    const TF a = tiled_attention(Q, K, V, to), b = scaled_dot_product_attention(Q2, K2, V2, fo).output;
    a.backward(up);
    b.backward(up);
    const Grads d = run(
        [&](const TD& Qd, const TD& Kd, const TD& Vd) {
          TiledAttentionOptions<double> o;
          o.causal = causal;
          return tiled_attention(Qd, Kd, Vd, o);
        },
        q, k, v, 8);
    auto f2d = [](const Array<float>& x) { return Array<double>(xt::cast<double>(x)); };
    CHECK(max_abs(f2d(a.value()), f2d(b.value())) <= 2e-6);
    CHECK(max_abs(f2d(Q.grad()), f2d(Q2.grad())) <= 2e-5);
    CHECK(max_abs(f2d(K.grad()), f2d(K2.grad())) <= 2e-5);
    CHECK(max_abs(f2d(V.grad()), f2d(V2.grad())) <= 2e-5);
    CHECK(max_abs(f2d(a.value()), d.out) <= 2e-6);
    CHECK(max_abs(f2d(Q.grad()), d.dq) <= 2e-5);
  }
}

TEST_CASE("local_attention equals the fused op with the band as a mask") {
  for (bool causal : {false, true})
    for (std::size_t w : {0, 1, 5, 40}) {
      CAPTURE(causal);
      CAPTURE(w);
      const Array<double> q = rand_array({2, 37, 4}, 11, -2, 2), k = rand_array({2, 37, 4}, 12, -2, 2),
                          v = rand_array({2, 37, 3}, 13);
      const Grads want = run(
          [&](const TD& Q, const TD& K, const TD& V) {
            AttentionOptions<double> o;
            o.allowed = Allowed::where(band(37, 37, w, causal));
            return scaled_dot_product_attention(Q, K, V, o).output;
          },
          q, k, v, 14);
      for (std::size_t tile : {0, 4}) {
        const Grads got = run(
            [&](const TD& Q, const TD& K, const TD& V) {
              TiledAttentionOptions<double> o;
              o.causal = causal;
              o.block_q = o.block_k = tile;
              return local_attention(Q, K, V, w, o);
            },
            q, k, v, 14);
        check_same(got, want, 1e-13);
      }
    }
}

TEST_CASE("tiled and local attention: hidden keys get exactly zero gradient, an empty row is zero, no NaN") {
  TD q(rand_array({1, 6, 4}, 21), true), k(rand_array({1, 6, 4}, 22), true), v(rand_array({1, 6, 4}, 23), true);
  Mask m = xt::ones<bool>({1, 1, 6});
  m(0, 0, 4) = m(0, 0, 5) = false;  // the last two keys are padding
  TiledAttentionOptions<double> o;
  o.allowed = Allowed::where(m);
  o.block_q = o.block_k = 2;
  const TD out = tiled_attention(q, k, v, o);
  out.backward(rand_array({1, 6, 4}, 24));
  for (std::size_t j : {4, 5})
    for (std::size_t c = 0; c < 4; ++c) {
      CHECK(k.grad()(0, j, c) == 0.0);
      CHECK(v.grad()(0, j, c) == 0.0);
    }
  // Window 1 with Lq > Lk: queries 3.. see no key at all.
  TD q2(rand_array({5, 4}, 25), true), k2(rand_array({2, 4}, 26), true), v2(rand_array({2, 3}, 27), true);
  const TD out2 = local_attention(q2, k2, v2, 1);
  out2.backward(rand_array({5, 3}, 28));
  for (std::size_t i = 3; i < 5; ++i)
    for (std::size_t c = 0; c < 3; ++c) CHECK(out2.value()(i, c) == 0.0);
  for (std::size_t i = 3; i < 5; ++i)
    for (std::size_t c = 0; c < 4; ++c) CHECK(q2.grad()(i, c) == 0.0);
  for (double x : q2.grad()) CHECK(std::isfinite(x));
}

TEST_CASE("tiled_attention skips the tiles a sparse mask allows nothing in, with the fused op's result") {
  // A sliding window (|i - j| <= 2) with global token 0 (BigBird), tiles of 4 x 4: most tiles empty.
  const std::size_t L = 24;
  Mask m = Mask::from_shape({L, L});
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t j = 0; j < L; ++j) m(i, j) = (i > j ? i - j : j - i) <= 2 || i == 0 || j == 0;
  const Array<double> q = rand_array({1, L, 4}, 41, -2, 2), k = rand_array({1, L, 4}, 42, -2, 2), v = rand_array({1, L, 3}, 43);
  const Grads want = run(
      [&](const TD& Q, const TD& K, const TD& V) {
        AttentionOptions<double> o;
        o.allowed = Allowed::where(m);
        return scaled_dot_product_attention(Q, K, V, o).output;
      },
      q, k, v, 44);
  for (std::size_t b : {0, 4, 5}) {
    CAPTURE(b);
    const Grads got = run(
        [&](const TD& Q, const TD& K, const TD& V) {
          TiledAttentionOptions<double> o;
          o.allowed = Allowed::where(m);
          o.block_q = o.block_k = b;
          return tiled_attention(Q, K, V, o);
        },
        q, k, v, 44);
    check_same(got, want, 1e-13);
  }
  // Without the global token, the value of key 21 is read only by the tiles that may see it: NaN
  // there reaches the query tiles of 16-19 and 20-23 (19 to 23 attend to it; the rest of their
  // tile reads it with weight 0, and 0 * NaN is NaN) and no other row, where a kernel that visited
  // every tile would spread it to every query.
  for (std::size_t i = 0; i < L; ++i) m(0, i) = m(i, 0) = (i <= 2);
  Array<double> v_nan = v;
  for (std::size_t c = 0; c < 3; ++c) v_nan(0, 21, c) = std::numeric_limits<double>::quiet_NaN();
  TiledAttentionOptions<double> o;
  o.allowed = Allowed::where(m);
  o.block_q = o.block_k = 4;
  TD Q(q, true), K(k, true), V(v_nan, true);
  const TD out = tiled_attention(Q, K, V, o);
  out.backward(rand_array({1, L, 3}, 45));
  for (std::size_t i = 0; i < L; ++i) {
    CAPTURE(i);
    CHECK(std::isnan(out.value()(0, i, 0)) == (i >= 16));
    if (i < 16) CHECK(std::isfinite(Q.grad()(0, i, 0)));  // the query tiles that never read key 21's tile
  }
}

TEST_CASE("tiled_attention gives the same bits at 1 and 2 threads") {
  const Shape s{1, 700, 32};
  const Array<float> q = xt::cast<float>(rand_array(s, 31)), k = xt::cast<float>(rand_array(s, 32)),
                     v = xt::cast<float>(rand_array(s, 33)), up = xt::cast<float>(rand_array(s, 34));
  auto once = [&](int n) {
    set_threads(n);
    TF Q(q, true), K(k, true), V(v, true);
    TiledAttentionOptions<float> o;
    o.causal = true;
    const TF out = tiled_attention(Q, K, V, o);
    out.backward(up);
    set_threads(1);
    return std::vector<Array<float>>{out.value(), Q.grad(), K.grad(), V.grad()};
  };
  const auto one = once(1), two = once(2);
  for (std::size_t i = 0; i < one.size(); ++i) CHECK(one[i] == two[i]);
}

// Skipped under AddressSanitizer, which owns operator new; anywhere else the counting must be on.
TEST_CASE("memory: the fused op's grows like n^2, the tiled op's like n" * doctest::skip(attnlab::testing::kAddressSanitizer)) {
  REQUIRE(counting_bytes());
  auto peak = [](std::size_t n, bool tiled) {
    Generator g(1);
    TF q(random_normal<float>({1, n, 64}, g), true), k(random_normal<float>({1, n, 64}, g), true),
        v(random_normal<float>({1, n, 64}, g), true);
    const Array<float> up = random_normal<float>({1, n, 64}, g);
    return double(peak_bytes_of([&] {
      const TF out = tiled ? tiled_attention(q, k, v) : scaled_dot_product_attention(q, k, v).output;
      out.backward(up);
    }));
  };
  const double fused1 = peak(512, false), fused2 = peak(1024, false);
  const double tiled1 = peak(512, true), tiled2 = peak(1024, true);
  MESSAGE("peak bytes, n = 512 / 1024: fused ", fused1, " / ", fused2, ", tiled ", tiled1, " / ", tiled2);
  CHECK(fused2 / fused1 > 3.0);  // n^2: 4x, less the linear part
  CHECK(tiled2 / tiled1 < 2.2);  // n: 2x
  CHECK(fused2 / tiled2 > 4.0);  // 4.7 at n = 1024; 26 at n = 4096 (bench_core, section e)
  // The weights alone: 1024^2 floats.
  CHECK(fused2 > 1024.0 * 1024 * 4);
}

// Linear attention straight from its definition, one block (L, d), in double.
Array<double> naive_linear(const Array<double>& q, const Array<double>& k, const Array<double>& v, bool causal,
                           double eps) {
  auto phi = [](double x) { return x > 0 ? x + 1 : std::exp(x); };
  const std::size_t Lq = q.shape(0), Lk = k.shape(0), d = q.shape(1), dv = v.shape(1);
  Array<double> out = xt::zeros<double>({Lq, dv});
  for (std::size_t i = 0; i < Lq; ++i) {
    double den = eps;
    for (std::size_t j = 0; j < Lk && (!causal || j <= i); ++j) {
      double w = 0;
      for (std::size_t c = 0; c < d; ++c) w += phi(q(i, c)) * phi(k(j, c));
      den += w;
      for (std::size_t c = 0; c < dv; ++c) out(i, c) += w * v(j, c);
    }
    for (std::size_t c = 0; c < dv; ++c) out(i, c) /= den;
  }
  return out;
}

TEST_CASE("linear_attention against its definition, causal and not; float agrees with double") {
  const Array<double> q = rand_array({9, 5}, 41, -2, 2), k = rand_array({9, 5}, 42, -2, 2), v = rand_array({9, 3}, 43);
  for (bool causal : {false, true}) {
    LinearAttentionOptions o;
    o.causal = causal;
    const TD out = linear_attention(TD(q), TD(k), TD(v), o);
    CHECK(max_abs(out.value(), naive_linear(q, k, v, causal, o.eps)) <= 1e-13);
    const TF outf = linear_attention(TF(xt::cast<float>(q)), TF(xt::cast<float>(k)), TF(xt::cast<float>(v)), o);
    CHECK(max_abs(Array<double>(xt::cast<double>(outf.value())), out.value()) <= 1e-5);
  }
  // Batched: each block on its own.
  const Array<double> qb = rand_array({2, 3, 6, 4}, 44), kb = rand_array({2, 3, 6, 4}, 45), vb = rand_array({2, 3, 6, 2}, 46);
  const TD ob = linear_attention(TD(qb), TD(kb), TD(vb), {true});
  const Array<double> one = xt::view(ob.value(), 1, 2);
  CHECK(max_abs(one, naive_linear(xt::view(qb, 1, 2), xt::view(kb, 1, 2), xt::view(vb, 1, 2), true, 1e-6)) <= 1e-13);
}

TEST_CASE("causal linear attention: the output at t has exactly zero gradient from inputs after t") {
  TD q(rand_array({6, 3}, 51), true), k(rand_array({6, 3}, 52), true), v(rand_array({6, 2}, 53), true);
  const TD out = linear_attention(q, k, v, {true});
  Array<double> up = xt::zeros<double>({6, 2});
  up(2, 0) = 1.0;
  up(2, 1) = -0.5;
  out.backward(up);
  for (std::size_t t = 3; t < 6; ++t) {
    for (std::size_t c = 0; c < 3; ++c) CHECK(k.grad()(t, c) == 0.0);
    for (std::size_t c = 0; c < 2; ++c) CHECK(v.grad()(t, c) == 0.0);
  }
}

TEST_CASE("Linformer: attention over E K and F V; with E = F = I it is exact attention") {
  Generator g(1);
  nn::Linformer<double> lin(8, 4);
  CHECK(lin.parameter_count() == 2 * 4 * 8);
  CHECK(lin.E.value()(1, 2) == 0.5);  // segment means: row 1 averages positions 2 and 3
  const TD q(rand_array({2, 8, 3}, 61)), k(rand_array({2, 8, 3}, 62)), v(rand_array({2, 8, 2}, 63));
  const TD want = scaled_dot_product_attention(q, matmul(lin.E, k), matmul(lin.F, v)).output;
  CHECK(max_abs(lin.forward(q, k, v).value(), want.value()) == 0.0);
  // A shorter sequence uses the first L columns.
  const TD q5(rand_array({5, 3}, 64)), k5(rand_array({5, 3}, 65)), v5(rand_array({5, 2}, 66));
  const TD want5 = scaled_dot_product_attention(q5, matmul(slice(lin.E, 1, 0, 5), k5),
                                                matmul(slice(lin.F, 1, 0, 5), v5)).output;
  CHECK(max_abs(lin.forward(q5, k5, v5).value(), want5.value()) == 0.0);
  nn::Linformer<double> full(5, 5);
  {
    NoGrad ng;
    full.E.mutable_value() = xt::eye<double>(5);
    full.F.mutable_value() = xt::eye<double>(5);
  }
  CHECK(max_abs(full.forward(q5, k5, v5).value(), scaled_dot_product_attention(q5, k5, v5).output.value()) <= 1e-15);
}

TEST_CASE("bad inputs throw ShapeError naming the op and the shapes") {
  auto t = [](const Shape& s) { return TD(xt::zeros<double>(s)); };
  using doctest::Contains;
  CHECK_THROWS_WITH_AS(tiled_attention(t({4}), t({4}), t({4})), Contains("tiled_attention: Q, K and V need rank >= 2"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(tiled_attention(t({3, 4}), t({5, 3}), t({5, 2})),
                       Contains("tiled_attention: d of Q and K differ: Q (3,4), K (5,3), V (5,2)"), ShapeError);
  CHECK_THROWS_WITH_AS(local_attention(t({3, 4}), t({5, 4}), t({6, 2}), 2),
                       Contains("local_attention: Lk of K and V differ"), ShapeError);
  CHECK_THROWS_WITH_AS(local_attention(t({2, 3, 4}), t({3, 5, 4}), t({3, 5, 2}), 2),
                       Contains("leading dims of Q, K and V differ"), ShapeError);
  {
    TiledAttentionOptions<double> o;
    o.allowed = Allowed::where(Mask(xt::ones<bool>({3, 1, 5})));
    CHECK_THROWS_WITH_AS(tiled_attention(t({2, 3, 4}), t({2, 5, 4}), t({2, 5, 2}), o),
                         Contains("allowed entries of shape (3,1,5) do not broadcast to the scores (2,3,5)"), ShapeError);
  }
  CHECK_THROWS_WITH_AS(tiled_attention(TD(), t({5, 4}), t({5, 2})), Contains("query is an empty tensor handle"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(linear_attention(t({3, 4}), t({5, 4}), t({5, 2}), {true}),
                       Contains("linear_attention: causal needs Lq == Lk: Q (3,4), K (5,4), V (5,2)"), ShapeError);
  CHECK_THROWS_WITH_AS(linear_attention(t({3, 4}), t({5, 3}), t({5, 2})), Contains("linear_attention: d of Q and K differ"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(linear_attention(t({3, 4}), t({3, 4}), t({3, 2}), {false, 0.0}),
                       Contains("linear_attention: eps must be positive"), ShapeError);
  CHECK_THROWS_WITH_AS(nn::Linformer<double>(4, 5), Contains("Linformer: need 0 < rank <= max_length, got rank 5"),
                       ShapeError);
  nn::Linformer<double> lin(4, 2);
  CHECK_THROWS_WITH_AS(lin.forward(t({6, 3}), t({6, 3}), t({6, 2})),
                       Contains("Linformer: sequence of 6 keys is longer than max_length 4"), ShapeError);
  CHECK_THROWS_WITH_AS(lin.forward(t({4, 3}), t({4, 3}), t({3, 2})), Contains("Linformer: K and V have different lengths"),
                       ShapeError);
}

TEST_CASE("no keys at all: tiled attention gives a zero output and zero gradient") {
  TD q(rand_array({2, 3}, 1), true);
  TD k(Array<double>::from_shape({0, 3}), true), v(Array<double>::from_shape({0, 4}), true);
  const TD out = tiled_attention(q, k, v);
  REQUIRE(out.shape() == Shape{2, 4});
  for (double x : out.value()) CHECK(x == 0.0);
  out.backward(xt::ones<double>({2, 4}));
  for (double g : q.grad()) CHECK(g == 0.0);
}
