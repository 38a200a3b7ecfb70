// The attention modules: golden parameter counts and values, names, equivalences (one head =
// scaled dot-product attention on the projections; every score family against its formula),
// causality, permutation equivariance, the mask contract (zero weight, zero gradient, zero
// context for an all-masked row), shape errors.
#include <doctest/doctest.h>

#include <cmath>
#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "nn/attention/attention.hpp"
#include "nn/attention/multi_head.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using TD = Tensor<double>;

namespace {

TD rnd(const Shape& s, std::uint64_t seed, bool grad = false) {
  Generator g(seed);
  return TD(random_uniform<double>(s, g, -1.0, 1.0), grad);
}

double max_abs_diff(const Array<double>& a, const Array<double>& b) {
  REQUIRE(shape_of(a) == shape_of(b));
  double m = 0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a.data()[i] - b.data()[i]));
  return m;
}

bool all_finite(const Array<double>& a) {
  for (double v : a)
    if (!std::isfinite(v)) return false;
  return true;
}

std::vector<std::string> names(const Module<double>& m) {
  std::vector<std::string> out;
  for (auto& [n, p] : m.named_parameters()) out.push_back(n);
  return out;
}

Attention<double> attention(const std::string& score, std::size_t dq, std::size_t dk, Generator& g,
                            std::size_t hidden = 4, double dropout = 0.0) {
  return Attention<double>(make_score<double>(score, dq, dk, g, hidden), dropout);
}

void set_matrix(const TD& w, double diag) {
  auto& v = w.mutable_value();
  v.fill(0.0);
  for (std::size_t i = 0; i < v.shape()[0]; ++i) v(i, i) = diag;
}

}  // namespace

TEST_CASE("golden parameter counts and names") {
  Generator g(1);
  const Attention<double> add = attention("additive", 64, 64, g, 64);
  CHECK(add.parameter_count() == 8256);
  CHECK(names(add) == std::vector<std::string>{"score.w_q.weight", "score.w_k.weight", "score.v.weight"});
  GeneralScore<double> general(64, 64, g);
  CHECK(general.parameter_count() == 4096);
  CHECK(names(general) == std::vector<std::string>{"w.weight"});
  CHECK(general.w.weight.shape() == Shape{64, 64});
  CHECK(attention("dot", 8, 8, g).parameter_count() == 0);
  CHECK(attention("scaled dot", 8, 8, g).parameter_count() == 0);
  CHECK(attention("concat", 6, 5, g, 4).parameter_count() == 4 * 11 + 4);
  MultiHeadAttention<double> mha(64, 8, g);
  CHECK(mha.parameter_count() == 16640);
  // nn.MultiheadAttention's state_dict keys, in its order.
  CHECK(names(mha) == std::vector<std::string>{"in_proj_weight", "in_proj_bias", "out_proj.weight",
                                               "out_proj.bias"});
  CHECK(mha.in_proj_weight.shape() == Shape{192, 64});
  CHECK(mha.in_proj_bias.shape() == Shape{192});
  const MultiHeadAttention<double> no_bias(64, 8, g, 0.0, false);
  CHECK(no_bias.parameter_count() == 4 * 64 * 64);
  CHECK(names(no_bias) == std::vector<std::string>{"in_proj_weight", "out_proj.weight"});
  CHECK(mha.summary().find("16,640") != std::string::npos);
}

TEST_CASE("dot score: the course's golden weights, decoder-step query") {
  Generator g(2);
  const Attention<double> att = attention("dot", 3, 3, g);
  const TD q(Array<double>{{0.2, 0.5, 0.3}});
  const TD k(Array<double>{{{0.1, 0.4, 0.5}, {0.2, 0.3, 0.5}, {0.3, 0.2, 0.5}}});
  const Array<double> s = att.score()(unsqueeze(q, 1), k).value();
  CHECK(s(0, 0, 0) == doctest::Approx(0.37));
  CHECK(s(0, 0, 2) == doctest::Approx(0.31));
  const auto r = att.forward(q, k, k);
  CHECK(r.weights.shape() == Shape{1, 3});
  CHECK(r.output.shape() == Shape{1, 3});
  CHECK(r.weights.value()(0, 0) == doctest::Approx(0.343382).epsilon(1e-5));
  CHECK(r.weights.value()(0, 1) == doctest::Approx(0.333233).epsilon(1e-5));
  CHECK(r.weights.value()(0, 2) == doctest::Approx(0.323385).epsilon(1e-5));
}

