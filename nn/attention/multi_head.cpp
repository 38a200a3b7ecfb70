#include "nn/attention/multi_head.hpp"

#include <xtensor/xoperation.hpp>

#include "core/broadcast.hpp"
#include "nn/init.hpp"

namespace attnlab::nn {

template <class T>
MultiHeadAttention<T>::MultiHeadAttention(std::size_t d_model, std::size_t heads, Generator& gen,
                                          double dropout, bool bias)
    : w_q(d_model, d_model, gen, bias), w_k(d_model, d_model, gen, bias),
      w_v(d_model, d_model, gen, bias), w_o(d_model, d_model, gen, bias), d_model_(d_model),
      heads_(heads), p_(dropout), gen_(gen.fork()) {
  check(heads_ > 0 && d_model_ % heads_ == 0, "MultiHeadAttention", "d_model ", d_model_,
        " is not divisible by heads ", heads_);
  check(p_ >= 0.0 && p_ < 1.0, "MultiHeadAttention", "dropout must be in [0, 1), got ", p_);
  // PyTorch's nn.MultiheadAttention: Xavier-uniform projections, zero biases.
  for (Linear<T>* l : {&w_q, &w_k, &w_v, &w_o}) {
    xavier_uniform(l->weight, gen);
    if (bias) zeros(l->bias);
  }
  this->register_module("w_q", w_q);
  this->register_module("w_k", w_k);
  this->register_module("w_v", w_v);
  this->register_module("w_o", w_o);
}

template <class T>
Tensor<T> MultiHeadAttention<T>::split_heads(const Tensor<T>& x) const {
  const Shape s = x.shape();
  const long b = static_cast<long>(s[0]), l = static_cast<long>(s[1]);
  return transpose(reshape(x, {b, l, static_cast<long>(heads_), static_cast<long>(head_dim())}), 1, 2);
}

template <class T>
void MultiHeadAttention<T>::set_head_gate(Tensor<T> gate) {
  if (gate.defined())
    check(gate.shape() == Shape{heads_}, "MultiHeadAttention", "head gate must have one entry per head, (", heads_,
          "), got ", shape_str(gate.shape()));
  head_gate_ = std::move(gate);
}

// gate (h) -> (h, 1) -> (h, d_k) -> (h * d_k): column c of the merged heads belongs to head c / d_k.
template <class T>
Tensor<T> MultiHeadAttention<T>::gated(const Tensor<T>& merged) const {
  if (!head_gate_.defined()) return merged;
  const long h = static_cast<long>(heads_), dk = static_cast<long>(head_dim());
  const Tensor<T> columns = reshape(broadcast_to(reshape(head_gate_, {h, 1}), Shape{heads_, head_dim()}), {h * dk});
  return mul(merged, columns);
}

template <class T>
AttentionResult<T> MultiHeadAttention<T>::forward(const Tensor<T>& query, const Tensor<T>& key,
                                                  const Tensor<T>& value,
                                                  const MultiHeadOptions<T>& opt) {
  const char* who = "MultiHeadAttention";
  need(who, query, "query");
  need(who, key, "key");
  need(who, value, "value");
  const Shape qs = query.shape(), ks = key.shape(), vs = value.shape();
  check(qs.size() == 3 && qs[2] == d_model_, who, "query must be (B, Lq, d_model = ", d_model_,
        "), got ", shape_str(qs));
  check(ks.size() == 3 && ks[2] == d_model_, who, "key must be (B, Lk, d_model = ", d_model_,
        "), got ", shape_str(ks));
  check(vs.size() == 3 && vs[2] == d_model_, who, "value must be (B, Lk, d_model = ", d_model_,
        "), got ", shape_str(vs));
  check(qs[0] == ks[0] && ks[0] == vs[0] && ks[1] == vs[1], who,
        "batch or key lengths differ: query ", shape_str(qs), ", key ", shape_str(ks), ", value ",
        shape_str(vs));
  const std::size_t B = qs[0], Lq = qs[1], Lk = ks[1];

  AttentionOptions<T> o;
  if (opt.allowed_keys) {
    check(opt.allowed_keys->shape() == Shape{B, Lk}, who, "allowed keys must be (B, Lk) = ",
          shape_str(Shape{B, Lk}), ", got ", shape_str(opt.allowed_keys->shape()));
    o.allowed = opt.allowed_keys->reshaped({B, 1, 1, Lk});
  }
  if (opt.allowed) {
    const Shape target{B, heads_, Lq, Lk};
    check(broadcasts_to(opt.allowed->shape(), target), who, "allowed entries ",
          shape_str(opt.allowed->shape()), " do not broadcast to (B, h, Lq, Lk) = ", shape_str(target));
    o.allowed = o.allowed ? *o.allowed && *opt.allowed : *opt.allowed;
  }
  o.causal = opt.causal;
  o.bias = opt.bias;
  o.dropout = this->training() ? p_ : 0.0;
  o.generator = &gen_;

  const long Bl = static_cast<long>(B), Lql = static_cast<long>(Lq);
  if (opt.qk_transform) {
    // The transform sees per-head tensors, so this path splits the heads explicitly.
    Tensor<T> q = split_heads(w_q(query));  // (B, h, Lq, dk)
    Tensor<T> k = split_heads(w_k(key));    // (B, h, Lk, dk)
    Tensor<T> v = split_heads(w_v(value));  // (B, h, Lk, dk)
    const Shape q0 = q.shape(), k0 = k.shape();
    q = opt.qk_transform(q);
    k = opt.qk_transform(k);
    check(q.shape() == q0 && k.shape() == k0, who, "qk_transform must keep the shapes ",
          shape_str(q0), " and ", shape_str(k0), ", got ", shape_str(q.shape()), " and ",
          shape_str(k.shape()));
    AttentionResult<T> r = scaled_dot_product_attention(q, k, v, o);
    // (B, h, Lq, dk) -> (B, Lq, h, dk) -> (B, Lq, d_model): heads side by side, then w_o.
    Tensor<T> merged = reshape(transpose(r.output, 1, 2), {Bl, Lql, static_cast<long>(d_model_)});
    return {w_o(gated(merged)), r.weights};
  }
  // The heads are read in place from the projections and the output comes back merged.
  AttentionResult<T> r;
  if (query.node() == key.node() && key.node() == value.node()) {
    // Self-attention: one GEMM with [W_q; W_k; W_v] makes Q, K and V together.
    const Tensor<T> w = concat<T>({w_q.weight, w_k.weight, w_v.weight}, 0);
    const Tensor<T> b = w_q.bias.defined() ? concat<T>({w_q.bias, w_k.bias, w_v.bias}, 0)
                                           : Tensor<T>();
    r = multi_head_self_attention(linear(query, w, b), heads_, o);
  } else {
    r = multi_head_attention(w_q(query), w_k(key), w_v(value), heads_, o);
  }
  return {w_o(gated(r.output)), r.weights};
}

template <class T>
AttentionResult<T> MultiHeadAttention<T>::forward(const Tensor<T>& x, const MultiHeadOptions<T>& options) {
  return forward(x, x, x, options);
}

template class MultiHeadAttention<float>;
template class MultiHeadAttention<double>;

}  // namespace attnlab::nn
