// scaled_dot_product_attention: the course's golden values, masks (exact zeros, no NaN),
// causality of the gradient, Lq != Lk against a naive reference, float/double agreement, dropout,
// and every bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;
using TD = Tensor<double>;
using Opts = AttentionOptions<double>;

namespace {

// |got - want| <= tol entrywise.
void check_abs(const Array<double>& got, const Array<double>& want, double tol) {
  REQUIRE(got.shape() == want.shape());
  for (std::size_t i = 0; i < got.size(); ++i) {
    INFO("entry ", i, ": got ", got.data()[i], ", want ", want.data()[i]);
    CHECK(std::abs(got.data()[i] - want.data()[i]) <= tol);
  }
}

// Attention for one (Lq,d) x (Lk,d) x (Lk,dv) block, straight from the definition, with an
// allowed(i, j) predicate; a row with no allowed key is zero.
template <class AllowedFn>
Array<double> naive_attention(const Array<double>& q, const Array<double>& k,
                              const Array<double>& v, double scale, AllowedFn allowed) {
  const std::size_t Lq = q.shape(0), Lk = k.shape(0), d = q.shape(1), dv = v.shape(1);
  Array<double> out = xt::zeros<double>({Lq, dv});
  for (std::size_t i = 0; i < Lq; ++i) {
    std::vector<double> w(Lk, 0.0);
    double total = 0.0;
    for (std::size_t j = 0; j < Lk; ++j) {
      if (!allowed(i, j)) continue;
      double s = 0.0;
      for (std::size_t c = 0; c < d; ++c) s += q(i, c) * k(j, c);
      w[j] = std::exp(scale * s);  // inputs in [-1, 1]: no overflow, no need to shift
      total += w[j];
    }
    for (std::size_t j = 0; j < Lk; ++j)
      for (std::size_t c = 0; c < dv; ++c)
        if (total > 0) out(i, c) += w[j] / total * v(j, c);
  }
  return out;
}

}  // namespace

TEST_CASE("golden: 'The cat sat' self-attention with W_Q = W_K = W_V = 0.5 I, scale 1/sqrt(4)") {
  const Array<double> x = {{0.2, 0.1, 0.3, 0.1}, {0.5, 0.3, 0.2, 0.4}, {0.3, 0.2, 0.4, 0.3}};
  const Array<double> proj = 0.5 * x;  // x W with W = 0.5 I4
  TD q(proj), k(proj), v(proj);
  auto r = scaled_dot_product_attention(q, k, v);  // default scale 1 / sqrt(d) = 1 / sqrt(4)

  const Array<double> scores = {
      {.01875, .02875, .02875}, {.02875, .0675, .05125}, {.02875, .05125, .0475}};
  // The lesson's scores are Q K^T / sqrt(4) ...
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 0; j < 3; ++j) {
      double s = 0.0;
      for (std::size_t c = 0; c < 4; ++c) s += proj(i, c) * proj(j, c);
      CHECK(std::abs(s / 2.0 - scores(i, j)) < 1e-12);
    }
  // ... and the op's weights carry exactly those scores: log(P_ij / P_i0) = S_ij - S_i0.
  const Array<double>& w = r.weights.value();
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t j = 1; j < 3; ++j)
      CHECK(std::abs(std::log(w(i, j) / w(i, 0)) - (scores(i, j) - scores(i, 0))) < 1e-12);

  check_abs(w,
            {{.331115, .334443, .334443},
             {.326556, .339458, .333986},
             {.328765, .336247, .334988}},
            1e-6);
  check_abs(r.output.value(),
            {{.166889, .100166, .15, .133611},
             {.167618, .100645, .149726, .134317},
             {.167186, .100374, .149937, .133936}},
            1e-6);
}

