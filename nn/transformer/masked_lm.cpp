#include "nn/transformer/masked_lm.hpp"

#include "core/ops.hpp"

namespace attnlab::nn {

template <class T>
MaskedLMHead<T>::MaskedLMHead(const Tensor<T>& embedding, double eps, Generator& gen)
    : transform(embedding.shape().at(1), embedding.shape().at(1), gen),
      norm(embedding.shape().at(1), eps),
      embedding_(embedding) {
  this->register_module("transform", transform);
  this->register_module("norm", norm);
  bias = this->register_parameter("bias", Tensor<T>::zeros({embedding.shape()[0]}));
}

template <class T>
Tensor<T> MaskedLMHead<T>::forward(const Tensor<T>& h) const {
  check(h.ndim() == 2 && h.shape()[1] == transform.in_features(), "MaskedLMHead", "expected features (N, ",
        transform.in_features(), "), got ", shape_str(h.shape()));
  return linear(norm(gelu(transform(h))), embedding_, bias);
}

template <class T>
MaskedLM<T>::MaskedLM(const EncoderModelConfig& config, Generator& gen)
    : model(config, gen), mlm(model.embed.weight, config.layer.eps, gen) {
  this->register_module("model", model);
  this->register_module("mlm", mlm);
}

template <class T>
Tensor<T> MaskedLM<T>::forward(const IndexArray& ids, const std::optional<Allowed>& allowed_keys,
                               const IndexArray& positions) {
  check(positions.dimension() == 1, "MaskedLM", "expected positions (N), got ", shape_str(positions.shape()));
  const Tensor<T> h = model.features(ids, allowed_keys);  // (B, L, d)
  const std::size_t tokens = ids.shape()[0] * ids.shape()[1];
  for (Index p : positions)
    check(p >= 0 && std::size_t(p) < tokens, "MaskedLM", "position ", p, " outside the ", tokens,
          " tokens of ids ", shape_str(ids.shape()));
  const Tensor<T> rows = reshape(h, {long(tokens), long(h.shape()[2])});
  return mlm.forward(index_select(rows, 0, positions));
}

template class MaskedLMHead<float>;
template class MaskedLMHead<double>;
template class MaskedLM<float>;
template class MaskedLM<double>;

}  // namespace attnlab::nn
