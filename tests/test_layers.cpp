// Layers and the GRU: PyTorch names and layouts, values against hand computations, the padding
// row's zero gradient, GRU against a hand-unrolled GRUCell loop, and sequence lengths.
#include <doctest/doctest.h>

#include <cmath>
#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "nn/gru.hpp"
#include "nn/layers.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using TD = Tensor<double>;

namespace {

TD rnd(const Shape& s, std::uint64_t seed) {
  Generator g(seed);
  return TD(random_uniform<double>(s, g, -1.0, 1.0));
}

std::vector<std::string> names(const Module<double>& m) {
  std::vector<std::string> out;
  for (auto& [n, p] : m.named_parameters()) out.push_back(n);
  return out;
}

double max_abs_diff(const Array<double>& a, const Array<double>& b) {
  REQUIRE(shape_of(a) == shape_of(b));
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a.data()[i] - b.data()[i]));
  return m;
}

double sigm(double x) { return 1.0 / (1.0 + std::exp(-x)); }

}  // namespace

TEST_CASE("Linear: y = x W^T + b with PyTorch's names, layout and init range") {
  Generator g(1);
  Linear<double> lin(3, 2, g);
  CHECK(names(lin) == std::vector<std::string>{"weight", "bias"});
  CHECK(lin.weight.shape() == Shape{2, 3});
  CHECK(lin.parameter_count() == 8);
  for (double v : lin.weight.value()) CHECK(std::fabs(v) <= 1.0 / std::sqrt(3.0));
  const TD x(Array<double>{{1, 2, 3}});
  const auto& W = lin.weight.value();
  const auto& b = lin.bias.value();
  const Array<double> y = lin(x).value();
  for (std::size_t o = 0; o < 2; ++o)
    CHECK(y(0, o) == doctest::Approx(W(o, 0) + 2 * W(o, 1) + 3 * W(o, 2) + b(o)));
  Linear<double> nob(3, 2, g, false);
  CHECK(names(nob) == std::vector<std::string>{"weight"});
  CHECK_FALSE(nob.bias.defined());
  CHECK_THROWS_WITH_AS(lin(TD::ones({2, 4})), doctest::Contains("Linear"), ShapeError);
}

TEST_CASE("Embedding: lookup, and the padding row gets exactly zero gradient") {
  Generator g(2);
  Embedding<double> emb(5, 3, g, Index(0));
  CHECK(names(emb) == std::vector<std::string>{"weight"});
  CHECK(xt::view(emb.weight.value(), 0, xt::all()) == Array<double>{0, 0, 0});
  const IndexArray ids = {{1, 0, 3}, {0, 3, 4}};
  TD out = emb(ids);
  CHECK(out.shape() == Shape{2, 3, 3});
  CHECK(Array<double>(xt::view(out.value(), 0, 2, xt::all())) ==
        Array<double>(xt::view(emb.weight.value(), 3, xt::all())));
  // Even a nonzero padding row gives zeros at padding positions, and learns nothing.
  xt::view(emb.weight.mutable_value(), 0, xt::all()) = 0.5;
  out = emb(ids);
  CHECK(out.value()(1, 0, 2) == 0.0);
  CHECK(out.value()(0, 1, 1) == 0.0);
  sum(mul(out, rnd({2, 3, 3}, 9))).backward();
  const Array<double>& gw = emb.weight.grad();
  for (std::size_t j = 0; j < 3; ++j) {
    CHECK(gw(0, j) == 0.0);  // exactly zero
    CHECK(gw(3, j) != 0.0);  // used twice: both contributions
    CHECK(gw(2, j) == 0.0);  // never looked up
  }
  CHECK_THROWS_WITH_AS(emb(IndexArray{5}), doctest::Contains("Embedding"), ShapeError);
  CHECK_THROWS_AS(emb(IndexArray{-1}), ShapeError);
}

TEST_CASE("LayerNorm: weight ones, bias zeros, normalizes the last axis") {
  LayerNorm<double> ln(4);
  CHECK(names(ln) == std::vector<std::string>{"weight", "bias"});
  const Array<double> y = ln(TD(Array<double>{{1, 2, 3, 4}})).value();
  double m = 0, v = 0;
  for (double a : y) m += a / 4;
  for (double a : y) v += (a - m) * (a - m) / 4;
  CHECK(m == doctest::Approx(0.0));
  CHECK(v == doctest::Approx(1.0).epsilon(1e-4));
  CHECK_THROWS_WITH_AS(ln(TD::ones({2, 3})), doctest::Contains("LayerNorm"), ShapeError);
}