TEST_CASE("MultiHeadAttention, one head, W = 0.5 I: the course's 'The cat sat' values") {
  Generator g(3);
  MultiHeadAttention<double> att(4, 1, g, 0.0, false);
  // [W_q; W_k; W_v] = [0.5 I; 0.5 I; 0.5 I]: row i of each block holds 0.5 in column i.
  auto& packed = att.in_proj_weight.mutable_value();
  packed.fill(0.0);
  for (std::size_t i = 0; i < 12; ++i) packed(i, i % 4) = 0.5;
  set_matrix(att.out_proj.weight, 1.0);
  const TD x(Array<double>{{{0.2, 0.1, 0.3, 0.1}, {0.5, 0.3, 0.2, 0.4}, {0.3, 0.2, 0.4, 0.3}}});
  const auto r = att.forward(x);
  const Array<double> w = {{{{.331115, .334443, .334443}, {.326556, .339458, .333986},
                             {.328765, .336247, .334988}}}};
  const Array<double> out = {{{.166889, .100166, .15, .133611}, {.167618, .100645, .149726, .134317},
                              {.167186, .100374, .149937, .133936}}};
  CHECK(max_abs_diff(r.weights.value(), w) < 2e-6);
  CHECK(max_abs_diff(r.output.value(), out) < 2e-6);
}

TEST_CASE("MultiHeadAttention with one head equals scaled_dot_product_attention on the projections") {
  Generator g(4);
  MultiHeadAttention<double> att(6, 1, g);
  const TD q = rnd({2, 3, 6}, 5), k = rnd({2, 4, 6}, 6), v = rnd({2, 4, 6}, 7);
  const auto r = att.forward(q, k, v);
  const auto ref = scaled_dot_product_attention(att.q_proj(q), att.k_proj(k), att.v_proj(v));
  CHECK(max_abs_diff(r.output.value(), att.out_proj(ref.output).value()) < 1e-12);
  CHECK(max_abs_diff(r.weights.value(), unsqueeze(ref.weights, 1).value()) < 1e-12);
  CHECK(r.weights.shape() == Shape{2, 1, 3, 4});

  // And Attention with the scaled dot score is the op, its allowed keys read as (B, 1, Lk).
  const Attention<double> sdpa = attention("scaled dot", 6, 6, g);
  const Mask km = {{true, true, false, true}, {true, false, false, false}};
  AttentionOptions<double> o;
  o.allowed = Allowed::where(Mask(xt::view(km, xt::all(), xt::newaxis(), xt::all())));
  const auto a = sdpa(q, k, v, Allowed::where(km)), b = scaled_dot_product_attention(q, k, v, o);
  CHECK(max_abs_diff(a.output.value(), b.output.value()) == 0.0);
}

