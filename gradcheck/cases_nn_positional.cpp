// Gradient checks of the positional methods: the two that add to the embeddings directly, and the
// four that act inside attention, checked through the attention output (scores -> softmax -> v).
#include "gradcheck/cases.hpp"
#include "nn/positional/positional.hpp"
#include "nn/transformer/transformer.hpp"

namespace attnlab::cases {

namespace {
using nn::Positional;

Inputs with_params(const nn::Module<D>& m, Inputs inputs) {
  for (const TD& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

// softmax(q k^T / sqrt(d) + bias) v for q, k, v (2, 2, 4, 4): B = 2, 2 heads, L = 4, d_k = 4.
TD attend(const Inputs& x, const TD& bias, bool causal = false) {
  AttentionOptions<D> o;
  o.bias = bias;
  o.causal = causal;
  return scaled_dot_product_attention(x[0], x[1], x[2], o).output;
}

Inputs qkv() { return {rnd({2, 2, 4, 4}, 1), rnd({2, 2, 4, 4}, 2), rnd({2, 2, 4, 4}, 3)}; }
}  // namespace

GRADCHECK_CASE("SinusoidalPositionalEncoding add", "(2,3,8) + PE(3,8)", [] {
  nn::SinusoidalPositionalEncoding<D> pe(8);
  return gradcheck([&](const Inputs& x) { return pe.forward(x[0], 2); }, {rnd({2, 3, 8}, 1)});
});

GRADCHECK_CASE("LearnedPositionalEmbedding", "(2,3,8) + W[1:4], W (5,8)", [] {
  Generator gen(7);
  nn::LearnedPositionalEmbedding<D> pos(5, 8, gen, 0.5);
  return gradcheck([&](const Inputs& x) { return pos.forward(x[0], 1); },
                   with_params(pos, {rnd({2, 3, 8}, 1)}));
});

GRADCHECK_CASE("RelativePositionBias in attention", "qkv (2,2,4,4), table (8,2)", [] {
  Generator gen(7);
  // 8 buckets, max_distance 3: distances 2 and 3 share log buckets, so the scatter-add is tested.
  nn::RelativePositionBias<D> rel(2, gen, 8, 3);
  {
    NoGrad ng;
    rel.weight().mutable_value() = random_uniform<D>({8, 2}, gen, -1.0, 1.0);
  }
  return gradcheck([&](const Inputs& x) { return attend(x, rel.forward(4, 4)); },
                   with_params(rel, qkv()));
});

GRADCHECK_CASE("RelativePositionBias causal offset", "table (6,2) -> (1,2,3,5)", [] {
  Generator gen(8);
  nn::RelativePositionBias<D> rel(2, gen, 6, 4, /*bidirectional=*/false);
  return gradcheck([&](const Inputs&) { return rel.forward(3, 5, 2); }, rel.parameters());
});

// K = 2 with offsets up to 4: the edge rows collect several distances, so the scatter-add is tested.
GRADCHECK_CASE("relative_key_scores", "q (2,3,2*4), table (5,4), index (3,5) clipped at 2", [] {
  const IndexArray index = nn::shaw_relative_index(3, 5, 1, 2);
  return gradcheck([&](const Inputs& x) { return nn::relative_key_scores(x[0], x[1], index, 2, 0.7); },
                   {rnd({2, 3, 8}, 1), rnd({5, 4}, 2)});
});

GRADCHECK_CASE("ShawRelativePosition in attention", "q, k, v (2,4,2*4), K 2", [] {
  Generator gen(9);
  nn::ShawRelativePosition<D> shaw(4, 2, gen);
  {
    NoGrad ng;
    shaw.key_table().mutable_value() = random_uniform<D>({5, 4}, gen, -1.0, 1.0);
  }
  return gradcheck(
      [&](const Inputs& x) {
        AttentionOptions<D> o;
        o.bias = shaw.forward(x[0], 4);
        return multi_head_attention(x[0], x[1], x[2], 2, o).output;
      },
      with_params(shaw, {rnd({2, 4, 8}, 1), rnd({2, 4, 8}, 2), rnd({2, 4, 8}, 3)}));
});

GRADCHECK_CASE("RotaryEmbedding", "(2,2,4,4), offset 3", [] {
  nn::RotaryEmbedding<D> rope(4);
  return gradcheck([&](const Inputs& x) { return rope.forward(x[0], 3); }, {rnd({2, 2, 4, 4}, 1)});
});

GRADCHECK_CASE("RotaryEmbedding, heads side by side", "(2,4,3 * 4), offset 2", [] {
  nn::RotaryEmbedding<D> rope(4);
  return gradcheck([&](const Inputs& x) { return rope.forward(x[0], 2); }, {rnd({2, 4, 12}, 2)});
});

GRADCHECK_CASE("RotaryEmbedding in attention", "qkv (2,2,4,4)", [] {
  nn::RotaryEmbedding<D> rope(4);
  return gradcheck(
      [&](const Inputs& x) {
        return scaled_dot_product_attention(rope.forward(x[0]), rope.forward(x[1]), x[2]).output;
      },
      qkv());
});

GRADCHECK_CASE("ALiBi in attention", "qkv (2,2,4,4), causal", [] {
  nn::ALiBi<D> alibi(2);
  return gradcheck([&](const Inputs& x) { return attend(x, alibi.forward(4, 4), true); }, qkv());
});

// The whole encoder-only model with each method: the hooks reach every layer's attention.
namespace {
GradcheckResult encoder_model(Positional p) {
  nn::EncoderModelConfig c;
  c.vocab = 6;
  c.num_classes = 3;
  c.num_layers = 1;
  c.max_length = 6;
  c.layer = {8, 2, 16, 0.0, true, nn::Activation::GELU, 1e-5};
  c.positional = p;
  c.pooling = nn::Pooling::Mean;
  Generator gen(11);
  nn::EncoderModel<D> model(c, gen);
  IndexArray ids = {{1, 2, 3, 4}, {5, 4, 0, 0}};
  const Allowed real = Allowed::where(Mask{{true, true, true, true}, {true, true, false, false}});
  return gradcheck([&](const Inputs&) { return model.forward(ids, real); }, model.parameters());
}
}  // namespace

GRADCHECK_CASE("EncoderModel learned", "ids (2,4), d 8, 2 heads", [] { return encoder_model(Positional::Learned); });
GRADCHECK_CASE("EncoderModel relative", "ids (2,4), d 8, 2 heads", [] { return encoder_model(Positional::RelativeBias); });
GRADCHECK_CASE("EncoderModel rope", "ids (2,4), d 8, 2 heads", [] { return encoder_model(Positional::Rotary); });
GRADCHECK_CASE("EncoderModel alibi", "ids (2,4), d 8, 2 heads", [] { return encoder_model(Positional::ALiBi); });
GRADCHECK_CASE("EncoderModel shaw", "ids (2,4), d 8, 2 heads, K 8", [] { return encoder_model(Positional::ShawRelative); });

}  // namespace attnlab::cases
