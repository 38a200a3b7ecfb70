#include "nn/attention/attention.hpp"

namespace attnlab::nn {

template <class T>
Attention<T>::Attention(std::unique_ptr<Score<T>> score, double dropout, std::uint64_t seed)
    : score_(std::move(score)), p_(dropout), gen_(seed) {
  check(score_ != nullptr, "Attention", "needs a score");
  check(p_ >= 0.0 && p_ < 1.0, "Attention", "dropout must be in [0, 1), got ", p_);
  this->register_module("score", *score_);
}

template <class T>
Memory<T> Attention<T>::memory(const Tensor<T>& keys, const Tensor<T>& values,
                               const std::optional<Allowed>& allowed_keys) const {
  const std::string who = this->who();
  need(who.c_str(), keys, "keys");
  need(who.c_str(), values, "values");
  const Shape ks = keys.shape(), vs = values.shape();
  const std::size_t dk = score_->key_size();
  check(ks.size() == 3 && ks[2] == dk, who, "keys must be (B, Lk, ", dk, "), got ", shape_str(ks));
  check(vs.size() == 3 && vs[0] == ks[0] && vs[1] == ks[1], who,
        "values must be (B, Lk, dv) with B, Lk of the keys ", shape_str(ks), ", got ", shape_str(vs));
  Memory<T> m{keys, Tensor<T>(), values, std::nullopt, score_.get()};
  if (allowed_keys) {
    check(allowed_keys->shape() == Shape{ks[0], ks[1]}, who, "allowed keys must be (B, Lk) = ",
          shape_str(Shape{ks[0], ks[1]}), ", got ", shape_str(allowed_keys->shape()));
    m.allowed = allowed_keys->reshaped({ks[0], 1, ks[1]});
  }
  // A dot-product score runs as the fused op on the keys themselves: nothing to read.
  if (!score_->dot_product_scale()) m.read = score_->read_keys(keys);
  return m;
}

template <class T>
AttentionResult<T> Attention<T>::forward(const Tensor<T>& query, const Tensor<T>& keys,
                                         const Tensor<T>& values,
                                         const std::optional<Allowed>& allowed_keys) const {
  return forward(query, memory(keys, values, allowed_keys));
}

template <class T>
AttentionResult<T> Attention<T>::forward(const Tensor<T>& query, const Memory<T>& m) const {
  const std::string who = this->who();
  // read_by is compared, never followed: the Attention that made the memory may be gone.
  check(m.read_by == score_.get(), who, "this memory was made by ",
        m.read_by ? "another Attention" : "no Attention", "; make it with this module's memory(keys, values)");
  need(who.c_str(), query, "query");
  const Shape qs = query.shape(), ks = m.keys.shape();
  const std::size_t dq = score_->query_size();
  const bool step = qs.size() == 2;  // one decoder step: (B, dq)
  check((qs.size() == 3 || step) && qs.back() == dq, who, "query must be (B, Lq, ", dq, ") or (B, ", dq,
        "), got ", shape_str(qs));
  check(qs[0] == ks[0], who, "query ", shape_str(qs), " and keys ", shape_str(ks),
        " must have the same batch size B");
  const Tensor<T> q = step ? unsqueeze(query, 1) : query;
  const double p = this->training() ? p_ : 0.0;

  AttentionResult<T> r;
  if (const std::optional<double> c = score_->dot_product_scale()) {
    AttentionOptions<T> o;
    o.allowed = m.allowed;
    o.scale = *c;
    o.dropout = p;
    o.generator = &gen_;
    r = scaled_dot_product_attention(q, m.keys, m.values, o);
  } else {
    const Tensor<T> s = score_->compare(q, m.read);
    const Tensor<T> w = m.allowed ? masked_softmax(s, *m.allowed) : softmax(s);
    r = {matmul(p > 0.0 ? attnlab::dropout(w, p, true, gen_) : w, m.values), w.detach()};
  }
  if (step) return {squeeze(r.output, 1), squeeze(r.weights, 1)};
  return r;
}

template class Attention<float>;
template class Attention<double>;

}  // namespace attnlab::nn