TEST_CASE("the packed in-projection: one GEMM for self-attention equals the three row blocks") {
  Generator g(8);
  MultiHeadAttention<double> att(6, 2, g);
  {
    NoGrad ng;  // nonzero biases, so a misplaced bias row would show
    att.in_proj_bias.mutable_value() = random_uniform<double>({18}, g, -1.0, 1.0);
  }
  const TD x = rnd({2, 3, 6}, 9, true), y(x.value(), true);  // y: same values, another node
  // q_proj is rows [0, 6) of in_proj_weight and in_proj_bias, k_proj [6, 12), v_proj [12, 18).
  const Array<double>& w = att.in_proj_weight.value();
  const Array<double>& b = att.in_proj_bias.value();
  const Array<double> wv = xt::view(w, xt::range(12, 18), xt::all());
  const Array<double> bv = xt::view(b, xt::range(12, 18));
  CHECK(max_abs_diff(att.v_proj(x).value(), linear(x, TD(wv), TD(bv)).value()) < 1e-15);
  // forward(x) takes the packed path (one node for q, k, v); forward(y, y, y) with three
  // separate projections would too, so use distinct nodes of equal values for key and value.
  const TD y2(x.value(), true), y3(x.value(), true);
  const TD gout = rnd({2, 3, 6}, 10);
  sum(mul(att.forward(x).output, gout)).backward();
  const Array<double> packed_grad = att.in_proj_weight.grad(), packed_bias = att.in_proj_bias.grad();
  att.zero_grad();
  sum(mul(att.forward(y, y2, y3).output, gout)).backward();
  CHECK(max_abs_diff(att.in_proj_weight.grad(), packed_grad) < 1e-13);
  CHECK(max_abs_diff(att.in_proj_bias.grad(), packed_bias) < 1e-13);
  CHECK(max_abs_diff(x.grad(), Array<double>(y.grad() + y2.grad() + y3.grad())) < 1e-13);
  // With a qk_transform (RoPE's place), q and k pass through it between projection and scores:
  // self-attention on one node and on three nodes of equal values agree in outputs and gradients.
  MultiHeadOptions<double> turned;
  const TD c = rnd({3, 6}, 11);
  turned.qk_transform = [&](const TD& t) { return mul(t, c); };
  for (const TD* t : {&x, &y, &y2, &y3}) t->zero_grad();
  att.zero_grad();
  const TD one_out = att.forward(x, turned).output;
  sum(mul(one_out, gout)).backward();
  const Array<double> one_grad = att.in_proj_weight.grad(), one_x = x.grad();
  att.zero_grad();
  const TD three_out = att.forward(y, y2, y3, turned).output;
  sum(mul(three_out, gout)).backward();
  CHECK(max_abs_diff(one_out.value(), three_out.value()) < 1e-14);
  CHECK(max_abs_diff(att.in_proj_weight.grad(), one_grad) < 1e-13);
  CHECK(max_abs_diff(one_x, Array<double>(y.grad() + y2.grad() + y3.grad())) < 1e-13);
  CHECK_THROWS_WITH_AS(att.q_proj(rnd({2, 3, 5}, 1)),
                       "MultiHeadAttention: expected input (..., d_model = 6), got (2,3,5)", ShapeError);
}

// The composed form, as a lesson derives it and as an oracle: fill the hidden scores with -1e9,
// softmax, then multiply by the allowed entries (so a fully hidden row comes out zero).
TD composed_masked_softmax(const TD& s, const Mask& allowed) {
  const Mask hidden = !allowed;
  return mul(softmax(masked_fill(s, hidden, -1e9), -1), TD(Array<double>(xt::cast<double>(allowed))));
}

// The scores of each family written straight from its formula, op by op: no fused op, no
// reading of the keys ahead of the query. Concat builds every [q_i; k_j] pair literally.
TD formula_scores(const Score<double>& score, const TD& q, const TD& k) {
  const std::string& name = score.name();
  if (name == "additive") return dynamic_cast<const AdditiveScore<double>&>(score).steps(q, k).back().value;
  if (name == "dot") return matmul(q, k, false, true);
  if (name == "scaled dot") return mul(matmul(q, k, false, true), 1.0 / std::sqrt(double(q.shape()[2])));
  if (name == "general") return matmul(q, dynamic_cast<const GeneralScore<double>&>(score).w(k), false, true);
  REQUIRE(name == "concat");
  const auto& c = dynamic_cast<const ConcatScore<double>&>(score);
  const std::size_t B = q.shape()[0], Lq = q.shape()[1], Lk = k.shape()[1];
  const TD qs = broadcast_to(unsqueeze(q, 2), {B, Lq, Lk, q.shape()[2]});
  const TD ks = broadcast_to(unsqueeze(k, 1), {B, Lq, Lk, k.shape()[2]});
  return squeeze(c.v(attnlab::tanh(c.w(concat<double>({qs, ks}, -1)))), -1);
}

