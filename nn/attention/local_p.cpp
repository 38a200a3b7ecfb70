// Luong's local-p attention: a predicted centre, a window around it, a Gaussian inside the window.
#include "nn/attention/local_p.hpp"

#include <cmath>

namespace attnlab::nn {

// g = exp(-(s - p)^2 / (2 sigma^2)); dg/dp = g (s - p) / sigma^2, summed over the keys s.
template <class T>
Tensor<T> gaussian_window(const Tensor<T>& p, std::size_t keys, double sigma) {
  const char* op = "gaussian_window";
  need(op, p, "p");
  check(p.ndim() == 2 && keys > 0 && sigma > 0, op, "need p (B, Lq), keys > 0 and sigma > 0; got p ",
        shape_str(p.shape()), ", keys ", keys, ", sigma ", sigma);
  const std::size_t rows = p.dim(0) * p.dim(1);
  const T inv = T(1) / T(2 * sigma * sigma);
  Array<T> g = Array<T>::from_shape({p.dim(0), p.dim(1), keys});
  const T* pv = p.value().data();
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t s = 0; s < keys; ++s) {
      const T d = T(s) - pv[r];
      g.data()[r * keys + s] = std::exp(-d * d * inv);
    }
  return record<T>(op, Array<T>(g), {&p}, [g, rows, keys, sigma](Node<T>& n) {
    Array<T> dp = Array<T>::from_shape(n.input(0).shape());
    const T* pv = n.input(0).data();
    const T* dg = n.grad.data();
    const T inv_var = T(1) / T(sigma * sigma);
    for (std::size_t r = 0; r < rows; ++r) {
      T acc = 0;
      for (std::size_t s = 0; s < keys; ++s)
        acc += dg[r * keys + s] * g.data()[r * keys + s] * (T(s) - pv[r]) * inv_var;
      dp.data()[r] = acc;
    }
    n.add_grad(0, std::move(dp));
  });
}

template <class T>
LocalPAttention<T>::LocalPAttention(std::size_t query_size, std::size_t hidden, std::size_t half_window,
                                    Generator& gen)
    : predict((check(query_size > 0 && hidden > 0 && half_window > 0, "LocalPAttention",
                     "need query_size, hidden and half_window > 0, got ", query_size, ", ", hidden, " and ",
                     half_window),
               query_size),
              hidden, gen, /*bias=*/false),
      v(hidden, 1, gen, /*bias=*/false),
      half_window_(half_window) {
  this->register_module("predict", predict);
  this->register_module("v", v);
}

// p_t = (S_b - 1) sigmoid(v_p^T tanh(W_p h_t)): (B, Lq, dq) -> (B, Lq, 1) -> (B, Lq), scaled per row.
template <class T>
Tensor<T> LocalPAttention<T>::centres(const Tensor<T>& query, const std::vector<std::size_t>& lengths) const {
  need("LocalPAttention", query, "query");
  check(query.ndim() == 3 && lengths.size() == query.dim(0), "LocalPAttention", "query must be (B, Lq, dq) with one "
        "length per row, got ", shape_str(query.shape()), " and ", lengths.size(), " lengths");
  Array<T> last = Array<T>::from_shape({query.dim(0), std::size_t(1)});  // S_b - 1
  for (std::size_t b = 0; b < lengths.size(); ++b) {
    check(lengths[b] > 0, "LocalPAttention", "row ", b, " has no real key");
    last(b, 0) = T(lengths[b] - 1);
  }
  const Tensor<T> unit = squeeze(sigmoid(v(attnlab::tanh(predict(query)))), -1);  // (B, Lq) in (0, 1)
  return mul(unit, Tensor<T>(std::move(last)));
}

