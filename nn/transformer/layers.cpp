// One encoder layer and one decoder layer, in both normalization placements.
//
// Post-norm:  x = norm(x + drop(sublayer(x)))     the paper; the gradient to early layers passes
//                                                 through every norm of the stack
// Pre-norm:   x = x + drop(sublayer(norm(x)))     an identity path from output to input
// Each residual's backward is dx = dy + d(sublayer branch), assembled by the tape from the ops.
#include "nn/transformer/layers.hpp"

namespace attnlab::nn {

namespace {
template <class T>
void check_input(const char* who, const Tensor<T>& x, std::size_t d, const char* what = "input") {
  need(who, x, what);
  check(x.ndim() == 3 && x.shape()[2] == d, who, "expected ", what, " (B, L, ", d, "), got ",
        shape_str(x.shape()));
}

void check_config(const char* who, const LayerConfig& c) {
  check(c.d_model > 0 && c.heads > 0 && c.d_ff > 0, who,
        "d_model, heads and d_ff must be positive, got ", c.d_model, ", ", c.heads, ", ", c.d_ff);
  check(c.dropout >= 0.0 && c.dropout < 1.0, who, "dropout must be in [0, 1), got ", c.dropout);
}
}  // namespace

template <class T>
EncoderLayer<T>::EncoderLayer(const LayerConfig& c, Generator& gen)
    : self_attn((check_config("EncoderLayer", c), c.d_model), c.heads, gen, c.dropout, true, c.kv_heads),
      linear1(c.d_model, c.d_ff, gen), dropout(c.dropout, gen), linear2(c.d_ff, c.d_model, gen),
      norm1(c.d_model, c.eps), norm2(c.d_model, c.eps),
      dropout1(c.dropout, gen), dropout2(c.dropout, gen), config_(c) {
  this->register_module("self_attn", self_attn);
  this->register_module("linear1", linear1);
  this->register_module("dropout", dropout);
  this->register_module("linear2", linear2);
  this->register_module("norm1", norm1);
  this->register_module("norm2", norm2);
  this->register_module("dropout1", dropout1);
  this->register_module("dropout2", dropout2);
}

template <class T>
template <class Attend>
Tensor<T> EncoderLayer<T>::block(const Tensor<T>& x, const Attend& attend) {
  check_input("EncoderLayer", x, config_.d_model);
  const auto ff = [&](const Tensor<T>& h) {
    return feed_forward(linear1, dropout, linear2, config_.activation, h);
  };
  if (config_.norm_first) {
    AttentionResult<T> a = attend(norm1(x));
    attention_ = a.weights;
    Tensor<T> h = add(x, dropout1(a.output));
    return add(h, dropout2(ff(norm2(h))));
  }
  AttentionResult<T> a = attend(x);
  attention_ = a.weights;
  Tensor<T> h = norm1(add(x, dropout1(a.output)));
  return norm2(add(h, dropout2(ff(h))));
}

template <class T>
Tensor<T> EncoderLayer<T>::forward(const Tensor<T>& x, const MultiHeadOptions<T>& options) {
  return block(x, [&](const Tensor<T>& h) { return self_attn.forward(h, options); });
}

template <class T>
Tensor<T> EncoderLayer<T>::forward_cached(const Tensor<T>& x, KVCache<T>& cache, const MultiHeadOptions<T>& options) {
  return block(x, [&](const Tensor<T>& h) { return self_attn.forward_cached(h, cache, options); });
}

template <class T>
DecoderLayer<T>::DecoderLayer(const LayerConfig& c, Generator& gen)
    : self_attn((check_config("DecoderLayer", c), c.d_model), c.heads, gen, c.dropout, true, c.kv_heads),
      multihead_attn(c.d_model, c.heads, gen, c.dropout),
      linear1(c.d_model, c.d_ff, gen), dropout(c.dropout, gen), linear2(c.d_ff, c.d_model, gen),
      norm1(c.d_model, c.eps), norm2(c.d_model, c.eps), norm3(c.d_model, c.eps),
      dropout1(c.dropout, gen), dropout2(c.dropout, gen), dropout3(c.dropout, gen), config_(c) {
  this->register_module("self_attn", self_attn);
  this->register_module("multihead_attn", multihead_attn);
  this->register_module("linear1", linear1);
  this->register_module("dropout", dropout);
  this->register_module("linear2", linear2);
  this->register_module("norm1", norm1);
  this->register_module("norm2", norm2);
  this->register_module("norm3", norm3);
  this->register_module("dropout1", dropout1);
  this->register_module("dropout2", dropout2);
  this->register_module("dropout3", dropout3);
}

template <class T>
Tensor<T> DecoderLayer<T>::forward(const Tensor<T>& x, const Tensor<T>& memory,
                                   const MultiHeadOptions<T>& self_options,
                                   const MultiHeadOptions<T>& cross_options) {
  check_input("DecoderLayer", x, config_.d_model, "target");
  check_input("DecoderLayer", memory, config_.d_model, "memory");
  check(x.shape()[0] == memory.shape()[0], "DecoderLayer", "target ", shape_str(x.shape()),
        " and memory ", shape_str(memory.shape()), " have different batch sizes");
  const auto ff = [&](const Tensor<T>& h) {
    return feed_forward(linear1, dropout, linear2, config_.activation, h);
  };
  if (config_.norm_first) {
    AttentionResult<T> s = self_attn.forward(norm1(x), self_options);
    Tensor<T> h = add(x, dropout1(s.output));
    AttentionResult<T> c = multihead_attn.forward(norm2(h), memory, memory, cross_options);
    h = add(h, dropout2(c.output));
    self_weights_ = s.weights;
    cross_weights_ = c.weights;
    return add(h, dropout3(ff(norm3(h))));
  }
  AttentionResult<T> s = self_attn.forward(x, self_options);
  Tensor<T> h = norm1(add(x, dropout1(s.output)));
  AttentionResult<T> c = multihead_attn.forward(h, memory, memory, cross_options);
  h = norm2(add(h, dropout2(c.output)));
  self_weights_ = s.weights;
  cross_weights_ = c.weights;
  return norm3(add(h, dropout3(ff(h))));
}

template class EncoderLayer<float>;
template class EncoderLayer<double>;
template class DecoderLayer<float>;
template class DecoderLayer<double>;

}  // namespace attnlab::nn
