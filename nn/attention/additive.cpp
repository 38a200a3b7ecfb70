#include "nn/attention/additive.hpp"

#include "nn/attention/masked_softmax.hpp"

namespace attnlab::nn {

template <class T>
AdditiveAttention<T>::AdditiveAttention(std::size_t query_size, std::size_t key_size,
                                        std::size_t hidden_size, Generator& gen, bool bias)
    : w_q(query_size, hidden_size, gen, bias), w_k(key_size, hidden_size, gen, bias),
      v(hidden_size, 1, gen, bias) {
  this->register_module("w_q", w_q);
  this->register_module("w_k", w_k);
  this->register_module("v", v);
}

// s[b, i, j] = v . tanh(W_q q[b, i] + W_k k[b, j]): project once, (B, Lq, H) and (B, Lk, H), then
// broadcast to (B, Lq, Lk, H) instead of projecting every (i, j) pair.
template <class T>
Tensor<T> AdditiveAttention<T>::scores(const Tensor<T>& query, const Tensor<T>& keys) const {
  const char* who = "AdditiveAttention";
  need(who, query, "query");
  need(who, keys, "keys");
  const Shape qs = query.shape(), ks = keys.shape();
  check(qs.size() == 3 && qs[2] == w_q.in_features(), who, "query must be (B, Lq, ",
        w_q.in_features(), "), got ", shape_str(qs));
  check(ks.size() == 3 && ks[2] == w_k.in_features() && ks[0] == qs[0], who,
        "keys must be (B = ", qs[0], ", Lk, ", w_k.in_features(), "), got ", shape_str(ks));
  Tensor<T> feat = attnlab::tanh(add(unsqueeze(w_q(query), 2), unsqueeze(w_k(keys), 1)));
  return squeeze(v(feat), -1);
}

template <class T>
AttentionResult<T> AdditiveAttention<T>::forward(const Tensor<T>& query, const Tensor<T>& keys,
                                                 const Tensor<T>& values,
                                                 const std::optional<Mask>& key_mask) const {
  const char* who = "AdditiveAttention";
  need(who, query, "query");
  need(who, values, "values");
  const bool step = query.ndim() == 2;  // one decoder step: (B, dq)
  const Tensor<T> q = step ? unsqueeze(query, 1) : query;
  Tensor<T> s = scores(q, keys);
  const Shape ks = keys.shape(), vs = values.shape();
  check(vs.size() == 3 && vs[0] == ks[0] && vs[1] == ks[1], who,
        "values must be (B, Lk, dv) with B, Lk of keys ", shape_str(ks), ", got ", shape_str(vs));
  Tensor<T> w = masked_softmax(s, key_mask, who);
  Tensor<T> ctx = matmul(w, values);  // (B, Lq, Lk) x (B, Lk, dv)
  if (step) return {squeeze(ctx, 1), squeeze(w, 1)};
  return {ctx, w};
}

template class AdditiveAttention<float>;
template class AdditiveAttention<double>;

}  // namespace attnlab::nn
