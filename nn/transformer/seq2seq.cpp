// The encoder-decoder Transformer of "Attention Is All You Need".
//   memory = Encoder(drop(E_src[src] sqrt(d) + PE))
//   logits = W_out Decoder(drop(E_tgt[tgt] sqrt(d) + PE), memory) + b_out
// With a relative method (T5 bias, RoPE, ALiBi) there is no PE: each self-attention score of
// query i and key j gets its position from i - j alone (b(j - i) added, or q and k rotated by
// their positions), so a sentence longer than any trained on brings no input the layers never
// saw, only distances. The cross-attention has no positional term: the decoder finds its source
// word by what the encoder wrote at it.
// With tie_output, W_out = E_tgt (Press & Wolf 2017): the same vector represents a token going in
// and coming out, and the model has vocab * d fewer parameters.
#include <cmath>

#include "nn/transformer/seq2seq.hpp"
#include "nn/transformer/embedding_init.hpp"

namespace attnlab::nn {

namespace {
const LayerConfig& checked(const Seq2SeqConfig& c) {
  check(c.src_vocab > 0 && c.tgt_vocab > 0, "Seq2SeqTransformer",
        "vocabulary sizes must be positive, got ", c.src_vocab, " and ", c.tgt_vocab);
  check(c.positional != Positional::Learned, "Seq2SeqTransformer",
        "positional method 'learned' is not offered (a learned table has no row past its length); use ",
        "sinusoidal, relative, rotary, alibi or none");
  return c.layer;
}
}  // namespace

template <class T>
Seq2SeqTransformer<T>::Seq2SeqTransformer(const Seq2SeqConfig& c, Generator& gen)
    : src_embed(c.src_vocab, checked(c).d_model, gen, c.pad_id),
      tgt_embed(c.tgt_vocab, c.layer.d_model, gen, c.pad_id),
      positions(c.layer.d_model),
      src_dropout(c.layer.dropout, gen),
      tgt_dropout(c.layer.dropout, gen),
      encoder(c.encoder_layers, c.layer, gen, c.final_norm.value_or(c.layer.norm_first)),
      decoder(c.decoder_layers, c.layer, gen, c.final_norm.value_or(c.layer.norm_first)),
      config_(c) {
  detail::init_token_embedding(src_embed, gen);
  detail::init_token_embedding(tgt_embed, gen);
  this->register_module("src_embed", src_embed);
  this->register_module("tgt_embed", tgt_embed);
  this->register_module("positions", positions);
  this->register_module("src_dropout", src_dropout);
  this->register_module("tgt_dropout", tgt_dropout);
  this->register_module("encoder", encoder);
  this->register_module("decoder", decoder);
  if (c.positional != Positional::Sinusoidal) {
    src_positions = std::make_unique<PositionalScheme<T>>(c.positional, c.layer, 0, gen, /*bidirectional=*/true);
    tgt_positions = std::make_unique<PositionalScheme<T>>(c.positional, c.layer, 0, gen, /*bidirectional=*/false);
    this->register_module("src_positions", *src_positions);
    this->register_module("tgt_positions", *tgt_positions);
  }
  if (c.tie_output) {
    output_bias = this->register_parameter("output_bias", Tensor<T>::zeros({c.tgt_vocab}));
  } else {
    output = std::make_unique<Linear<T>>(c.layer.d_model, c.tgt_vocab, gen, true);
    this->register_module("output", *output);
  }
}

template <class T>
Tensor<T> Seq2SeqTransformer<T>::embed(const Embedding<T>& table, Dropout<T>& drop,
                                       const IndexArray& ids) {
  detail::check_ids("Seq2SeqTransformer", ids);
  const Tensor<T> x = detail::scaled_embedding(table, ids);
  return drop(config_.positional == Positional::Sinusoidal ? positions.forward(x) : x);
}

template <class T>
Tensor<T> Seq2SeqTransformer<T>::encode(const IndexArray& src, const std::optional<Allowed>& src_allowed) {
  MultiHeadOptions<T> options;
  options.allowed_keys = src_allowed;
  const Tensor<T> x = embed(src_embed, src_dropout, src);  // checks the ids: (B, S)
  if (src_positions) src_positions->attention(src.shape()[1], options);
  return encoder.forward(x, options);
}

template <class T>
Tensor<T> Seq2SeqTransformer<T>::decode(const IndexArray& tgt, const Tensor<T>& memory,
                                        const std::optional<Allowed>& src_allowed,
                                        const std::optional<Allowed>& tgt_allowed) {
  const Tensor<T> y = embed(tgt_embed, tgt_dropout, tgt);  // checks the ids: (B, T)
  MultiHeadOptions<T> self_options, cross_options;
  self_options.allowed_keys = tgt_allowed;
  self_options.causal = true;
  cross_options.allowed_keys = src_allowed;
  if (tgt_positions) tgt_positions->attention(tgt.shape()[1], self_options);
  Tensor<T> h = decoder.forward(y, memory, self_options, cross_options);
  return output ? output->forward(h) : linear(h, tgt_embed.weight, output_bias);
}

template <class T>
Tensor<T> Seq2SeqTransformer<T>::forward(const IndexArray& src, const IndexArray& tgt,
                                         const std::optional<Allowed>& src_allowed,
                                         const std::optional<Allowed>& tgt_allowed) {
  return decode(tgt, encode(src, src_allowed), src_allowed, tgt_allowed);
}

template class Seq2SeqTransformer<float>;
template class Seq2SeqTransformer<double>;

}  // namespace attnlab::nn
