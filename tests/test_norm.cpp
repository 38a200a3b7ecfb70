// layer_norm and dropout: statistics of the output, a reference value, the backward formula,
// float against double, the dropout mask contract, and every error.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include <xtensor/xmath.hpp>
#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;
using TD = Tensor<double>;
using TF = Tensor<float>;

// ---------------------------------------------------------------- layer_norm

TEST_CASE("layer_norm rows have mean 0 and variance 1") {
  const Array<double> x = rand_array({4, 3, 16}, 1, -5.0, 20.0);
  const Array<double> y = layer_norm(TD(x), TD(), TD(), 0.0).value();
  const Array<double> m = xt::mean(y, {2});
  const Array<double> v = xt::mean(y * y, {2});  // the mean is 0: variance = mean square
  CHECK(xt::allclose(m, xt::zeros<double>({4, 3}), 0.0, 1e-12));
  CHECK(xt::allclose(v, xt::ones<double>({4, 3}), 0.0, 1e-12));
}

TEST_CASE("layer_norm affine matches a reference value") {
  // PyTorch 1.13: F.layer_norm(x, (4,), gamma, beta) in float64, eps 1e-5.
  const Array<double> x = {{1.0, 2.0, 4.0, -1.0}};
  const TD g(Array<double>{1.0, 2.0, 0.5, -1.0}), b(Array<double>{0.0, 0.1, 0.2, 0.3});
  const Array<double> want = {{-0.2773496714, 0.6546993428, 0.8933741786, 1.6867483571}};
  CHECK(xt::allclose(layer_norm(TD(x), g, b).value(), want, 0.0, 1e-9));
}

TEST_CASE("layer_norm backward: dx, dgamma = sum dy * xhat, dbeta = sum dy") {
  const Array<double> x = rand_array({5, 6}, 2, -3.0, 3.0), gy = rand_array({5, 6}, 3, -3.0, 3.0);
  TD X(x, true), G(rand_array({6}, 4, -3.0, 3.0), true), B(rand_array({6}, 5, -3.0, 3.0), true);
  layer_norm(X, G, B).backward(gy);
  const Array<double> xhat = layer_norm(TD(x), TD(), TD()).value();
  CHECK(xt::allclose(G.grad(), Array<double>(xt::sum(gy * xhat, {0})), 1e-12, 1e-12));
  CHECK(xt::allclose(B.grad(), Array<double>(xt::sum(gy, {0})), 1e-12, 1e-12));
  // dx is orthogonal to the directions layer_norm ignores: each row of dx sums to zero
  // (shifting a row changes nothing).
  const Array<double> rowsum = xt::sum(X.grad(), {1});
  CHECK(xt::allclose(rowsum, xt::zeros<double>({5}), 0.0, 1e-12));
}

TEST_CASE("layer_norm: float and double forwards agree") {
  const Array<double> x = rand_array({3, 7, 10}, 6, -3.0, 3.0), g = rand_array({10}, 7, -3.0, 3.0), b = rand_array({10}, 8, -3.0, 3.0);
  const Array<double> yd = layer_norm(TD(x), TD(g), TD(b)).value();
  const Array<double> yf = xt::cast<double>(
      layer_norm(TF(Array<float>(xt::cast<float>(x))), TF(Array<float>(xt::cast<float>(g))),
                 TF(Array<float>(xt::cast<float>(b))))
          .value());
  CHECK(xt::allclose(yf, yd, 1e-4, 1e-5));
}

TEST_CASE("layer_norm errors name the op and the shapes") {
  const TD x(rand_array({2, 4}, 1, -3.0, 3.0));
  CHECK(error_of([&] { layer_norm(x, TD(rand_array({5}, 2, -3.0, 3.0)), TD()); }) ==
        "layer_norm: gamma (5) does not match the last axis of input (2,4); expected (4)");
  CHECK(error_of([&] { layer_norm(x, TD(), TD(rand_array({1, 4}, 2, -3.0, 3.0))); }) ==
        "layer_norm: beta (1,4) does not match the last axis of input (2,4); expected (4)");
  CHECK(starts_with(error_of([] { layer_norm(TD::scalar(1.0), TD(), TD()); }), "layer_norm: 0-D"));
  CHECK(starts_with(error_of([] { layer_norm(TD(Array<double>::from_shape({3, 0})), TD(), TD()); }),
                    "layer_norm: last axis"));
  CHECK(starts_with(error_of([&] { layer_norm(x, TD(), TD(), -1.0); }), "layer_norm: eps -1"));
}

