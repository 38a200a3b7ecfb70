#include "nn/attention/luong.hpp"

#include "nn/attention/masked_softmax.hpp"

namespace attnlab::nn {

template <class T>
LuongAttention<T>::LuongAttention(LuongScore score, std::size_t query_size, std::size_t key_size,
                                  Generator& gen, std::size_t hidden_size)
    : score_(score), dq_(query_size), dk_(key_size) {
  const char* who = "LuongAttention";
  check(dq_ > 0 && dk_ > 0, who, "sizes must be positive, got query ", dq_, ", key ", dk_);
  switch (score_) {
    case LuongScore::Dot:
      check(dq_ == dk_, who, "dot score needs equal query and key sizes, got ", dq_, " and ", dk_);
      break;
    case LuongScore::General:
      // W (dq, dk) stored as a Linear(dk -> dq) weight: W k is linear(k, W).
      w = std::make_unique<Linear<T>>(dk_, dq_, gen, false);
      this->register_module("w", *w);
      break;
    case LuongScore::Concat:
      check(hidden_size > 0, who, "concat score needs a hidden size > 0");
      w = std::make_unique<Linear<T>>(dq_ + dk_, hidden_size, gen, false);
      v = std::make_unique<Linear<T>>(hidden_size, 1, gen, false);
      this->register_module("w", *w);
      this->register_module("v", *v);
      break;
  }
}

template <class T>
Tensor<T> LuongAttention<T>::scores(const Tensor<T>& query, const Tensor<T>& keys) const {
  const char* who = "LuongAttention";
  need(who, query, "query");
  need(who, keys, "keys");
  const Shape qs = query.shape(), ks = keys.shape();
  check(qs.size() == 3 && qs[2] == dq_, who, "query must be (B, Lq, ", dq_, "), got ", shape_str(qs));
  check(ks.size() == 3 && ks[2] == dk_ && ks[0] == qs[0], who, "keys must be (B = ", qs[0],
        ", Lk, ", dk_, "), got ", shape_str(ks));
  switch (score_) {
    case LuongScore::Dot:  // s = q k^T
      return matmul(query, keys, false, true);
    case LuongScore::General:  // s = q (W k)^T = q W k^T
      return matmul(query, (*w)(keys), false, true);
    case LuongScore::Concat: {
      // W [q; k] = W[:, :dq] q + W[:, dq:] k: two projections broadcast over (i, j) rather than
      // Lq * Lk concatenated pairs. Slicing the weight keeps one parameter, as the formula has.
      const long dq = static_cast<long>(dq_), d = static_cast<long>(dq_ + dk_);
      Tensor<T> pq = linear(query, slice(w->weight, 1, 0, dq));  // (B, Lq, H)
      Tensor<T> pk = linear(keys, slice(w->weight, 1, dq, d));   // (B, Lk, H)
      Tensor<T> feat = attnlab::tanh(add(unsqueeze(pq, 2), unsqueeze(pk, 1)));
      return squeeze((*v)(feat), -1);
    }
  }
  fail(who, "unknown score");
}

template <class T>
AttentionResult<T> LuongAttention<T>::forward(const Tensor<T>& query, const Tensor<T>& keys,
                                              const Tensor<T>& values,
                                              const std::optional<Mask>& key_mask) const {
  const char* who = "LuongAttention";
  need(who, query, "query");
  need(who, values, "values");
  need(who, keys, "keys");
  const bool step = query.ndim() == 2;  // one decoder step: (B, dq)
  Tensor<T> s = scores(step ? unsqueeze(query, 1) : query, keys);
  const Shape ks = keys.shape(), vs = values.shape();
  check(vs.size() == 3 && vs[0] == ks[0] && vs[1] == ks[1], who,
        "values must be (B, Lk, dv) with B, Lk of keys ", shape_str(ks), ", got ", shape_str(vs));
  Tensor<T> wts = masked_softmax(s, key_mask, who);
  Tensor<T> ctx = matmul(wts, values);
  if (step) return {squeeze(ctx, 1), squeeze(wts, 1)};
  return {ctx, wts};
}

template class LuongAttention<float>;
template class LuongAttention<double>;

}  // namespace attnlab::nn
