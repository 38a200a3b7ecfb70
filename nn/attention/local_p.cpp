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
LocalAttentionResult<T> LocalPAttention<T>::forward(const Score<T>& score, const Tensor<T>& query,
                                                    const Tensor<T>& keys, const Tensor<T>& values,
                                                    const Allowed& real) const {
  const char* who = "LocalPAttention";
  need(who, query, "query");
  need(who, keys, "keys");
  need(who, values, "values");
  const bool step = query.ndim() == 2;  // one decoder step: (B, dq)
  const Tensor<T> q = step ? unsqueeze(query, 1) : query;
  check(q.ndim() == 3 && keys.ndim() == 3 && values.ndim() == 3 && q.dim(0) == keys.dim(0) &&
            keys.dim(0) == values.dim(0) && keys.dim(1) == values.dim(1),
        who, "expected query (B, Lq, dq) or (B, dq), keys (B, Lk, dk), values (B, Lk, dv); got ",
        shape_str(query.shape()), ", ", shape_str(keys.shape()), ", ", shape_str(values.shape()));
  const std::size_t B = q.dim(0), Lq = q.dim(1), Lk = keys.dim(1);
  check(real.shape() == Shape{B, Lk}, who, "real keys must be (B, Lk) = ", shape_str(Shape{B, Lk}), ", got ",
        shape_str(real.shape()));
  std::vector<std::size_t> lengths(B, 0);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t s = 0; s < Lk; ++s) lengths[b] += real.mask()(b, s) ? 1 : 0;
  const Tensor<T> p = centres(q, lengths);  // (B, Lq)
  // The window: real keys within D of p_t (a step function of p_t: no gradient through it).
  Mask window = Mask::from_shape({B, Lq, Lk});
  const double D = double(half_window_);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < Lq; ++i)
      for (std::size_t s = 0; s < Lk; ++s)
        window(b, i, s) = real.mask()(b, s) && std::abs(double(s) - double(p.value()(b, i))) <= D;
  const Tensor<T> a = masked_softmax(score.compare(q, score.read_keys(keys)), Allowed::where(std::move(window)));
  const Tensor<T> w = mul(a, gaussian_window(p, Lk, sigma()));
  const Tensor<T> out = matmul(w, values);
  if (step) return {squeeze(out, 1), squeeze(w, 1).detach(), squeeze(p, 1).detach()};
  return {out, w.detach(), p.detach()};
}

#define ATTNLAB_INSTANTIATE(T)                                                        \
  template Tensor<T> gaussian_window<T>(const Tensor<T>&, std::size_t, double); \
  template class LocalPAttention<T>;
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
