// Grouped-query and multi-query attention (nn/attention/multi_head.hpp, core/ops/grouped_heads.hpp):
// repeat_heads by hand, forward and backward; kv_heads == heads is multi-head attention exactly;
// grouped attention equals multi-head attention whose key/value weights are copied across each
// group, on every path (packed self-attention, a qk_transform, cross-attention); the KV cache holds
// the kv heads only and still gives the full forward's logits; bad shapes refused by name.
#include <doctest/doctest.h>

#include <memory>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "nn/positional/rotary.hpp"
#include "nn/transformer/transformer.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn;
using attnlab::testing::contains;
using attnlab::testing::error_of;

namespace {

// Multi-head attention with the weights of `g` (4 query heads, g.kv_heads() key/value heads) and
// W_k, W_v (and their biases) copied so that query head j has key/value head j / group's rows.
std::unique_ptr<MultiHeadAttention<double>> expanded(const MultiHeadAttention<double>& g) {
  Generator gen(99);
  auto m = std::make_unique<MultiHeadAttention<double>>(g.d_model(), g.heads(), gen);
  const std::size_t d = g.d_model(), dk = g.head_dim(), kv = g.kv_dim(), group = g.heads() / g.kv_heads();
  Array<double>& w = m->in_proj_weight.mutable_value();
  Array<double>& b = m->in_proj_bias.mutable_value();
  const Array<double>& gw = g.in_proj_weight.value();
  const Array<double>& gb = g.in_proj_bias.value();
  for (std::size_t r = 0; r < d; ++r) {
    xt::view(w, r) = xt::view(gw, r);
    b(r) = gb(r);
  }
  for (std::size_t part = 0; part < 2; ++part)  // K, then V
    for (std::size_t j = 0; j < g.heads(); ++j)
      for (std::size_t c = 0; c < dk; ++c) {
        const std::size_t to = d + part * d + j * dk + c, from = d + part * kv + (j / group) * dk + c;
        xt::view(w, to) = xt::view(gw, from);
        b(to) = gb(from);
      }
  m->out_proj.weight.mutable_value() = g.out_proj.weight.value();
  m->out_proj.bias.mutable_value() = g.out_proj.bias.value();
  return m;
}

double max_abs_diff(const Array<double>& a, const Array<double>& b) {
  REQUIRE(shape_of(a) == shape_of(b));
  return double(xt::amax(xt::abs(a - b))());
}

Tensor<double> input(const Shape& s, std::uint64_t seed) {
  Generator gen(seed);
  return Tensor<double>(random_uniform<double>(s, gen, -1.0, 1.0));
}

}  // namespace

TEST_CASE("repeat_heads: each head written `repeats` times; its gradient summed back over the group") {
  const Tensor<double> x(Array<double>{{1, 2, 3, 4}}, true);  // 2 heads of 2
  const Tensor<double> y = repeat_heads(x, 2, 3);
  CHECK(y.value() == Array<double>{{1, 2, 1, 2, 1, 2, 3, 4, 3, 4, 3, 4}});
  y.backward(Array<double>{{1, 10, 100, 1000, 10000, 100000, 1, 2, 3, 4, 5, 6}});
  CHECK(x.grad() == Array<double>{{10101, 101010, 9, 12}});
  CHECK(repeat_heads(x, 2, 1).node() == x.node());  // one per group: x itself
  CHECK_OP_ERROR("repeat_heads", repeat_heads(x, 3, 2));
  CHECK(contains(error_of([&] { repeat_heads(x, 3, 2); }), "the last axis of (1,4) is not 3 heads of equal width"));
  CHECK_OP_ERROR("repeat_heads", repeat_heads(x, 2, 0));
}

TEST_CASE("kv_heads == heads is multi-head attention, draw for draw and value for value") {
  Generator g1(4), g2(4);
  MultiHeadAttention<double> plain(8, 4, g1), same(8, 4, g2, 0.0, true, 4);
  CHECK(same.in_proj_weight.value() == plain.in_proj_weight.value());
  CHECK(same.out_proj.weight.value() == plain.out_proj.weight.value());
  MultiHeadOptions<double> o;
  o.causal = true;
  const Tensor<double> x = input({2, 5, 8}, 1);
  CHECK(same.forward(x, o).output.value() == plain.forward(x, o).output.value());
  CHECK(g1.uniform() == g2.uniform());  // the generator left where it was
}

