// Head ablation on an encoder: gates set for the length of a call, removed afterwards.
#include <doctest/doctest.h>

#include <stdexcept>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "nn/transformer/encoder_model.hpp"
#include "nn/transformer/head_gates.hpp"

using namespace attnlab;
using namespace attnlab::nn;

namespace {
double max_abs_diff(const Array<float>& a, const Array<float>& b) { return double(xt::amax(xt::abs(a - b))()); }

EncoderModel<float> small_model() {
  EncoderModelConfig c;
  c.vocab = 5, c.num_classes = 3, c.num_layers = 2, c.pooling = Pooling::None;
  c.layer = LayerConfig{8, 2, 16, 0.0, true, Activation::ReLU, 1e-5};
  Generator gen(4);
  return EncoderModel<float>(c, gen);
}
}  // namespace

TEST_CASE("with_head_gates: all on changes nothing, a head off changes the output, the gates go away after") {
  EncoderModel<float> m = small_model();
  m.eval();
  const IndexArray ids = {{0, 1, 2, 3, 4, 1}};
  NoGrad no_grad;
  const Array<float> base = m.forward(ids).value();
  const HeadGates on = all_heads_on(m.encoder);
  REQUIRE(on.size() == 2);
  CHECK(on[1].size() == 2);
  Array<float> gated, off;
  with_head_gates(m.encoder, on, [&] { gated = m.forward(ids).value(); });
  CHECK(max_abs_diff(gated, base) < 1e-6);
  HeadGates one_off = on;
  one_off[0][1] = 0.0f;
  with_head_gates(m.encoder, one_off, [&] { off = m.forward(ids).value(); });
  CHECK(max_abs_diff(off, base) > 1e-4);
  CHECK_FALSE(m.encoder.layer(0).self_attn.head_gate().defined());
  CHECK(max_abs_diff(m.forward(ids).value(), base) == 0.0);
  CHECK_THROWS_AS(with_head_gates(m.encoder, one_off, [] { throw std::runtime_error("body"); }), std::runtime_error);
  CHECK_FALSE(m.encoder.layer(0).self_attn.head_gate().defined());  // cleared on the way out
}

TEST_CASE("with_head_gates: gates of the wrong shape are refused with the numbers") {
  EncoderModel<float> m = small_model();
  CHECK_THROWS_WITH_AS(with_head_gates(m.encoder, HeadGates(1, std::vector<float>(2, 1.0f)), [] {}),
                       doctest::Contains("gates for 1 layers, the encoder has 2"), ShapeError);
  CHECK_THROWS_WITH_AS(with_head_gates(m.encoder, HeadGates(2, std::vector<float>(3, 1.0f)), [] {}),
                       doctest::Contains("layer 0 has 2 heads, got 3 gates"), ShapeError);
}

// A score that loses each head's weight when the head is off: importance is the weight itself.
TEST_CASE("ablate_heads and prune_heads: importance per head, least important first, scores as heads go") {
  const std::vector<std::vector<double>> weight = {{0.3, 0.0}, {0.1, 0.0}};
  int calls = 0;
  const HeadScore score = [&](const HeadGates& g) {
    ++calls;
    double s = 1.0;
    for (std::size_t l = 0; l < g.size(); ++l)
      for (std::size_t h = 0; h < g[l].size(); ++h) s -= g[l][h] == 0.0f ? weight[l][h] : 0.0;
    return s;
  };
  const HeadGates on = {{1.0f, 1.0f}, {1.0f, 1.0f}};
  const HeadAblation a = ablate_heads(on, score);
  CHECK(calls == 5);  // all on, then each of the four heads alone off
  REQUIRE(a.importance.shape() == std::vector<std::size_t>{2, 2});
  CHECK(a.importance(0, 0) == doctest::Approx(0.3));
  CHECK(a.importance(1, 0) == doctest::Approx(0.1));
  CHECK(a.importance(0, 1) == 0.0);
  // The two heads worth nothing tie and keep their layer-major order.
  CHECK(a.least_important_first == std::vector<HeadId>{{0, 1}, {1, 1}, {1, 0}, {0, 0}});
  const std::vector<double> pruned = prune_heads(on, a.least_important_first, score);
  REQUIRE(pruned.size() == 4);  // 0, 1, 2 and 3 heads off: one is always left
  CHECK(pruned[0] == 1.0);
  CHECK(pruned[2] == 1.0);
  CHECK(pruned[3] == doctest::Approx(0.9));
  CHECK_THROWS_WITH_AS(ablate_heads({}, score), doctest::Contains("ablate_heads: needs at least one layer of heads"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(ablate_heads({{1.0f, 1.0f}, {1.0f}}, score),
                       doctest::Contains("ablate_heads: layer 1 has 1 heads, layer 0 has 2"), ShapeError);
  CHECK_THROWS_WITH_AS(prune_heads(on, {}, score), doctest::Contains("prune_heads: no heads to prune"), ShapeError);
  CHECK_THROWS_WITH_AS(prune_heads(on, {{0, 2}}, score), doctest::Contains("prune_heads: no head 2 in layer 0"),
                       ShapeError);
}
