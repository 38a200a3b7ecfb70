#include "nn/caption/coverage.hpp"

#include "core/error.hpp"

namespace attnlab::nn {

// S_bi = sum_{t < len_b} alpha_bti;  y = (1/B) sum_bi (tau - S_bi)^2;
// dy/d alpha_bti = (1/B) 2 (tau - S_bi) (-1) for every counted step t: each of them adds to S_bi.
template <class T>
Tensor<T> doubly_stochastic_penalty(const Tensor<T>& weights, const IndexArray& lengths, double tau) {
  need("doubly_stochastic_penalty", weights, "weights");
  const Shape ws = weights.shape();
  check(ws.size() == 3, "doubly_stochastic_penalty", "weights ", shape_str(ws), " must be (B, L, N)");
  const std::size_t B = ws[0], L = ws[1], N = ws[2];
  check(lengths.dimension() == 1 && lengths.shape(0) == B, "doubly_stochastic_penalty", "lengths ",
        shape_str(Shape(lengths.shape().begin(), lengths.shape().end())), " must be (", B, ") for weights ", shape_str(ws));
  for (std::size_t b = 0; b < B; ++b)
    check(lengths(b) >= 0 && std::size_t(lengths(b)) <= L, "doubly_stochastic_penalty", "length ", lengths(b),
          " of row ", b, " is outside [0, ", L, "]");
  // gap_bi = tau - S_bi, kept for the backward pass.
  auto gap = std::make_shared<Array<T>>(xt::zeros<T>({B, N}));
  const Array<T>& a = weights.value();
  double y = 0;
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t i = 0; i < N; ++i) {
      double s = 0;
      for (std::size_t t = 0; t < std::size_t(lengths(b)); ++t) s += double(a(b, t, i));
      (*gap)(b, i) = T(tau - s);
      y += (tau - s) * (tau - s);
    }
  Array<T> value = Array<T>::from_shape(Shape{});
  value.data()[0] = T(B ? y / double(B) : 0.0);
  return record<T>("doubly_stochastic_penalty", std::move(value), {&weights}, [gap, lengths, B, L, N](Node<T>& n) {
    Array<T> d = xt::zeros<T>({B, L, N});
    const T g = n.grad.data()[0] * T(-2.0 / double(B));
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t t = 0; t < std::size_t(lengths(b)); ++t)
        for (std::size_t i = 0; i < N; ++i) d(b, t, i) = g * (*gap)(b, i);
    n.add_grad(0, std::move(d));
  });
}

template Tensor<float> doubly_stochastic_penalty<float>(const Tensor<float>&, const IndexArray&, double);
template Tensor<double> doubly_stochastic_penalty<double>(const Tensor<double>&, const IndexArray&, double);

}  // namespace attnlab::nn