TEST_CASE("every score family equals its formula, composed by hand, in outputs and gradients") {
  Generator g(30);
  const Mask km = {{true, true, false, true}, {false, false, false, false}};
  Mask km3 = km;
  km3.reshape({2, 1, 4});
  for (const std::string name : {"additive", "dot", "scaled dot", "general", "concat"}) {
    CAPTURE(name);
    const std::size_t dk = name == "dot" || name == "scaled dot" ? 3 : 5;
    Attention<double> att = attention(name, 3, dk, g);
    TD q = rnd({2, 2, 3}, 31, true), k = rnd({2, 4, dk}, 32, true), v = rnd({2, 4, 2}, 33, true);
    TD q2 = rnd({2, 2, 3}, 31, true), k2 = rnd({2, 4, dk}, 32, true), v2 = rnd({2, 4, 2}, 33, true);
    const TD up = rnd({2, 2, 2}, 34);
    const auto r = att(q, k, v, Allowed::where(km));
    sum(mul(r.output, up)).backward();
    std::vector<Array<double>> param_grads;
    for (const TD& p : att.parameters()) param_grads.push_back(p.grad());
    att.zero_grad();
    const TD w = composed_masked_softmax(formula_scores(att.score(), q2, k2), km3);
    const TD o = matmul(w, v2);
    sum(mul(o, up)).backward();
    CHECK(max_abs_diff(r.weights.value(), w.value()) < 1e-14);
    CHECK(max_abs_diff(r.output.value(), o.value()) < 1e-14);
    CHECK(max_abs_diff(q.grad(), q2.grad()) < 1e-13);
    CHECK(max_abs_diff(k.grad(), k2.grad()) < 1e-13);
    CHECK(max_abs_diff(v.grad(), v2.grad()) < 1e-13);
    for (std::size_t i = 0; i < param_grads.size(); ++i)
      CHECK(max_abs_diff(param_grads[i], att.parameters()[i].grad()) < 1e-13);
  }
}

TEST_CASE("memory: keys read once, asked many times, the same bits as asking with the keys") {
  Generator g(35);
  for (const std::string name : {"additive", "scaled dot", "general", "concat"}) {
    CAPTURE(name);
    const std::size_t dk = name == "scaled dot" ? 3 : 5;
    const Attention<double> att = attention(name, 3, dk, g);
    const TD k = rnd({2, 4, dk}, 36), v = rnd({2, 4, 2}, 37);
    const Allowed real = Allowed::where(Mask{{true, true, true, false}, {true, true, true, true}});
    const Memory<double> m = att.memory(k, v, real);
    for (std::uint64_t step = 0; step < 3; ++step) {
      const TD q = rnd({2, 3}, 38 + step);  // one decoder query per step
      const auto direct = att(q, k, v, real), remembered = att.forward(q, m);
      CHECK(direct.output.value() == remembered.output.value());
      CHECK(direct.weights.value() == remembered.weights.value());
    }
    const std::string batch_error =
        "query (3,3) and keys (2,4," + std::to_string(dk) + ") must have the same batch size B";
    CHECK_THROWS_WITH_AS(att.forward(rnd({3, 3}, 39), m), doctest::Contains(batch_error.c_str()), ShapeError);
    // A twin of the same kind and sizes has other weights: asking it with this memory would
    // compare its queries with keys read by these weights, so it refuses.
    const Attention<double> twin = attention(name, 3, dk, g);
    CHECK_THROWS_WITH_AS(twin.forward(rnd({2, 3}, 40), m),
                         doctest::Contains("this memory was made by another Attention"), ShapeError);
    CHECK_THROWS_WITH_AS(att.forward(rnd({2, 3}, 40), Memory<double>{}),
                         doctest::Contains("made by no Attention"), ShapeError);
  }
  // The module that made a memory may be gone: the check compares, it never follows the pointer
  // (the sanitizer build would catch a read of the freed score).
  const Attention<double> att = attention("additive", 3, 5, g);
  Memory<double> orphan;
  {
    const Attention<double> gone = attention("additive", 3, 5, g);
    orphan = gone.memory(rnd({2, 4, 5}, 41), rnd({2, 4, 2}, 42));
  }
  CHECK_THROWS_WITH_AS(att.forward(rnd({2, 3}, 43), orphan),
                       doctest::Contains("this memory was made by another Attention"), ShapeError);
}

TEST_CASE("masked_softmax equals the composed fill-softmax-multiply form, any axis") {
  const TD x = rnd({2, 3, 4}, 40, true), x2 = rnd({2, 3, 4}, 40, true);
  const Mask hidden = {{{false, true, false, false}}, {{true, true, true, true}}};  // (2, 1, 4)
  const TD up = rnd({2, 3, 4}, 41);
  const TD y = masked_softmax(x, Allowed::except(hidden));
  sum(mul(y, up)).backward();
  const TD y2 = composed_masked_softmax(x2, Mask(xt::broadcast(!hidden, Shape{2, 3, 4})));
  sum(mul(y2, up)).backward();
  CHECK(max_abs_diff(y.value(), y2.value()) < 1e-15);
  CHECK(max_abs_diff(x.grad(), x2.grad()) < 1e-15);
  // Axis 1, through a transpose of the composed form.
  Mask rows = {true, false, true};
  rows.reshape({3, 1});
  const TD z = masked_softmax(x, Allowed::where(rows), 1);
  const TD z2 = transpose(composed_masked_softmax(transpose(x, 1, 2), Mask(xt::broadcast(xt::transpose(rows), Shape{2, 4, 3}))), 1, 2);
  CHECK(max_abs_diff(z.value(), z2.value()) < 1e-15);
  CHECK_THROWS_WITH_AS(masked_softmax(x, Allowed::where(Mask{true, false})),
                       doctest::Contains("masked_softmax: allowed entries of shape (2)"), ShapeError);
}

