// An encoder-only model (BERT-like, small): embeddings, positions, encoder, then a linear head on
// every token (tagging) or on one pooled vector (classification).
#include <algorithm>

#include "nn/transformer/encoder_model.hpp"
#include "nn/transformer/embedding_init.hpp"

namespace attnlab::nn {

namespace {
const LayerConfig& checked(const EncoderModelConfig& c) {
  check(c.vocab > 0 && c.num_classes > 0, "EncoderModel",
        "vocab and num_classes must be positive, got ", c.vocab, " and ", c.num_classes);
  return c.layer;
}
}  // namespace

template <class T>
EncoderModel<T>::EncoderModel(const EncoderModelConfig& c, Generator& gen)
    : embed(c.vocab, checked(c).d_model, gen, c.pad_id),
      positional(c.positional, c.layer, c.max_length, gen, /*bidirectional=*/true, c.shaw_max_distance),
      dropout(c.layer.dropout, gen),
      encoder(c.num_layers, c.layer, gen, c.final_norm.value_or(c.layer.norm_first)),
      head(c.layer.d_model, c.num_classes, gen),
      config_(c) {
  detail::init_token_embedding(embed, gen);
  this->register_module("embed", embed);
  this->register_module("positional", positional);
  this->register_module("dropout", dropout);
  this->register_module("encoder", encoder);
  this->register_module("head", head);
}

template <class T>
Tensor<T> EncoderModel<T>::features(const IndexArray& ids, const std::optional<Allowed>& allowed_keys) {
  detail::check_ids("EncoderModel", ids);
  if (allowed_keys)
    check(allowed_keys->shape() == shape_of(ids), "EncoderModel", "allowed keys ",
          shape_str(allowed_keys->shape()), " do not match token ids ", shape_str(ids.shape()));
  Tensor<T> x = dropout(positional.embed(detail::scaled_embedding(embed, ids)));
  MultiHeadOptions<T> options;
  options.allowed_keys = allowed_keys;
  positional.attention(ids.shape()[1], options);
  return encoder.forward(x, options);
}

template <class T>
Tensor<T> EncoderModel<T>::forward(const IndexArray& ids, const std::optional<Allowed>& allowed_keys) {
  return classify(features(ids, allowed_keys), allowed_keys);
}

// Mean pooling over the real tokens: pooled = sum_l m_l h_l / max(1, sum_l m_l); a row with no
// real token pools to zero instead of 0/0.
template <class T>
Tensor<T> EncoderModel<T>::classify(const Tensor<T>& h, const std::optional<Allowed>& allowed_keys) {
  const Shape hs = h.shape();
  check(hs.size() == 3 && hs[2] == config_.layer.d_model, "EncoderModel::classify", "encoder output ", shape_str(hs),
        " is not (B, L, ", config_.layer.d_model, ")");
  if (allowed_keys)
    check(allowed_keys->shape() == Shape{hs[0], hs[1]}, "EncoderModel::classify", "allowed keys ",
          shape_str(allowed_keys->shape()), " do not match the encoder output ", shape_str(hs));
  switch (config_.pooling) {
    case Pooling::None:
      return head(h);
    case Pooling::First:
      return head(squeeze(slice(h, 1, 0, 1), 1));
    case Pooling::Mean:
      break;
  }
  if (!allowed_keys) return head(mean(h, {1}));
  const std::size_t B = hs[0], L = hs[1];
  Array<T> m = Array<T>::from_shape({B, L, 1});
  Array<T> count = Array<T>::from_shape({B, 1});
  for (std::size_t b = 0; b < B; ++b) {
    std::size_t n = 0;
    for (std::size_t l = 0; l < L; ++l) {
      const bool keep = allowed_keys->mask()(b, l);
      m(b, l, 0) = keep ? T(1) : T(0);
      n += keep;
    }
    count(b, 0) = static_cast<T>(std::max<std::size_t>(n, 1));
  }
  return head(div(sum(mul(h, Tensor<T>(std::move(m))), {1}), Tensor<T>(std::move(count))));
}

template class EncoderModel<float>;
template class EncoderModel<double>;

}  // namespace attnlab::nn
