// A decoder-only language model (GPT): every position predicts the next token from itself and the
// positions before it. The causal mask is the whole trick: logits at t depend on tokens 0..t only,
// so one forward trains all L next-token predictions at once.
#include "nn/transformer/causal_lm.hpp"
#include "nn/transformer/embedding_init.hpp"

namespace attnlab::nn {

namespace {
const LayerConfig& checked(const CausalLMConfig& c) {
  check(c.vocab > 0, "CausalLM", "vocab must be positive, got ", c.vocab);
  return c.layer;
}
}  // namespace

template <class T>
CausalLM<T>::CausalLM(const CausalLMConfig& c, Generator& gen)
    : embed(c.vocab, checked(c).d_model, gen),
      positional(c.positional, c.layer, c.max_length, gen, /*bidirectional=*/false),
      dropout(c.layer.dropout, gen),
      blocks(c.num_layers, c.layer, gen, /*final_norm=*/c.layer.norm_first),
      config_(c) {
  detail::init_token_embedding(embed, gen);
  this->register_module("embed", embed);
  this->register_module("positional", positional);
  this->register_module("dropout", dropout);
  this->register_module("blocks", blocks);
  if (c.tie_output) {
    output_bias = this->register_parameter("output_bias", Tensor<T>::zeros({c.vocab}));
  } else {
    output = std::make_unique<Linear<T>>(c.layer.d_model, c.vocab, gen, true);
    this->register_module("output", *output);
  }
}

template <class T>
Tensor<T> CausalLM<T>::forward(const IndexArray& ids, const std::optional<Allowed>& allowed_keys) {
  detail::check_ids("CausalLM", ids);
  Tensor<T> x = dropout(positional.embed(detail::scaled_embedding(embed, ids)));
  MultiHeadOptions<T> options;
  options.allowed_keys = allowed_keys;
  options.causal = true;
  positional.attention(ids.shape()[1], options);
  Tensor<T> h = blocks.forward(x, options);
  return output ? output->forward(h) : linear(h, embed.weight, output_bias);
}

template <class T>
Tensor<T> CausalLM<T>::forward_cached(const IndexArray& ids, CausalLMCache<T>& cache) {
  detail::check_ids("CausalLM", ids);
  check(!this->training(), "CausalLM", "forward_cached is for generation: call eval() first");
  if (cache.layers.empty()) cache.layers.resize(blocks.size());
  check(cache.layers.size() == blocks.size(), "CausalLM", "the cache holds ", cache.layers.size(),
        " layers, the model ", blocks.size());
  NoGrad no_grad;
  const std::size_t offset = cache.length(), n = ids.shape()[1];
  Tensor<T> x = positional.embed(detail::scaled_embedding(embed, ids), offset);
  MultiHeadOptions<T> options;
  positional.attention(n, options, offset);
  Tensor<T> h = blocks.forward_cached(x, cache.layers, options);
  return output ? output->forward(h) : linear(h, embed.weight, output_bias);
}

template class CausalLM<float>;
template class CausalLM<double>;

}  // namespace attnlab::nn
