// The sinusoidal encoding of "Attention Is All You Need".
//
// Why sines: for a fixed offset k, each pair (sin(p w), cos(p w)) at p + k is the pair at p
// rotated by the angle k w (the angle-sum identities), so PE(p + k) = M_k PE(p) with M_k
// block-diagonal and independent of p: relative offsets are linear functions of the encoding.
#include <cmath>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xsort.hpp>

#include "core/ops/elementwise.hpp"
#include "core/ops/matmul.hpp"
#include "nn/positional/sinusoidal.hpp"

namespace attnlab::nn {

double sinusoidal_frequency(std::size_t pair, std::size_t d, double base) {
  return std::pow(base, -static_cast<double>(2 * pair) / static_cast<double>(d));
}

// PE(p, 2i) = sin(p w_i), PE(p, 2i+1) = cos(p w_i), w_i = base^(-2i/d). An odd d keeps the last
// sine column without its cosine partner.
template <class T>
Array<T> sinusoidal_table(std::size_t length, std::size_t d, std::size_t offset, double base) {
  check(d > 0, "sinusoidal_table", "the model dimension must be positive, got ", d);
  Array<T> pe = Array<T>::from_shape({length, d});
  T* out = pe.data();
  std::vector<double> w((d + 1) / 2);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = sinusoidal_frequency(i, d, base);
  for (std::size_t l = 0; l < length; ++l) {
    const double p = static_cast<double>(offset + l);
    T* row = out + l * d;
    for (std::size_t i = 0; i < w.size(); ++i) {
      row[2 * i] = static_cast<T>(std::sin(p * w[i]));
      if (2 * i + 1 < d) row[2 * i + 1] = static_cast<T>(std::cos(p * w[i]));
    }
  }
  return pe;
}

// Block i acts on the pair (PE(p, 2i), PE(p, 2i+1)) = (sin pw, cos pw); the angle-sum identities
//   sin((p+k)w) =  cos(kw) sin(pw) + sin(kw) cos(pw)
//   cos((p+k)w) = -sin(kw) sin(pw) + cos(kw) cos(pw)
// give its rows. Nothing depends on p: "k places further" is one linear map at every position.
Array<double> sinusoidal_offset_rotation(std::size_t k, std::size_t d, double base) {
  check(d > 0 && d % 2 == 0, "sinusoidal_offset_rotation", "the model dimension must be even and positive, got ", d);
  Array<double> m = xt::zeros<double>({d, d});
  for (std::size_t i = 0; 2 * i < d; ++i) {
    const double angle = static_cast<double>(k) * sinusoidal_frequency(i, d, base);
    const double c = std::cos(angle), s = std::sin(angle);
    m(2 * i, 2 * i) = c, m(2 * i, 2 * i + 1) = s, m(2 * i + 1, 2 * i) = -s, m(2 * i + 1, 2 * i + 1) = c;
  }
  return m;
}

double sinusoidal_rotation_error(std::size_t k, std::size_t d, std::size_t positions, double base) {
  const Tensor<double> m(sinusoidal_offset_rotation(k, d, base));  // block-diagonal, block i turning by k w_i
  const Tensor<double> pe(sinusoidal_table<double>(positions, d, 0, base));  // PE(p) for p < positions, one per row
  // Rows are positions, so M_k acts as a right product with M_k^T.
  const Array<double> turned = matmul(pe, m, false, true).value();
  return xt::amax(xt::abs(sinusoidal_table<double>(positions, d, k, base) - turned))();
}

template <class T>
SinusoidalPositionalEncoding<T>::SinusoidalPositionalEncoding(std::size_t d, double base)
    : d_(d), base_(base) {
  check(d > 0, "SinusoidalPositionalEncoding", "the model dimension must be positive, got ", d);
}

// y = x + PE: a constant, so dx = dy (the add's backward).
template <class T>
Tensor<T> SinusoidalPositionalEncoding<T>::forward(const Tensor<T>& x, std::size_t offset) const {
  need("SinusoidalPositionalEncoding", x);
  const Shape s = x.shape();
  check(s.size() >= 2 && s.back() == d_, "SinusoidalPositionalEncoding",
        "expected input (..., L, ", d_, "), got ", shape_str(s));
  const std::size_t length = s[s.size() - 2];
  return add(x, Tensor<T>(sinusoidal_table<T>(length, d_, offset, base_)));
}

#define ATTNLAB_INSTANTIATE(T)                                                               \
  template Array<T> sinusoidal_table<T>(std::size_t, std::size_t, std::size_t, double);    \
  template class SinusoidalPositionalEncoding<T>;
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