TEST_CASE("multi-head shapes: cross attention with Lq != Lk, weights per head") {
  Generator g(8);
  MultiHeadAttention<double> att(8, 2, g);
  const auto r = att.forward(rnd({2, 3, 8}, 1), rnd({2, 5, 8}, 2), rnd({2, 5, 8}, 3));
  CHECK(r.output.shape() == Shape{2, 3, 8});
  CHECK(r.weights.shape() == Shape{2, 2, 3, 5});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t h = 0; h < 2; ++h)
      for (std::size_t i = 0; i < 3; ++i) {
        double s = 0;
        for (std::size_t j = 0; j < 5; ++j) s += r.weights.value()(b, h, i, j);
        CHECK(s == doctest::Approx(1.0));
      }
}

TEST_CASE("causal: the output at t does not depend on inputs after t (gradients exactly 0)") {
  Generator g(9);
  MultiHeadAttention<double> att(8, 2, g);
  MultiHeadOptions<double> o;
  o.causal = true;
  for (long t = 0; t < 4; ++t) {
    TD x = rnd({2, 4, 8}, 10, true);
    const TD y = att.forward(x, o).output;
    sum(mul(slice(y, 1, t, t + 1), rnd({2, 1, 8}, 11))).backward();
    const Array<double>& gx = x.grad();
    for (std::size_t b = 0; b < 2; ++b)
      for (std::size_t s = 0; s < 4; ++s) {
        double m = 0;
        for (std::size_t j = 0; j < 8; ++j) m = std::max(m, std::fabs(gx(b, s, j)));
        if (static_cast<long>(s) > t) CHECK(m == 0.0);
        else CHECK(m > 0.0);
      }
  }
}

TEST_CASE("self-attention without positions is permutation-equivariant") {
  Generator g(12);
  MultiHeadAttention<double> att(8, 2, g);
  const TD x = rnd({1, 5, 8}, 13);
  const IndexArray perm = {3, 0, 4, 1, 2};
  const TD y = att.forward(x).output;
  const TD y_perm = att.forward(index_select(x, 1, perm)).output;
  CHECK(max_abs_diff(y_perm.value(), index_select(y, 1, perm).value()) < 1e-12);
}

TEST_CASE("masked keys: zero weight and zero gradient; a fully masked row: zero context, no NaN") {
  Generator g(14);
  const Mask km = {{true, false, true, false}, {false, false, false, false}};
  auto run = [&](const std::string& score, std::size_t dk) {
    const Attention<double> att = attention(score, 3, dk, g);
    TD q = rnd({2, 2, 3}, 15, true), k = rnd({2, 4, dk}, 16, true), v = rnd({2, 4, 2}, 17, true);
    const auto r = att(q, k, v, Allowed::where(km));
    sum(mul(r.output, rnd({2, 2, 2}, 18))).backward();
    CHECK(all_finite(r.output.value()));
    CHECK(all_finite(q.grad()));
    for (std::size_t i = 0; i < 2; ++i)
      for (std::size_t j = 0; j < 4; ++j)
        if (!km(0, j)) CHECK(r.weights.value()(0, i, j) == 0.0);
    for (std::size_t j = 0; j < 4; ++j) {
      if (km(0, j)) continue;
      for (std::size_t c = 0; c < dk; ++c) CHECK(k.grad()(0, j, c) == 0.0);
      for (std::size_t c = 0; c < 2; ++c) CHECK(v.grad()(0, j, c) == 0.0);
    }
    // Batch 1: every key masked.
    for (double w : Array<double>(xt::view(r.weights.value(), 1))) CHECK(w == 0.0);
    for (double c : Array<double>(xt::view(r.output.value(), 1))) CHECK(c == 0.0);
    for (double d : Array<double>(xt::view(q.grad(), 1))) CHECK(d == 0.0);
    for (double d : Array<double>(xt::view(k.grad(), 1))) CHECK(d == 0.0);
  };
  run("additive", 5);
  run("dot", 3);
  run("scaled dot", 3);
  run("general", 5);
  run("concat", 5);

  MultiHeadAttention<double> mha(4, 2, g);
  MultiHeadOptions<double> o;
  o.allowed_keys = Allowed::where(km);
  TD q = rnd({2, 3, 4}, 19, true), k = rnd({2, 4, 4}, 20, true), v = rnd({2, 4, 4}, 21, true);
  const auto r = mha.forward(q, k, v, o);
  sum(mul(r.output, rnd({2, 3, 4}, 22))).backward();
  CHECK(all_finite(r.output.value()));
  for (std::size_t j : {1, 3})
    for (std::size_t c = 0; c < 4; ++c) {
      CHECK(k.grad()(0, j, c) == 0.0);
      CHECK(v.grad()(0, j, c) == 0.0);
    }
  for (double w : Array<double>(xt::view(r.weights.value(), 1))) CHECK(w == 0.0);
  // All keys masked: the heads' context is zero, so the output is out_proj's bias alone.
  for (std::size_t i = 0; i < 3; ++i)
    for (std::size_t c = 0; c < 4; ++c) CHECK(r.output.value()(1, i, c) == mha.out_proj.bias.value()(c));
}

