#include "nn/init.hpp"

#include <cmath>

namespace attnlab::nn {

Fans fans(const Shape& shape) {
  check(shape.size() >= 2, "init", "fan in and fan out need at least 2 dims, got ", shape_str(shape));
  std::size_t receptive = 1;
  for (std::size_t i = 2; i < shape.size(); ++i) receptive *= shape[i];
  return {shape[1] * receptive, shape[0] * receptive};
}

template <class T>
void xavier_uniform(const Tensor<T>& t, Generator& gen, double gain) {
  need("xavier_uniform", t, "tensor");
  const Fans f = fans(t.shape());
  const double a = gain * std::sqrt(6.0 / static_cast<double>(f.in + f.out));
  uniform(t, gen, -a, a);
}

template <class T>
void normal(const Tensor<T>& t, Generator& gen, double mean, double std) {
  need("normal", t, "tensor");
  for (T& v : t.mutable_value()) v = static_cast<T>(gen.normal(mean, std));
}

template <class T>
void trunc_normal(const Tensor<T>& t, Generator& gen, double mean, double std, double lo, double hi) {
  need("trunc_normal", t, "tensor");
  check(lo < hi && std > 0.0, "trunc_normal", "needs lo < hi and std > 0, got lo ", lo, ", hi ", hi,
        ", std ", std);
  // Redraw outside the bounds: the conditional distribution, exactly. With bounds +-2 std a draw
  // is kept 95% of the time, so the loop is short.
  for (T& v : t.mutable_value()) {
    double z = gen.normal();
    while (z < lo || z > hi) z = gen.normal();
    v = static_cast<T>(mean + std * z);
  }
}

template <class T>
void uniform(const Tensor<T>& t, Generator& gen, double lo, double hi) {
  need("uniform", t, "tensor");
  for (T& v : t.mutable_value()) v = static_cast<T>(gen.uniform(lo, hi));
}

template <class T>
void constant(const Tensor<T>& t, T value) {
  need("constant", t, "tensor");
  t.mutable_value().fill(value);
}

template <class T>
void zeros(const Tensor<T>& t) {
  constant(t, T(0));
}

template <class T>
void ones(const Tensor<T>& t) {
  constant(t, T(1));
}

#define ATTNLAB_INSTANTIATE(T)                                                            \
  template void xavier_uniform<T>(const Tensor<T>&, Generator&, double);                  \
  template void normal<T>(const Tensor<T>&, Generator&, double, double);                  \
  template void trunc_normal<T>(const Tensor<T>&, Generator&, double, double, double, double); \
  template void uniform<T>(const Tensor<T>&, Generator&, double, double);                 \
  template void constant<T>(const Tensor<T>&, T);                                         \
  template void zeros<T>(const Tensor<T>&);                                               \
  template void ones<T>(const Tensor<T>&);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
