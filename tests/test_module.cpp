// Module: hierarchical names, registration order, tied parameters, counts, summary, train/eval,
// zero_grad, registration errors; and the seeded initializers.
#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "core/ops.hpp"
#include "nn/init.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using TD = Tensor<double>;

namespace {

struct Block : Module<double> {
  Linear<double> proj;
  Dropout<double> drop;
  Block(Generator& g) : proj(3, 2, g), drop(0.5, g) {
    register_module("proj", proj);
    register_module("drop", drop);
  }
};

struct Net : Module<double> {
  Tensor<double> scale;
  Block first, second;
  Net(Generator& g) : first(g), second(g) {
    scale = register_parameter("scale", TD::ones({2}));
    register_module("layers.0", first);
    register_module("layers.1", second);
  }
};

struct Tied : Module<double> {
  Linear<double> a, b;
  Tied(Generator& g) : a(2, 2, g, false), b(2, 2, g, false) {
    register_module("a", a);
    register_module("b", b);
  }
};

struct BadNames : Module<double> {
  void dup() {
    register_parameter("w", TD::ones({1}));
    register_parameter("w", TD::ones({1}));
  }
  void dotted() { register_parameter("a.b", TD::ones({1})); }
  void empty() { register_parameter("", TD::ones({1})); }
  void self() { register_module("me", *this); }
};

}  // namespace

TEST_CASE("named_parameters: hierarchical names in registration order, own parameters first") {
  Generator g(1);
  Net net(g);
  std::vector<std::string> names;
  for (auto& [n, p] : net.named_parameters()) names.push_back(n);
  const std::vector<std::string> want = {"scale", "layers.0.proj.weight", "layers.0.proj.bias",
                                         "layers.1.proj.weight", "layers.1.proj.bias"};
  CHECK(names == want);
  CHECK(net.parameters().size() == 5);
  CHECK(net.parameter_count() == 2 + 2 * (3 * 2 + 2));
  for (auto& p : net.parameters()) CHECK(p.requires_grad());
  // The member handle and the registry share one node.
  CHECK(net.named_parameters()[1].second.node() == net.first.proj.weight.node());

  std::vector<std::string> mods;
  for (auto& [n, m] : net.named_modules()) mods.push_back(n);
  CHECK(mods == std::vector<std::string>{"layers.0", "layers.0.proj", "layers.0.drop", "layers.1",
                                         "layers.1.proj", "layers.1.drop"});
}

TEST_CASE("a tensor registered twice (tied weights) is listed and counted once") {
  struct Sharing : Module<double> {
    Linear<double> a;
    Sharing(Generator& g) : a(2, 3, g, false) {
      register_module("a", a);
      register_parameter("tied", a.weight);
    }
  };
  Generator g(2);
  Sharing s(g);
  CHECK(s.parameters().size() == 1);
  CHECK(s.parameter_count() == 6);
  CHECK(s.named_parameters()[0].first == "tied");
  Tied t(g);
  CHECK(t.parameters().size() == 2);  // two distinct tensors of the same shape are both listed
}

TEST_CASE("summary: one row per parameter with shape and count, then the total") {
  Generator g(3);
  Block b(g);
  const std::string s = b.summary();
  CHECK(s.find("proj.weight") != std::string::npos);
  CHECK(s.find("(2,3)") != std::string::npos);
  CHECK(s.find("proj.bias") != std::string::npos);
  CHECK(s.find("total") != std::string::npos);
  // rows: header, rule, 2 parameters, rule, total
  CHECK(std::count(s.begin(), s.end(), '\n') == 6);
  const auto total_line = s.substr(s.find("total"));
  CHECK(total_line.find(" 8\n") != std::string::npos);

  struct Big : Module<double> {
    Big() { register_parameter("w", TD::zeros({128, 130})); }
  };
  Big big;
  CHECK(big.summary().find("16,640") != std::string::npos);  // thousands grouped
}

TEST_CASE("train/eval is recursive and switches dropout on and off") {
  Generator g(4);
  Net net(g);
  CHECK(net.training());
  CHECK(net.first.drop.training());
  net.eval();
  CHECK_FALSE(net.training());
  CHECK_FALSE(net.first.drop.training());
  CHECK_FALSE(net.second.proj.training());
  const TD x = TD::ones({4, 50});
  CHECK(net.first.drop(x).value() == x.value());  // eval: identity
  net.train();
  CHECK(net.second.drop.training());
  const Array<double> y = net.first.drop(x).value();
  std::size_t zeros = 0;
  for (double v : y) {
    CHECK((v == 0.0 || v == doctest::Approx(2.0)));  // inverted dropout: kept values scaled by 2
    zeros += v == 0.0;
  }
  CHECK(zeros > 60);
  CHECK(zeros < 140);
}

TEST_CASE("zero_grad drops every parameter's gradient") {
  Generator g(5);
  Block b(g);
  b.eval();
  sum(b.proj(TD::ones({2, 3}))).backward();
  CHECK(b.proj.weight.has_grad());
  CHECK(b.proj.bias.has_grad());
  b.zero_grad();
  CHECK_FALSE(b.proj.weight.has_grad());
  CHECK_FALSE(b.proj.bias.has_grad());
}

TEST_CASE("registration errors name the module and the name") {
  BadNames m;
  CHECK_THROWS_AS(m.dup(), ShapeError);
  CHECK_THROWS_WITH_AS(m.dotted(), doctest::Contains("a.b"), ShapeError);
  CHECK_THROWS_AS(m.empty(), ShapeError);
  CHECK_THROWS_AS(m.self(), ShapeError);
}

TEST_CASE("initializers: seeded, with the right ranges and moments") {
  Generator g1(7), g2(7);
  TD a = TD::zeros({64, 32}), b = TD::zeros({64, 32});
  xavier_uniform(a, g1);
  xavier_uniform(b, g2);
  CHECK(a.value() == b.value());  // same seed, same weights
  const double bound = std::sqrt(6.0 / (64 + 32));
  double mx = 0;
  for (double v : a.value()) mx = std::max(mx, std::fabs(v));
  CHECK(mx <= bound);
  CHECK(mx > 0.9 * bound);

  TD n = TD::zeros({200, 100});
  normal(n, g1);  // N(0, 0.02^2)
  double s = 0, s2 = 0;
  for (double v : n.value()) s += v, s2 += v * v;
  const double mean = s / n.size(), sd = std::sqrt(s2 / n.size() - mean * mean);
  CHECK(std::fabs(mean) < 1e-3);
  CHECK(sd == doctest::Approx(0.02).epsilon(0.03));

  TD t = TD::zeros({200, 100});
  trunc_normal(t, g1, 0.0, 1.0);
  double tmax = 0;
  for (double v : t.value()) tmax = std::max(tmax, std::fabs(v));
  CHECK(tmax <= 2.0);
  CHECK(tmax > 1.9);

  TD z = TD::ones({3}), o = TD::zeros({3});
  zeros(z);
  ones(o);
  CHECK(z.value() == Array<double>{0, 0, 0});
  CHECK(o.value() == Array<double>{1, 1, 1});
  CHECK_THROWS_AS(xavier_uniform(TD::zeros({5}), g1), ShapeError);  // no fans for a vector
  CHECK(fans({8, 3, 2, 2}).in == 12);
  CHECK(fans({8, 3, 2, 2}).out == 32);
}
