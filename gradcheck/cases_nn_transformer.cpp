// Gradient checks of the Transformer blocks, stacks and models, every parameter and every
// differentiable input included (tiny sizes: d 8, 2 heads, FFN 16, dropout off).
#include "gradcheck/cases.hpp"
#include "nn/transformer/transformer.hpp"
#include "nn/vit.hpp"

namespace attnlab::cases {

namespace {
Inputs with_params(const nn::Module<D>& m, Inputs inputs) {
  for (const TD& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

nn::LayerConfig tiny(bool norm_first) {
  return {8, 2, 16, 0.0, norm_first, nn::Activation::ReLU, 1e-5};
}

// Batch 1 has its last key padded.
Allowed pad4() { return Allowed::where(Mask{{true, true, true, true}, {true, true, true, false}}); }

GradcheckResult encoder_layer(bool norm_first) {
  Generator gen(21);
  nn::EncoderLayer<D> layer(tiny(norm_first), gen);
  nn::MultiHeadOptions<D> o;
  o.allowed_keys = pad4();
  return gradcheck([&](const Inputs& x) { return layer.forward(x[0], o); },
                   with_params(layer, {rnd({2, 4, 8}, 1)}));
}

GradcheckResult decoder_layer(bool norm_first) {
  Generator gen(22);
  nn::DecoderLayer<D> layer(tiny(norm_first), gen);
  nn::MultiHeadOptions<D> self, cross;
  self.causal = true;
  cross.allowed_keys = pad4();
  return gradcheck([&](const Inputs& x) { return layer.forward(x[0], x[1], self, cross); },
                   with_params(layer, {rnd({2, 3, 8}, 1), rnd({2, 4, 8}, 2)}));
}
}  // namespace

GRADCHECK_CASE("EncoderLayer pre-norm", "(2,4,8), padded keys", [] { return encoder_layer(true); });
GRADCHECK_CASE("EncoderLayer post-norm", "(2,4,8), padded keys", [] { return encoder_layer(false); });
GRADCHECK_CASE("DecoderLayer pre-norm", "(2,3,8) x memory (2,4,8)", [] { return decoder_layer(true); });
GRADCHECK_CASE("DecoderLayer post-norm", "(2,3,8) x memory (2,4,8)", [] { return decoder_layer(false); });

GRADCHECK_CASE("Encoder", "2 pre-norm layers + final norm, (2,4,8)", [] {
  Generator gen(23);
  nn::Encoder<D> enc(2, tiny(true), gen, true);
  nn::MultiHeadOptions<D> o;
  o.allowed_keys = pad4();
  return gradcheck([&](const Inputs& x) { return enc.forward(x[0], o); },
                   with_params(enc, {rnd({2, 4, 8}, 1)}));
});

GRADCHECK_CASE("Decoder", "2 post-norm layers, (2,3,8) x (2,4,8)", [] {
  Generator gen(24);
  nn::Decoder<D> dec(2, tiny(false), gen);
  return gradcheck(
      [&](const Inputs& x) { return dec.forward(x[0], x[1], std::nullopt, pad4()); },
      with_params(dec, {rnd({2, 3, 8}, 1), rnd({2, 4, 8}, 2)}));
});

// PyTorch's nn.Transformer: both stacks with their final norms; source padding reaches the
// encoder and the cross-attention, target padding and causality the decoder's self-attention.
GRADCHECK_CASE("Transformer", "src (2,4,8), tgt (2,3,8), 1+1 post-norm layers, final norms", [] {
  Generator gen(30);
  nn::TransformerConfig c;
  c.encoder_layers = c.decoder_layers = 1;
  c.layer = tiny(false);
  nn::Transformer<D> model(c, gen);
  const Allowed tgt_real = Allowed::where(Mask{{true, true, true}, {true, true, false}});
  return gradcheck([&](const Inputs& x) { return model.forward(x[0], x[1], pad4(), tgt_real); },
                   with_params(model, {rnd({2, 4, 8}, 1), rnd({2, 3, 8}, 2)}));
});

GRADCHECK_CASE("Seq2SeqTransformer tied", "src (2,4), tgt (2,3), vocab 7/6, 1+1 layers", [] {
  nn::Seq2SeqConfig c;
  c.src_vocab = 7;
  c.tgt_vocab = 6;
  c.encoder_layers = c.decoder_layers = 1;
  c.layer = tiny(false);
  c.tie_output = true;
  c.pad_id = 0;
  Generator gen(25);
  nn::Seq2SeqTransformer<D> model(c, gen);
  {
    NoGrad ng;  // a non-zero output bias, so its gradient path is not a special case
    model.output_bias.mutable_value() = random_uniform<D>({6}, gen, -0.5, 0.5);
  }
  IndexArray src = {{1, 2, 3, 4}, {5, 6, 1, 0}}, tgt = {{1, 2, 3}, {4, 5, 0}};
  const Allowed src_real = pad4(), tgt_real = Allowed::where(Mask{{true, true, true}, {true, true, false}});
  return gradcheck([&](const Inputs&) { return model.forward(src, tgt, src_real, tgt_real); },
                   model.parameters());
});

// The same model with position inside self-attention (T5 bias tables for the encoder and the
// causal decoder, RoPE, ALiBi) instead of the sinusoidal table: every parameter, the bias tables
// included, through padding on both sides.
namespace {
GradcheckResult seq2seq_positional(nn::Positional method) {
  nn::Seq2SeqConfig c;
  c.src_vocab = 7;
  c.tgt_vocab = 6;
  c.encoder_layers = c.decoder_layers = 1;
  c.layer = tiny(false);
  c.pad_id = 0;
  c.positional = method;
  Generator gen(31);
  nn::Seq2SeqTransformer<D> model(c, gen);
  IndexArray src = {{1, 2, 3, 4}, {5, 6, 1, 0}}, tgt = {{1, 2, 3}, {4, 5, 0}};
  const Allowed src_real = pad4(), tgt_real = Allowed::where(Mask{{true, true, true}, {true, true, false}});
  return gradcheck([&](const Inputs&) { return model.forward(src, tgt, src_real, tgt_real); }, model.parameters());
}
}  // namespace

GRADCHECK_CASE("Seq2SeqTransformer relative", "src (2,4), tgt (2,3), T5 bias in both stacks", [] {
  return seq2seq_positional(nn::Positional::RelativeBias);
});
GRADCHECK_CASE("Seq2SeqTransformer rotary", "src (2,4), tgt (2,3), RoPE in both stacks", [] {
  return seq2seq_positional(nn::Positional::Rotary);
});
GRADCHECK_CASE("Seq2SeqTransformer alibi", "src (2,4), tgt (2,3), ALiBi in both stacks", [] {
  return seq2seq_positional(nn::Positional::ALiBi);
});

GRADCHECK_CASE("CausalLM tied", "ids (2,4), vocab 6, 2 pre-norm layers", [] {
  nn::CausalLMConfig c;
  c.vocab = 6;
  c.num_layers = 2;
  c.max_length = 4;
  c.layer = tiny(true);
  Generator gen(26);
  nn::CausalLM<D> model(c, gen);
  IndexArray ids = {{1, 2, 3, 4}, {5, 4, 3, 2}};
  return gradcheck([&](const Inputs&) { return model.forward(ids); }, model.parameters());
});

GRADCHECK_CASE("PatchEmbedding", "(2,1,8,8), patch 4 -> (2,4,8)", [] {
  Generator gen(27);
  nn::PatchEmbedding<D> pe(1, 4, 8, gen);
  return gradcheck([&](const Inputs& x) { return pe.forward(x[0]); },
                   with_params(pe, {rnd({2, 1, 8, 8}, 1)}));
});

GRADCHECK_CASE("PatchEmbedding rgb", "(2,3,4,6), patch 2 -> (2,6,5)", [] {
  Generator gen(28);
  nn::PatchEmbedding<D> pe(3, 2, 5, gen);
  return gradcheck([&](const Inputs& x) { return pe.forward(x[0]); },
                   with_params(pe, {rnd({2, 3, 4, 6}, 1)}));
});

// A ViT of (2, 8, 8) images, patch 4, d 8, 2 heads, 1 layer, 3 classes, end to end.
GradcheckResult tiny_vit(nn::Readout readout, std::uint64_t seed) {
  nn::ViTConfig c;
  c.image_height = c.image_width = 8;
  c.channels = 1;
  c.patch = 4;
  c.num_classes = 3;
  c.num_layers = 1;
  c.layer = {8, 2, 16, 0.0, true, nn::Activation::GELU, 1e-6};
  c.readout = readout;
  Generator gen(seed);
  nn::ViT<D> vit(c, gen);
  return gradcheck([&](const Inputs& x) { return vit.forward(x[0]); },
                   with_params(vit, {rnd({2, 8, 8}, 1)}));
}

GRADCHECK_CASE("ViT tiny end to end", "(2,8,8), patch 4, d 8, 2 heads, 1 layer, 3 classes",
               [] { return tiny_vit(nn::Readout::class_token, 29); });

GRADCHECK_CASE("ViT tiny, patch-mean readout", "the same, the head on the patches' mean",
               [] { return tiny_vit(nn::Readout::patch_mean, 30); });

}  // namespace attnlab::cases