TEST_CASE("golden: plain dot-product attention, scale 1") {
  TD q(Array<double>{{0.2, 0.5, 0.3}});
  TD k(Array<double>{{0.1, 0.4, 0.5}, {0.2, 0.3, 0.5}, {0.3, 0.2, 0.5}});
  TD v(Array<double>{{1.0, 0.0}, {0.0, 1.0}, {2.0, -1.0}});
  Opts o;
  o.scale = 1.0;
  auto r = scaled_dot_product_attention(q, k, v, o);
  const Array<double>& w = r.weights.value();
  REQUIRE(shape_of(w) == Shape{1, 3});
  // scores [0.37, 0.34, 0.31]: consecutive differences of -0.03 in log-weight.
  CHECK(std::log(w(0, 1) / w(0, 0)) == doctest::Approx(0.34 - 0.37).epsilon(1e-9));
  CHECK(std::log(w(0, 2) / w(0, 0)) == doctest::Approx(0.31 - 0.37).epsilon(1e-9));
  check_abs(w, {{0.343382, 0.333233, 0.323385}}, 1e-6);
  check_abs(r.output.value(),
            {{w(0, 0) + 2 * w(0, 2), w(0, 1) - w(0, 2)}}, 1e-12);
}

TEST_CASE("masked keys: weight exactly 0, and exactly zero gradient into their K and V rows") {
  // Padding mask (B, 1, 1, Lk): batch 0 sees keys 0..2, batch 1 sees keys 0..4.
  const std::size_t B = 2, H = 2, Lq = 3, Lk = 5, d = 4;
  TD q(rand_array({B, H, Lq, d}, 1), true), k(rand_array({B, H, Lk, d}, 2), true),
      v(rand_array({B, H, Lk, d}, 3), true);
  Mask m = Mask::from_shape({B, 1, 1, Lk});
  for (std::size_t j = 0; j < Lk; ++j) m(0, 0, 0, j) = j < 3, m(1, 0, 0, j) = true;
  Opts o;
  o.allowed = Allowed::where(m);
  auto r = scaled_dot_product_attention(q, k, v, o);
  r.output.backward(rand_array({B, H, Lq, d}, 4));
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t i = 0; i < Lq; ++i)
      for (std::size_t j = 3; j < Lk; ++j) CHECK(r.weights.value()(0, h, i, j) == 0.0);
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t j = 0; j < Lk; ++j)
      for (std::size_t c = 0; c < d; ++c) {
        if (j >= 3) {
          CHECK(k.grad()(0, h, j, c) == 0.0);
          CHECK(v.grad()(0, h, j, c) == 0.0);
        } else {
          CHECK(v.grad()(0, h, j, c) != 0.0);
        }
        CHECK(v.grad()(1, h, j, c) != 0.0);  // batch 1 masks nothing
      }
}

TEST_CASE("a fully masked row gives a zero output row and zero gradient, never NaN") {
  TD q(rand_array({3, 4}, 1), true), k(rand_array({5, 4}, 2), true), v(rand_array({5, 2}, 3), true);
  Mask m = Mask::from_shape({3, 5});
  m.fill(true);
  for (std::size_t j = 0; j < 5; ++j) m(1, j) = false;
  Opts o;
  o.allowed = Allowed::where(m);
  auto r = scaled_dot_product_attention(q, k, v, o);
  // Upstream gradient only on the masked row: nothing may flow anywhere.
  Array<double> up = xt::zeros<double>({3, 2});
  up(1, 0) = 1.5, up(1, 1) = -2.0;
  r.output.backward(up);
  for (std::size_t j = 0; j < 5; ++j) CHECK(r.weights.value()(1, j) == 0.0);
  CHECK(r.output.value()(1, 0) == 0.0);
  CHECK(r.output.value()(1, 1) == 0.0);
  CHECK(all_finite(r.output.value()));
  for (const TD* t : {&q, &k, &v}) {
    CHECK(all_finite(t->grad()));
    for (double g : t->grad()) CHECK(g == 0.0);
  }

  SUBCASE("every row masked, with causal on top") {
    Mask none = Mask::from_shape({1, 5});
    none.fill(false);
    Opts o2;
    o2.allowed = Allowed::where(none);
    o2.causal = true;
    TD q2(rand_array({3, 4}, 5), true);
    auto r2 = scaled_dot_product_attention(q2, k, v, o2);
    r2.output.backward(rand_array({3, 2}, 6));
    for (double x : r2.output.value()) CHECK(x == 0.0);
    for (double g : q2.grad()) CHECK(g == 0.0);
  }
}