TEST_CASE("Dropout: identity in eval, reproducible masks from the seed in training") {
  Generator g1(3), g2(3);
  Dropout<double> d1(0.3, g1), d2(0.3, g2);
  const TD x = TD::ones({10, 10});
  CHECK(d1(x).value() == d2(x).value());
  d1.eval();
  CHECK(d1(x).value() == x.value());
  CHECK_THROWS_AS(Dropout<double>(1.0), ShapeError);
}

TEST_CASE("FeedForward: names as PyTorch's Transformer layers, relu by hand") {
  Generator g(4);
  FeedForward<double> ff(4, 6, g, 0.1);
  CHECK(names(ff) == std::vector<std::string>{"linear1.weight", "linear1.bias", "linear2.weight",
                                              "linear2.bias"});
  CHECK(ff.parameter_count() == 4 * 6 + 6 + 6 * 4 + 4);
  ff.eval();
  const TD x = rnd({2, 4}, 5);
  const Array<double> want = ff.linear2(relu(ff.linear1(x))).value();
  CHECK(max_abs_diff(ff(x).value(), want) < 1e-12);
  FeedForward<double> gelu_ff(4, 6, g, 0.0, Activation::GELU);
  CHECK(max_abs_diff(gelu_ff(x).value(), gelu_ff.linear2(gelu(gelu_ff.linear1(x))).value()) < 1e-12);
}

TEST_CASE("GRUCell: PyTorch's equations, gates ordered r, z, n") {
  Generator g(5);
  GRUCell<double> cell(2, 3, g);
  CHECK(names(cell) == std::vector<std::string>{"weight_ih", "weight_hh", "bias_ih", "bias_hh"});
  CHECK(cell.parameter_count() == 3 * (3 * 2 + 3 * 3 + 2 * 3));
  const TD x = rnd({1, 2}, 6), h = rnd({1, 3}, 7);
  const Array<double> out = cell.forward(x, h).value();
  const auto &Wi = cell.weight_ih.value(), &Wh = cell.weight_hh.value();
  const auto &bi = cell.bias_ih.value(), &bh = cell.bias_hh.value();
  auto gi = [&](std::size_t row) {
    return Wi(row, 0) * x.value()(0, 0) + Wi(row, 1) * x.value()(0, 1) + bi(row);
  };
  auto gh = [&](std::size_t row) {
    double s = bh(row);
    for (std::size_t k = 0; k < 3; ++k) s += Wh(row, k) * h.value()(0, k);
    return s;
  };
  for (std::size_t j = 0; j < 3; ++j) {
    const double r = sigm(gi(j) + gh(j)), z = sigm(gi(3 + j) + gh(3 + j));
    const double n = std::tanh(gi(6 + j) + r * gh(6 + j));
    CHECK(out(0, j) == doctest::Approx((1 - z) * n + z * h.value()(0, j)).epsilon(1e-12));
  }
  CHECK_THROWS_WITH_AS(cell.forward(TD::ones({1, 3}), h), doctest::Contains("GRUCell"), ShapeError);
}

