// ScoreParts: the queries, keys and additive bias a MultiHeadAttention scored, kept on request
// without the tape (the explorer's neuron view reads them). Rebuilt by hand, softmax(q_h . k_h *
// scale + bias) must be the weights the forward returned: with a mask, causality and a bias, on
// the packed self-attention path, the cross-attention path, and RoPE's qk_transform in a GPT.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "nn/attention/multi_head.hpp"
#include "nn/transformer/causal_lm.hpp"

using namespace attnlab;
using namespace attnlab::nn;

namespace {

template <class T>
Tensor<T> rnd(const Shape& s, std::uint64_t seed) {
  Generator g(seed);
  return Tensor<T>(random_uniform<T>(s, g, -1.0, 1.0));
}

// The largest gap between the softmax of the scores rebuilt from `p` and `weights` (B, h, Lq, Lk).
template <class T>
double rebuilt_gap(const ScoreParts<T>& p, const Array<T>& weights, std::size_t heads) {
  const std::size_t B = weights.shape()[0], Lq = weights.shape()[2], Lk = weights.shape()[3];
  const std::size_t dk = p.queries.shape()[2] / heads;
  double gap = 0.0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t i = 0; i < Lq; ++i) {
        std::vector<double> s(Lk);
        double top = -INFINITY, total = 0.0;
        for (std::size_t j = 0; j < Lk; ++j) {
          double dot = 0.0;
          for (std::size_t c = h * dk; c < (h + 1) * dk; ++c) dot += double(p.queries(b, i, c)) * double(p.keys(b, j, c));
          s[j] = dot * p.scale + double(p.bias(b, h, i, j));
          top = std::max(top, s[j]);
        }
        for (double& v : s) total += v = std::isinf(v) ? 0.0 : std::exp(v - top);
        for (std::size_t j = 0; j < Lk; ++j) gap = std::max(gap, std::abs(s[j] / total - double(weights(b, h, i, j))));
      }
  return gap;
}

}  // namespace

TEST_CASE("ScoreParts: kept only when asked, and the softmax of their scores is the weights") {
  Generator g(3);
  MultiHeadAttention<double> att(8, 2, g);
  const Tensor<double> x = rnd<double>({2, 4, 8}, 4), memory = rnd<double>({2, 5, 8}, 5);
  att.forward(x);
  CHECK(att.score_parts().queries.dimension() == 0);  // off by default

  att.keep_score_parts(true);
  MultiHeadOptions<double> o;
  o.causal = true;
  o.bias = rnd<double>({1, 2, 4, 4}, 6);  // a bias per head, as ALiBi or T5's
  o.allowed_keys = Allowed::where(Mask{{true, true, true, true}, {true, true, false, true}});
  AttentionResult<double> r;
  {
    NoGrad no_grad;
    r = att.forward(x, o);  // the packed self-attention path
  }
  const ScoreParts<double>& p = att.score_parts();
  CHECK(p.queries.shape() == std::vector<std::size_t>{2, 4, 8});
  CHECK(p.bias.shape() == std::vector<std::size_t>{2, 2, 4, 4});
  CHECK(p.scale == doctest::Approx(0.5));  // 1 / sqrt(d_k = 4)
  CHECK(xt::amax(xt::abs(p.queries - att.q_proj(x).value()))() < 1e-12);
  CHECK(xt::amax(xt::abs(p.keys - att.k_proj(x).value()))() < 1e-12);
  CHECK(std::isinf(p.bias(0, 1, 0, 1)));  // causal: key 2 after query 1
  CHECK(std::isinf(p.bias(1, 0, 3, 2)));  // the second example's third key is masked
  CHECK(p.bias(0, 1, 3, 2) == o.bias.value()(0, 1, 3, 2));
  CHECK(rebuilt_gap(p, r.weights.value(), 2) < 1e-12);

  r = att.forward(x, memory, memory);  // cross-attention: the three row blocks
  CHECK(att.score_parts().keys.shape() == std::vector<std::size_t>{2, 5, 8});
  CHECK(xt::amax(xt::abs(att.score_parts().bias))() == 0.0);
  CHECK(rebuilt_gap(att.score_parts(), r.weights.value(), 2) < 1e-12);

  // A bias made from the queries (Shaw's relative positions) is kept in the bias, added to the fixed one.
  MultiHeadOptions<double> shaw;
  shaw.bias = rnd<double>({1, 2, 4, 4}, 7);
  shaw.query_bias = [](const Tensor<double>& q) { return reshape(sum(q, Axes{2}), {2, 1, 4, 1}); };  // q_i's sum, per query
  r = att.forward(x, shaw);
  CHECK(att.score_parts().bias(1, 0, 2, 3) ==
        doctest::Approx(shaw.bias.value()(0, 0, 2, 3) + xt::sum(xt::view(att.q_proj(x).value(), 1, 2))()));
  CHECK(rebuilt_gap(att.score_parts(), r.weights.value(), 2) < 1e-12);

  att.keep_score_parts(false);
  CHECK(att.score_parts().queries.dimension() == 0);
}

TEST_CASE("ScoreParts of a GPT with RoPE: the rotated queries and keys, every layer") {
  Generator g(9);
  CausalLMConfig c;
  c.vocab = 11, c.num_layers = 2, c.max_length = 16, c.layer = {16, 4, 32, 0.0, true, Activation::GELU, 1e-5};
  c.positional = Positional::Rotary;
  CausalLM<float> gpt(c, g);
  gpt.eval();
  gpt.blocks.keep_score_parts(true);
  {
    NoGrad no_grad;
    gpt.forward(IndexArray{{1, 4, 2, 7, 7, 3}});
  }
  const std::vector<ScoreParts<float>> parts = gpt.blocks.score_parts();
  const std::vector<Tensor<float>> weights = gpt.attention_weights();
  REQUIRE(parts.size() == 2);
  for (std::size_t l = 0; l < 2; ++l) {
    CHECK(parts[l].queries.shape() == std::vector<std::size_t>{1, 6, 16});
    CHECK(rebuilt_gap(parts[l], weights[l].value(), 4) < 1e-5);
  }
  // (Had the parts been kept before RoPE's rotation, their scores would not give these weights.)
}