TEST_CASE("padding + causal together, score bias and the qk hook reach the scores") {
  Generator g(23);
  MultiHeadAttention<double> att(4, 2, g);
  const TD x = rnd({1, 3, 4}, 24);
  MultiHeadOptions<double> o;
  o.causal = true;
  o.allowed_keys = Allowed::where(Mask{{false, true, true}});
  const auto r = att.forward(x, o);
  const Array<double>& w = r.weights.value();
  for (std::size_t h = 0; h < 2; ++h) {
    for (std::size_t j = 0; j < 3; ++j) CHECK(w(0, h, 0, j) == 0.0);  // query 0 sees only key 0: masked
    CHECK(w(0, h, 1, 1) == doctest::Approx(1.0));                     // query 1 sees only key 1
    CHECK(w(0, h, 2, 0) == 0.0);
  }
  // A large negative bias on key 2 removes it; a hook that zeroes q makes the weights uniform.
  MultiHeadOptions<double> b;
  Array<double> bias = xt::zeros<double>({3, 3});
  xt::view(bias, xt::all(), 2) = -1e4;
  b.bias = TD(bias);
  b.qk_transform = [](const TD& t) { return mul(t, 0.0); };
  const Array<double> wb = att.forward(x, b).weights.value();
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(wb(0, 0, i, 0) == doctest::Approx(0.5));
    CHECK(wb(0, 1, i, 2) == doctest::Approx(0.0));
  }
}

TEST_CASE("dropout on the attention weights follows the training flag") {
  Generator g(25);
  MultiHeadAttention<double> att(8, 2, g, 0.5);
  const TD x = rnd({2, 4, 8}, 26);
  const Array<double> y1 = att.forward(x).output.value();
  att.eval();
  const Array<double> e1 = att.forward(x).output.value(), e2 = att.forward(x).output.value();
  CHECK(e1 == e2);
  CHECK(max_abs_diff(y1, e1) > 1e-3);
  for (const std::string score : {"scaled dot", "additive"}) {
    Attention<double> single = attention(score, 4, 4, g, 4, 0.5);
    const TD q = rnd({2, 3, 4}, 27);
    const Array<double> t1 = single(q, q, q).output.value();
    single.eval();
    const Array<double> e = single(q, q, q).output.value();
    CHECK(max_abs_diff(e, single(q, q, q).output.value()) == 0.0);
    CHECK(max_abs_diff(t1, e) > 1e-3);
    if (score == "scaled dot") CHECK(max_abs_diff(e, scaled_dot_product_attention(q, q, q).output.value()) == 0.0);
  }
}