TEST_CASE("causal: the output at position t has exactly zero gradient from inputs after t") {
  const std::size_t L = 5, d = 3;
  for (std::size_t t = 0; t < L; ++t) {
    CAPTURE(t);
    TD q(rand_array({2, L, d}, 1), true), k(rand_array({2, L, d}, 2), true),
        v(rand_array({2, L, d}, 3), true);
    Opts o;
    o.causal = true;
    auto r = scaled_dot_product_attention(q, k, v, o);
    Array<double> up = xt::zeros<double>(Shape{2, L, d});
    for (std::size_t c = 0; c < d; ++c) up(0, t, c) = up(1, t, c) = 1.0 + double(c);
    r.output.backward(up);
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t s = 0; s < L; ++s)
        for (std::size_t c = 0; c < d; ++c) {
          if (s > t) {
            CHECK(k.grad()(b, s, c) == 0.0);
            CHECK(v.grad()(b, s, c) == 0.0);
            CHECK(r.weights.value()(b, t, s) == 0.0);
          } else {
            CHECK(v.grad()(b, s, c) != 0.0);
          }
          if (s != t) CHECK(q.grad()(b, s, c) == 0.0);
        }
  }
}

TEST_CASE("Lq != Lk, with a mask and causal, against the definition") {
  const std::size_t B = 3, Lq = 4, Lk = 6, d = 5, dv = 2;
  const Array<double> qa = rand_array({B, Lq, d}, 1), ka = rand_array({B, Lk, d}, 2),
                      va = rand_array({B, Lk, dv}, 3);
  Mask m = Mask::from_shape({Lq, Lk});  // broadcast over the batch
  for (std::size_t i = 0; i < Lq; ++i)
    for (std::size_t j = 0; j < Lk; ++j) m(i, j) = (i + j) % 3 != 1;
  for (bool causal : {false, true}) {
    CAPTURE(causal);
    Opts o;
    o.allowed = Allowed::where(m);
    o.causal = causal;
    o.scale = 0.8;
    auto r = scaled_dot_product_attention(TD(qa), TD(ka), TD(va), o);
    REQUIRE(r.output.shape() == Shape{B, Lq, dv});
    REQUIRE(r.weights.shape() == Shape{B, Lq, Lk});
    for (std::size_t b = 0; b < B; ++b) {
      const Array<double> want = naive_attention(
          xt::view(qa, b), xt::view(ka, b), xt::view(va, b), 0.8,
          [&](std::size_t i, std::size_t j) { return m(i, j) && (!causal || j <= i); });
      const Array<double> got = xt::view(r.output.value(), b);
      check_abs(got, want, 1e-12);
    }
  }
}

// Without a mask the scores go through a padded scratch block and softmax_rows_padded; with one,
// through softmax_rows in place. A mask that allows every key (or exactly the causal ones) must
// give the same bits both ways: weights, output and every gradient, at row lengths that are and
// are not multiples of 8, in float (the AVX path) and double, with and without a bias.
template <class T>
void check_padded_path_bits(std::size_t L, bool causal, bool with_bias) {
  CAPTURE(L);
  CAPTURE(causal);
  CAPTURE(with_bias);
  const std::size_t B = 3, H = 2, d = 8;
  Generator gen(L + 31 * causal);
  Tensor<T> q = Tensor<T>::rand({B, L, H * d}, gen, -3, 3, true);
  Tensor<T> k = Tensor<T>::rand({B, L, H * d}, gen, -3, 3, true);
  Tensor<T> v = Tensor<T>::rand({B, L, H * d}, gen, -3, 3, true);
  Tensor<T> bias = Tensor<T>::rand({H, L, L}, gen, -2, 2, true);
  const Array<T> up = random_uniform<T>({B, L, H * d}, gen, -1, 1);
  Mask m = Mask::from_shape({L, L});
  for (std::size_t i = 0; i < L; ++i)
    for (std::size_t j = 0; j < L; ++j) m(i, j) = !causal || j <= i;
  std::vector<Array<T>> got[2];
  for (int masked = 0; masked < 2; ++masked) {
    for (Tensor<T>* t : {&q, &k, &v, &bias}) t->zero_grad();
    AttentionOptions<T> o;
    if (masked) o.allowed = Allowed::where(m);
    else o.causal = causal;
    if (with_bias) o.bias = bias;
    auto r = multi_head_attention(q, k, v, H, o);
    r.output.backward(up);
    got[masked] = {r.weights.value(), r.output.value(), q.grad(), k.grad(), v.grad()};
    if (with_bias) got[masked].push_back(bias.grad());
  }
  for (std::size_t a = 0; a < got[0].size(); ++a) {
    CAPTURE(a);
    REQUIRE(got[0][a].size() == got[1][a].size());
    CHECK(std::memcmp(got[0][a].data(), got[1][a].data(), got[0][a].size() * sizeof(T)) == 0);
  }
}