TEST_CASE("grouped attention is multi-head attention with the key/value weights shared across each group") {
  for (std::size_t kv : {std::size_t(1), std::size_t(2)}) {
    CAPTURE(kv);
    Generator gen(7);
    MultiHeadAttention<double> g(8, 4, gen, 0.0, true, kv);
    CHECK(g.in_proj_weight.shape() == Shape{8 + 2 * kv * 2, 8});
    CHECK(g.kv_dim() == kv * 2);
    auto m = expanded(g);
    const Tensor<double> x = input({2, 5, 8}, 2), mem = input({2, 3, 8}, 3);
    MultiHeadOptions<double> causal;
    causal.causal = true;
    const AttentionResult<double> a = g.forward(x, causal), b = m->forward(x, causal);
    CHECK(max_abs_diff(a.output.value(), b.output.value()) < 1e-12);
    CHECK(max_abs_diff(a.weights.value(), b.weights.value()) < 1e-12);
    RotaryEmbedding<double> rope(2);
    MultiHeadOptions<double> rotated = causal;
    rotated.qk_transform = [&](const Tensor<double>& t) { return rope.forward(t); };
    CHECK(max_abs_diff(g.forward(x, rotated).output.value(), m->forward(x, rotated).output.value()) < 1e-12);
    CHECK(max_abs_diff(g.forward(x, mem, mem).output.value(), m->forward(x, mem, mem).output.value()) < 1e-12);
  }
}

TEST_CASE("heads not divisible by kv_heads: refused, naming both") {
  Generator gen(1);
  CHECK_OP_ERROR("MultiHeadAttention", MultiHeadAttention<double>(8, 4, gen, 0.0, true, 3));
  CHECK(contains(error_of([&] { MultiHeadAttention<double>(8, 4, gen, 0.0, true, 3); }),
                 "heads 4 is not divisible by kv_heads 3"));
  CHECK(contains(error_of([&] { MultiHeadAttention<double>(8, 4, gen, 0.0, true, 8); }),
                 "heads 4 is not divisible by kv_heads 8"));
  CausalLMConfig c;
  c.vocab = 10;
  c.layer = {16, 4, 32, 0.0, true, Activation::GELU, 1e-5, /*kv_heads=*/3};
  CHECK(contains(error_of([&] { CausalLM<double>(c, gen); }), "heads 4 is not divisible by kv_heads 3"));
}

TEST_CASE("CausalLM with grouped queries: the KV cache holds kv heads only and gives the full forward's logits") {
  for (std::size_t kv : {std::size_t(1), std::size_t(2), std::size_t(4)}) {
    CAPTURE(kv);
    CausalLMConfig c;
    c.vocab = 13;
    c.num_layers = 2;
    c.max_length = 16;
    c.layer = {16, 4, 32, 0.0, true, Activation::GELU, 1e-5, kv};
    c.positional = Positional::Rotary;
    Generator gen(5);
    CausalLM<double> lm(c, gen);
    lm.eval();
    const IndexArray ids = {{1, 4, 7, 2, 9, 3, 3, 12}};
    NoGrad no_grad;
    const Array<double> full = lm.forward(ids).value();
    CausalLMCache<double> cache;
    std::vector<Tensor<double>> steps;
    for (std::size_t t = 0; t < 8; ++t) steps.push_back(lm.forward_cached(IndexArray(xt::view(ids, xt::all(), xt::range(t, t + 1))), cache));
    CHECK(max_abs_diff(full, concat(steps, 1).value()) < 1e-12);
    CHECK(cache.layers[0].keys.shape() == Shape{1, 8, kv * 4});  // kv heads of d_k = 4
    CHECK(cache.layers[1].values.shape() == Shape{1, 8, kv * 4});
    CHECK(cache.bytes() == 2 * 2 * 8 * kv * 4 * sizeof(double));  // K and V, 2 layers, 8 positions
  }
}