template <class T>
Tensor<T> local_query(const char* who, const Tensor<T>& query, const Tensor<T>& keys, const Tensor<T>& values,
                      const Allowed& real, std::vector<std::size_t>& lengths) {
  need(who, query, "query");
  need(who, keys, "keys");
  need(who, values, "values");
  const Tensor<T> q = query.ndim() == 2 ? unsqueeze(query, 1) : query;  // one decoder step: (B, dq)
  check(q.ndim() == 3 && keys.ndim() == 3 && values.ndim() == 3 && q.dim(0) == keys.dim(0) &&
            keys.dim(0) == values.dim(0) && keys.dim(1) == values.dim(1),
        who, "expected query (B, Lq, dq) or (B, dq), keys (B, Lk, dk), values (B, Lk, dv); got ",
        shape_str(query.shape()), ", ", shape_str(keys.shape()), ", ", shape_str(values.shape()));
  const std::size_t B = q.dim(0), Lk = keys.dim(1);
  check(real.shape() == Shape{B, Lk}, who, "real keys must be (B, Lk) = ", shape_str(Shape{B, Lk}), ", got ",
        shape_str(real.shape()));
  lengths.assign(B, 0);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < Lk; ++s) lengths[b] += real.mask()(b, s) ? 1 : 0;
  return q;
}

template <class T>
LocalAttentionResult<T> window_attention(const char* who, const Score<T>& score, const Tensor<T>& q,
                                         const Tensor<T>& keys, const Tensor<T>& values, const Allowed& real,
                                         const Tensor<T>& p, std::size_t half_window) {
  const std::size_t B = q.dim(0), Lq = q.dim(1), Lk = keys.dim(1);
  check(p.shape() == Shape{B, Lq}, who, "centres must be (B, Lq) = ", shape_str(Shape{B, Lq}), ", got ",
        shape_str(p.shape()));
  // The window: real keys within D of p_t (a step function of p_t: no gradient through it).
  Mask window = Mask::from_shape({B, Lq, Lk});
  const double D = double(half_window);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < Lq; ++i) {
      bool any = false;
      for (std::size_t s = 0; s < Lk; ++s) {
        window(b, i, s) = real.mask()(b, s) && std::abs(double(s) - double(p.value()(b, i))) <= D;
        any = any || window(b, i, s);
      }
      check(any, who, "query (", b, ", ", i, ") has no real key within ", half_window, " of its centre ",
            p.value()(b, i));
    }
  const Tensor<T> a = masked_softmax(score.compare(q, score.read_keys(keys)), Allowed::where(std::move(window)));
  const Tensor<T> w = mul(a, gaussian_window(p, Lk, half_window / 2.0));
  return {matmul(w, values), w.detach(), p.detach()};
}

template <class T>
LocalAttentionResult<T> LocalPAttention<T>::forward(const Score<T>& score, const Tensor<T>& query,
                                                    const Tensor<T>& keys, const Tensor<T>& values,
                                                    const Allowed& real) const {
  const char* who = "LocalPAttention";
  std::vector<std::size_t> lengths;
  const Tensor<T> q = local_query(who, query, keys, values, real, lengths);
  LocalAttentionResult<T> r = window_attention(who, score, q, keys, values, real, centres(q, lengths), half_window_);
  if (query.ndim() == 2) return {squeeze(r.output, 1), squeeze(r.weights, 1), squeeze(r.positions, 1)};
  return r;
}

#define ATTNLAB_INSTANTIATE(T)                                                        \
  template Tensor<T> gaussian_window<T>(const Tensor<T>&, std::size_t, double); \
  template Tensor<T> local_query<T>(const char*, const Tensor<T>&, const Tensor<T>&, const Tensor<T>&,         \
                                     const Allowed&, std::vector<std::size_t>&);                                 \
  template LocalAttentionResult<T> window_attention<T>(const char*, const Score<T>&, const Tensor<T>&,        \
                                                       const Tensor<T>&, const Tensor<T>&, const Allowed&,       \
                                                       const Tensor<T>&, std::size_t);                           \
  template class LocalPAttention<T>;
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