TEST_CASE_TEMPLATE("without a mask, the padded softmax gives the masked path's bits", T, float, double) {
  for (std::size_t L : {1, 7, 8, 17, 50})
    for (bool causal : {false, true})
      for (bool with_bias : {false, true}) check_padded_path_bits<T>(L, causal, with_bias);
}

TEST_CASE("float and double forwards agree") {
  const Shape qs{2, 2, 4, 8}, ks{2, 2, 6, 8}, vs{2, 2, 6, 3};
  const Array<double> qa = rand_array(qs, 1), ka = rand_array(ks, 2), va = rand_array(vs, 3),
                      ba = rand_array({4, 6}, 4);
  Mask m = Mask::from_shape({2, 1, 1, 6});
  m.fill(true);
  m(0, 0, 0, 5) = false;
  Opts od;
  od.allowed = Allowed::where(m);
  od.causal = true;
  od.bias = TD(ba);
  AttentionOptions<float> of;
  of.allowed = Allowed::where(m);
  of.causal = true;
  of.bias = Tensor<float>(Array<float>(xt::cast<float>(ba)));
  auto rd = scaled_dot_product_attention(TD(qa), TD(ka), TD(va), od);
  auto rf = scaled_dot_product_attention(Tensor<float>(Array<float>(xt::cast<float>(qa))),
                                         Tensor<float>(Array<float>(xt::cast<float>(ka))),
                                         Tensor<float>(Array<float>(xt::cast<float>(va))), of);
  check_abs(Array<double>(xt::cast<double>(rf.output.value())), rd.output.value(), 1e-6);
  check_abs(Array<double>(xt::cast<double>(rf.weights.value())), rd.weights.value(), 1e-6);
}

TEST_CASE("bias adds to the scores before the softmax") {
  // A bias of +log(2) on key 0 doubles its unnormalized weight.
  TD q(rand_array({2, 3}, 1)), k(rand_array({4, 3}, 2)), v(rand_array({4, 2}, 3));
  Array<double> bias = xt::zeros<double>({1, 4});
  bias(0, 0) = std::log(2.0);
  Opts o;
  o.bias = TD(bias);
  auto plain = scaled_dot_product_attention(q, k, v);
  auto biased = scaled_dot_product_attention(q, k, v, o);
  for (std::size_t i = 0; i < 2; ++i) {
    const double ratio0 = biased.weights.value()(i, 0) / biased.weights.value()(i, 1);
    const double ratio1 = plain.weights.value()(i, 0) / plain.weights.value()(i, 1);
    CHECK(ratio0 == doctest::Approx(2.0 * ratio1).epsilon(1e-12));
  }
}

TEST_CASE("dropout: weights are P before dropout; kept ones scale by 1/(1-p); reproducible") {
  const std::size_t L = 64;
  TD q(rand_array({L, 4}, 1)), k(rand_array({L, 4}, 2));
  Array<double> eye = xt::eye<double>(L);  // V = I makes the output P' itself
  TD v(eye);
  Generator gen(3);
  Opts o;
  o.dropout = 0.25;
  o.generator = &gen;
  auto r = scaled_dot_product_attention(q, k, v, o);
  const Array<double>& p = r.weights.value();
  const Array<double>& out = r.output.value();
  std::size_t dropped = 0;
  for (std::size_t i = 0; i < L; ++i) {
    double row = 0.0;
    for (std::size_t j = 0; j < L; ++j) {
      row += p(i, j);
      if (out(i, j) == 0.0) ++dropped;
      else CHECK(out(i, j) == doctest::Approx(p(i, j) / 0.75).epsilon(1e-12));
    }
    CHECK(row == doctest::Approx(1.0).epsilon(1e-12));
  }
  const double frac = double(dropped) / double(L * L);
  CHECK(frac > 0.2);
  CHECK(frac < 0.3);
  gen.reseed(3);
  auto again = scaled_dot_product_attention(q, k, v, o);
  CHECK(again.output.value() == out);
}