TEST_CASE("GRU: names, counts, and equal to a hand-unrolled GRUCell loop in both directions") {
  Generator g(8);
  GRUOptions o;
  o.num_layers = 2;
  o.bidirectional = true;
  GRU<double> gru(3, 4, g, o);
  const auto n = names(gru);
  CHECK(n.size() == 16);
  CHECK(n[0] == "weight_ih_l0");
  CHECK(n[4] == "weight_ih_l0_reverse");
  CHECK(n[8] == "weight_ih_l1");
  CHECK(n[15] == "bias_hh_l1_reverse");
  CHECK(gru.weights(1, 0).weight_ih.shape() == Shape{12, 8});  // layer 1 reads both directions
  // PyTorch's count: per layer and direction 3H (in + H + 2).
  CHECK(gru.parameter_count() == 2 * 12 * (3 + 4 + 2) + 2 * 12 * (8 + 4 + 2));

  const std::size_t B = 2, L = 4, H = 4;
  const TD x = rnd({B, L, 3}, 9), h0 = rnd({4, B, H}, 10);
  const GRUOutput<double> r = gru.forward(x, h0);
  CHECK(r.output.shape() == Shape{B, L, 2 * H});
  CHECK(r.state.shape() == Shape{4, B, H});

  // The same with cells sharing the GRU's weights.
  auto cell_of = [&](std::size_t l, std::size_t d, std::size_t in) {
    auto c = std::make_unique<GRUCell<double>>(in, H, g);
    const auto& w = gru.weights(l, d);
    c->weight_ih.mutable_value() = w.weight_ih.value();
    c->weight_hh.mutable_value() = w.weight_hh.value();
    c->bias_ih.mutable_value() = w.bias_ih.value();
    c->bias_hh.mutable_value() = w.bias_hh.value();
    return c;
  };
  TD input = x;
  for (std::size_t l = 0; l < 2; ++l) {
    std::vector<TD> dir_out;
    for (std::size_t d = 0; d < 2; ++d) {
      auto cell = cell_of(l, d, l == 0 ? 3 : 8);
      const long s = static_cast<long>(2 * l + d);
      TD h = squeeze(slice(h0, 0, s, s + 1), 0);
      std::vector<TD> steps(L);
      for (std::size_t k = 0; k < L; ++k) {
        const long t = static_cast<long>(d == 0 ? k : L - 1 - k);
        h = cell->forward(squeeze(slice(input, 1, t, t + 1), 1), h);
        steps[t] = unsqueeze(h, 1);
      }
      dir_out.push_back(concat(steps, 1));
      CHECK(max_abs_diff(h.value(), squeeze(slice(r.state, 0, s, s + 1), 0).value()) < 1e-12);
    }
    input = concat(dir_out, -1);
  }
  CHECK(max_abs_diff(input.value(), r.output.value()) < 1e-12);
  CHECK_THROWS_WITH_AS(gru.forward(TD::ones({2, 4, 5})), doctest::Contains("GRU"), ShapeError);
  CHECK_THROWS_AS(gru.forward(x, TD::ones({2, B, H})), ShapeError);
  CHECK_THROWS_AS(gru.forward(x, h0, {4}), ShapeError);
  CHECK_THROWS_AS(gru.forward(x, h0, {4, 5}), ShapeError);
}

TEST_CASE("GRU lengths: zero outputs past the length, final states at the length") {
  Generator g(11);
  GRUOptions o;
  o.bidirectional = true;
  GRU<double> gru(3, 4, g, o);
  const TD x = rnd({2, 5, 3}, 12);
  const GRUOutput<double> r = gru.forward(x, TD(), {5, 3});
  // Sequence 1 alone, truncated to its length: what packed sequences compute.
  const GRUOutput<double> alone = gru.forward(slice(slice(x, 0, 1, 2), 1, 0, 3));
  const Array<double> out1 = slice(r.output, 0, 1, 2).value();
  CHECK(max_abs_diff(Array<double>(xt::view(out1, xt::all(), xt::range(0, 3), xt::all())),
                     alone.output.value()) < 1e-12);
  for (std::size_t t = 3; t < 5; ++t)
    for (std::size_t j = 0; j < 8; ++j) CHECK(out1(0, t, j) == 0.0);
  CHECK(max_abs_diff(slice(r.state, 1, 1, 2).value(), alone.state.value()) < 1e-12);
  // Sequence 0 (full length) is unaffected by its neighbour's padding.
  const GRUOutput<double> full = gru.forward(slice(x, 0, 0, 1));
  CHECK(max_abs_diff(slice(r.output, 0, 0, 1).value(), full.output.value()) < 1e-12);

  // Padded steps receive no gradient: the output does not depend on them.
  TD xg = rnd({2, 5, 3}, 12);
  xg.set_requires_grad(true);
  auto rg = gru.forward(xg, TD(), {5, 3});
  sum(mul(rg.output, rnd({2, 5, 8}, 13))).backward();
  for (std::size_t t = 3; t < 5; ++t)
    for (std::size_t j = 0; j < 3; ++j) CHECK(xg.grad()(1, t, j) == 0.0);
  CHECK(xg.grad()(0, 4, 0) != 0.0);
}