TEST_CASE("head gate: ones change nothing, a zero removes exactly that head's share of the output") {
  Generator g(40);
  MultiHeadAttention<double> att(8, 2, g);
  const TD x = rnd({2, 3, 8}, 41);
  const Array<double> plain = att.forward(x).output.value();
  att.set_head_gate(TD(Array<double>{1.0, 1.0}));
  CHECK(max_abs_diff(att.forward(x).output.value(), plain) == 0.0);
  // Head 1 off: out_proj sees head 0's columns only. Built by hand from the fused op's merged heads.
  att.set_head_gate(TD(Array<double>{1.0, 0.0}));
  const Array<double> gated = att.forward(x).output.value();
  Array<double> merged = multi_head_attention(att.q_proj(x), att.k_proj(x), att.v_proj(x), 2).output.value();
  xt::view(merged, xt::all(), xt::all(), xt::range(4, 8)) = 0.0;
  CHECK(max_abs_diff(gated, att.out_proj(TD(merged)).value()) < 1e-14);
  att.set_head_gate(TD());  // undefined: no gate again
  CHECK(max_abs_diff(att.forward(x).output.value(), plain) == 0.0);
  CHECK_THROWS_WITH_AS(att.set_head_gate(TD(Array<double>{1.0, 1.0, 1.0})),
                       "MultiHeadAttention: head gate must have one entry per head, (2), got (3)", ShapeError);
}

TEST_CASE("bad input: clear ShapeErrors naming the module and the sizes") {
  Generator g(28);
  CHECK_THROWS_WITH_AS(MultiHeadAttention<double>(10, 3, g),
                       "MultiHeadAttention: d_model 10 is not divisible by heads 3", ShapeError);
  CHECK_THROWS_AS(MultiHeadAttention<double>(8, 0, g), ShapeError);
  MultiHeadAttention<double> att(8, 2, g);
  const TD x = rnd({2, 3, 8}, 1);
  CHECK_THROWS_WITH_AS(att.forward(rnd({2, 3, 6}, 1)), doctest::Contains("MultiHeadAttention"), ShapeError);
  CHECK_THROWS_AS(att.forward(x, rnd({2, 4, 8}, 2), rnd({2, 5, 8}, 3)), ShapeError);
  CHECK_THROWS_AS(att.forward(x, rnd({3, 4, 8}, 2), rnd({3, 4, 8}, 3)), ShapeError);
  MultiHeadOptions<double> bad;
  bad.allowed_keys = Allowed::where(Mask{{true, true}, {true, true}});
  CHECK_THROWS_WITH_AS(att.forward(x, bad), doctest::Contains("(2,3)"), ShapeError);
  MultiHeadOptions<double> bad_attn;
  bad_attn.allowed = Allowed::where(Mask(xt::ones<bool>({4, 3})));
  CHECK_THROWS_AS(att.forward(x, bad_attn), ShapeError);

  const Attention<double> add = attention("additive", 3, 5, g);
  const TD k = rnd({2, 4, 5}, 4), v = rnd({2, 4, 2}, 5);
  CHECK_THROWS_WITH_AS(add(rnd({2, 2, 4}, 6), k, v),
                       "Attention (additive): query must be (B, Lq, 3) or (B, 3), got (2,2,4)", ShapeError);
  CHECK_THROWS_WITH_AS(add(rnd({2, 2, 3}, 6), rnd({2, 4, 3}, 7), v),
                       "Attention (additive): keys must be (B, Lk, 5), got (2,4,3)", ShapeError);
  CHECK_THROWS_AS(add(rnd({2, 2, 3}, 6), k, rnd({2, 3, 2}, 7)), ShapeError);
  CHECK_THROWS_WITH_AS(add(rnd({2, 2, 3}, 6), k, v, Allowed::where(Mask{{true, true, true}})),
                       doctest::Contains("allowed keys must be (B, Lk) = (2,4), got (1,3)"), ShapeError);
  CHECK_THROWS_WITH_AS(make_score<double>("dot", 3, 4, g), doctest::Contains("make_score: dot score"), ShapeError);
  CHECK_THROWS_WITH_AS(make_score<double>("cosine", 3, 4, g), doctest::Contains("unknown score 'cosine'"), ShapeError);
  CHECK_THROWS_WITH_AS(make_score<double>("additive", 3, 4, g), doctest::Contains("hidden size"), ShapeError);
  const Attention<double> sdpa = attention("scaled dot", 4, 4, g);
  CHECK_THROWS_WITH_AS(sdpa(rnd({2, 3, 4}, 1), rnd({2, 3, 5}, 2), rnd({2, 3, 5}, 3)),
                       doctest::Contains("Attention (scaled dot)"), ShapeError);
  CHECK_THROWS_AS(Attention<double>(nullptr), ShapeError);
}