TEST_CASE("the weights are a plain tensor; gradients accumulate across backward calls") {
  TD q(rand_array({3, 4}, 1), true), k(rand_array({3, 4}, 2), true), v(rand_array({3, 2}, 3), true);
  auto r1 = scaled_dot_product_attention(q, k, v);
  CHECK_FALSE(r1.weights.requires_grad());
  r1.output.backward(xt::ones<double>({3, 2}));
  const Array<double> once = q.grad();
  auto r2 = scaled_dot_product_attention(q, k, v);
  r2.output.backward(xt::ones<double>({3, 2}));
  check_abs(q.grad(), 2.0 * once, 1e-15);
}

TEST_CASE("bad inputs throw ShapeError naming the op and the shapes") {
  auto t = [](const Shape& s) { return TD(xt::zeros<double>(s)); };
  using doctest::Contains;
  CHECK_THROWS_WITH_AS(scaled_dot_product_attention(t({4}), t({4}), t({4})),
                       Contains("scaled_dot_product_attention: Q, K and V need rank >= 2"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(scaled_dot_product_attention(t({3, 4}), t({5, 3}), t({5, 2})),
                       Contains("d of Q and K differ: Q (3,4), K (5,3), V (5,2)"), ShapeError);
  CHECK_THROWS_WITH_AS(scaled_dot_product_attention(t({3, 4}), t({5, 4}), t({6, 2})),
                       Contains("Lk of K and V differ"), ShapeError);
  CHECK_THROWS_WITH_AS(scaled_dot_product_attention(t({2, 3, 4}), t({3, 5, 4}), t({3, 5, 2})),
                       Contains("leading dims of Q, K and V differ: Q (2,3,4)"), ShapeError);
  CHECK_THROWS_WITH_AS(scaled_dot_product_attention(t({2, 3, 4}), t({5, 4}), t({5, 2})),
                       Contains("leading dims"), ShapeError);
  {
    Opts o;
    o.allowed = Allowed::where(Mask(xt::ones<bool>({3, 1, 5})));
    CHECK_THROWS_WITH_AS(scaled_dot_product_attention(t({2, 3, 4}), t({2, 5, 4}), t({2, 5, 2}), o),
                         Contains("allowed entries of shape (3,1,5) do not broadcast to the scores (2,3,5)"),
                         ShapeError);
  }
  {
    Opts o;
    o.bias = t({3, 4});
    CHECK_THROWS_WITH_AS(scaled_dot_product_attention(t({2, 3, 4}), t({2, 5, 4}), t({2, 5, 2}), o),
                         Contains("bias of shape (3,4) does not broadcast to the scores (2,3,5)"),
                         ShapeError);
  }
  {
    Opts o;
    o.dropout = 0.1;
    CHECK_THROWS_WITH_AS(scaled_dot_product_attention(t({3, 4}), t({5, 4}), t({5, 2}), o),
                         Contains("dropout 0.1 needs options.generator"), ShapeError);
    Generator g(1);
    o.generator = &g;
    o.dropout = 1.0;
    CHECK_THROWS_WITH_AS(scaled_dot_product_attention(t({3, 4}), t({5, 4}), t({5, 2}), o),
                         Contains("dropout must be in [0, 1)"), ShapeError);
  }
  CHECK_THROWS_WITH_AS(scaled_dot_product_attention(TD(), t({5, 4}), t({5, 2})),
                       Contains("query is an empty tensor handle"), ShapeError);
}

TEST_CASE("no keys at all (Lk = 0): a zero output, zero gradient, no NaN") {
  TD q(rand_array({2, 3}, 1), true);
  TD k(Array<double>::from_shape({0, 3}), true), v(Array<double>::from_shape({0, 4}), true);
  auto r = scaled_dot_product_attention(q, k, v);
  REQUIRE(r.output.shape() == Shape{2, 4});
  REQUIRE(r.weights.shape() == Shape{2, 0});
  for (double x : r.output.value()) CHECK(x == 0.0);
  r.output.backward(xt::ones<double>({2, 4}));
  for (double g : q.grad()) CHECK(g == 0.0);
}

TEST_CASE("a row whose every allowed score is -inf (by its bias) is a zero row with zero gradient, never NaN") {
  const double inf = std::numeric_limits<double>::infinity();
  for (const bool with_mask : {false, true}) {  // the padded path (no mask) and the masked path
    CAPTURE(with_mask);
    TD q(rand_array({3, 3}, 1), true), k(rand_array({4, 3}, 2), true), v(rand_array({4, 2}, 3), true);
    Array<double> bias = xt::zeros<double>({3, 4});
    for (std::size_t j = 0; j < 4; ++j) bias(1, j) = -inf;  // row 1: nothing to attend to
    bias(2, 0) = -inf;                                     // row 2: one key out of four
    Opts o;
    o.bias = TD(bias, true);
    if (with_mask) {
      Mask m = Mask::from_shape({3, 4});
      m.fill(true);
      m(0, 3) = false;
      o.allowed = Allowed::where(m);
    }
    auto r = scaled_dot_product_attention(q, k, v, o);
    CHECK(all_finite(r.output.value()));
    for (std::size_t j = 0; j < 4; ++j) CHECK(r.weights.value()(1, j) == 0.0);
    for (std::size_t c = 0; c < 2; ++c) CHECK(r.output.value()(1, c) == 0.0);
    CHECK(r.weights.value()(2, 0) == 0.0);
    CHECK(xt::sum(xt::view(r.weights.value(), 2))() == doctest::Approx(1.0));
    r.output.backward(xt::ones<double>({3, 2}));
    CHECK(all_finite(q.grad()));
    CHECK(all_finite(k.grad()));
    CHECK(all_finite(o.bias.grad()));
    for (std::size_t c = 0; c < 3; ++c) CHECK(q.grad()(1, c) == 0.0);
    for (std::size_t j = 0; j < 4; ++j) CHECK(o.bias.grad()(1, j) == 0.0);
  }
}

TEST_CASE("masked_softmax: a row whose allowed scores are all -inf gives zeros, never NaN") {
  const double inf = std::numeric_limits<double>::infinity();
  Array<double> x = {{-inf, 1.0, -inf}, {-inf, -inf, -inf}, {0.5, -inf, 2.0}};
  const Mask allowed = {{true, false, true}, {true, true, true}, {true, true, true}};
  TD t(x, true);
  const TD y = masked_softmax(t, Allowed::where(allowed));
  CHECK(all_finite(y.value()));
  for (std::size_t j = 0; j < 3; ++j) {
    CHECK(y.value()(0, j) == 0.0);  // its one finite score is hidden: nothing allowed is finite
    CHECK(y.value()(1, j) == 0.0);
  }
  CHECK(y.value()(2, 1) == 0.0);
  CHECK(y.value()(2, 0) + y.value()(2, 2) == doctest::Approx(1.0));
  y.backward(xt::ones<double>({3, 3}) + xt::eye<double>(3));
  CHECK(all_finite(t.grad()));
  for (std::size_t j = 0; j < 3; ++j) {
    CHECK(t.grad()(0, j) == 0.0);
    CHECK(t.grad()(1, j) == 0.0);
  }
  // Float too: the row kernel is the same, and so is the guard.
  Tensor<float> tf(Array<float>(xt::cast<float>(x)), true);
  CHECK(all_finite(masked_softmax(tf, Allowed::where(allowed)).value()));
}

TEST_CASE("a row the mask hides entirely stays zero even when its bias is -inf") {
  TD q(rand_array({2, 3}, 1), true), k(rand_array({4, 3}, 2), true), v(rand_array({4, 2}, 3), true);
  Array<double> bias = xt::zeros<double>({2, 4});
  for (std::size_t j = 0; j < 4; ++j) bias(1, j) = -std::numeric_limits<double>::infinity();
  Mask m = Mask::from_shape({2, 4});
  m.fill(true);
  for (std::size_t j = 0; j < 4; ++j) m(1, j) = false;
  Opts o;
  o.allowed = Allowed::where(m);
  o.bias = TD(bias);
  auto r = scaled_dot_product_attention(q, k, v, o);
  for (std::size_t j = 0; j < 4; ++j) CHECK(r.weights.value()(1, j) == 0.0);
  for (std::size_t c = 0; c < 2; ++c) CHECK(r.output.value()(1, c) == 0.0);
  r.output.backward(xt::ones<double>({2, 2}));
  CHECK(all_finite(q.grad()));
  for (std::size_t c = 0; c < 3; ++c) CHECK(q.grad()(1, c) == 0.0);
}
