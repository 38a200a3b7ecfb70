#include "nn/attention/scaled_dot_product.hpp"

namespace attnlab::nn {

template <class T>
ScaledDotProductAttention<T>::ScaledDotProductAttention(double dropout, Generator& gen)
    : p_(dropout), gen_(gen.fork()) {
  check(p_ >= 0.0 && p_ < 1.0, "ScaledDotProductAttention", "dropout must be in [0, 1), got ", p_);
}

template <class T>
ScaledDotProductAttention<T>::ScaledDotProductAttention(double dropout, std::uint64_t seed)
    : p_(dropout), gen_(seed) {
  check(p_ >= 0.0 && p_ < 1.0, "ScaledDotProductAttention", "dropout must be in [0, 1), got ", p_);
}

template <class T>
AttentionResult<T> ScaledDotProductAttention<T>::forward(const Tensor<T>& q, const Tensor<T>& k,
                                                         const Tensor<T>& v,
                                                         const std::optional<Mask>& key_mask,
                                                         bool causal) {
  const char* who = "ScaledDotProductAttention";
  need(who, q, "query");
  need(who, k, "key");
  need(who, v, "value");
  const Shape qs = q.shape(), ks = k.shape(), vs = v.shape();
  check(qs.size() >= 2 && qs.size() == ks.size() && ks.size() == vs.size(), who,
        "q, k, v must be (..., L, d) with equal ranks, got ", shape_str(qs), ", ", shape_str(ks),
        ", ", shape_str(vs));
  const std::size_t r = qs.size();
  check(qs.back() == ks.back(), who, "query and key feature sizes differ: ", shape_str(qs), " vs ",
        shape_str(ks));
  check(ks[r - 2] == vs[r - 2], who, "keys and values have different lengths: ", shape_str(ks),
        " vs ", shape_str(vs));
  for (std::size_t i = 0; i + 2 < r; ++i)
    check(qs[i] == ks[i] && ks[i] == vs[i], who, "leading dims differ: ", shape_str(qs), ", ",
          shape_str(ks), ", ", shape_str(vs));

  AttentionOptions<T> o;
  if (key_mask) {
    // (..., Lk) -> (..., 1, Lk): the same keys are real for every query.
    Shape want(ks.begin(), ks.end() - 1);
    check(shape_of(*key_mask) == want, who, "key mask must be ", shape_str(want), ", got ",
          shape_str(key_mask->shape()));
    Shape ms = want;
    ms.insert(ms.end() - 1, 1);
    Mask m = *key_mask;
    m.reshape(ms);
    o.mask = std::move(m);
  }
  o.causal = causal;
  o.dropout = this->training() ? p_ : 0.0;
  o.generator = &gen_;
  return scaled_dot_product_attention(q, k, v, o);
}

template class ScaledDotProductAttention<float>;
template class ScaledDotProductAttention<double>;

}  // namespace attnlab::nn