// ---------------------------------------------------------------- dropout

TEST_CASE("dropout: the same seed draws the same mask") {
  const Array<double> x = rand_array({8, 9}, 1, 0.5, 1.5);  // never zero
  Generator g1(42), g2(42), g3(43);
  const Array<double> a = dropout(TD(x), 0.4, true, g1).value();
  const Array<double> b = dropout(TD(x), 0.4, true, g2).value();
  const Array<double> c = dropout(TD(x), 0.4, true, g3).value();
  CHECK(a == b);
  CHECK(a != c);
  // The generator advanced: a second draw differs from the first.
  CHECK(dropout(TD(x), 0.4, true, g1).value() != a);
}

TEST_CASE("dropout in evaluation or with p = 0 returns the input itself") {
  TD x(rand_array({3, 4}, 1, -3.0, 3.0), true);
  Generator g(1);
  CHECK(dropout(x, 0.5, false, g).node() == x.node());
  CHECK(dropout(x, 0.0, true, g).node() == x.node());
  Generator fresh(1);
  CHECK(g.next_u64() == fresh.next_u64());  // and drew nothing
}

TEST_CASE("dropout keeps about 1 - p of the entries, scaled by 1 / (1 - p)") {
  const double p = 0.3;
  const Array<double> x = xt::ones<double>({100000});
  Generator g(7);
  TD X(x, true);
  TD y = dropout(X, p, true, g);
  const double scale = 1.0 / (1.0 - p);
  std::size_t kept = 0, neither = 0;
  for (double v : y.value()) {
    kept += v != 0.0;
    neither += v != 0.0 && std::fabs(v - scale) > 1e-15;
  }
  CHECK(neither == 0);
  // Binomial(1e5, 0.7): standard deviation 145 entries; allow 5 of them.
  CHECK(std::fabs(double(kept) / 1e5 - (1.0 - p)) < 0.0075);
  // dx = dy * mask / (1 - p): here exactly y itself for dy = 1.
  y.backward(xt::ones<double>({100000}));
  CHECK(X.grad() == y.value());
}

TEST_CASE("dropout with p = 1 drops everything, with zero gradient") {
  TD x(rand_array({4, 5}, 1, -3.0, 3.0), true);
  Generator g(3);
  TD y = dropout(x, 1.0, true, g);
  CHECK(y.value() == xt::zeros<double>({4, 5}));
  y.backward(xt::ones<double>({4, 5}));
  CHECK(x.grad() == xt::zeros<double>({4, 5}));
}

TEST_CASE("dropout: float and double draw the same mask from the same seed") {
  const Array<double> x = rand_array({6, 7}, 2, 0.5, 1.5);
  Generator gd(5), gf(5);
  const Array<double> yd = dropout(TD(x), 0.25, true, gd).value();
  const Array<double> yf =
      xt::cast<double>(dropout(TF(Array<float>(xt::cast<float>(x))), 0.25, true, gf).value());
  CHECK(xt::allclose(yf, yd, 1e-6, 1e-6));
}

TEST_CASE("dropout errors name the op and p") {
  const TD x(rand_array({2, 2}, 1, -3.0, 3.0));
  Generator g(1);
  CHECK(error_of([&] { dropout(x, -0.1, true, g); }) == "dropout: p = -0.1 outside [0, 1]");
  CHECK(error_of([&] { dropout(x, 1.5, false, g); }) == "dropout: p = 1.5 outside [0, 1]");
  CHECK(starts_with(error_of([&] { dropout(x, std::nan(""), true, g); }), "dropout: p = "));
}
