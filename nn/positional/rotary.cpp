// Rotary position embedding (Su et al., RoFormer). Each pair (x[2i], x[2i+1]) of a query or key
// at position p is rotated by the angle p * theta_i, theta_i = base^(-2i/d). A rotation by a
// and one by b satisfy R_a^T R_b = R_(b-a), so q_p . k_s = q^T R_(s-p) k: the score sees only the
// offset s - p, and needs no table, so it works for any length.
#include <cmath>

#include "nn/positional/rotary.hpp"

namespace attnlab::nn {

namespace {
// cos and sin of (offset + l) * theta_i, laid out (L, d/2).
template <class T>
void rotary_angles(std::size_t length, std::size_t d, std::size_t offset, double base,
                   std::vector<T>& cos_t, std::vector<T>& sin_t) {
  const std::size_t half = d / 2;
  cos_t.resize(length * half);
  sin_t.resize(length * half);
  for (std::size_t i = 0; i < half; ++i) {
    const double theta = std::pow(base, -static_cast<double>(2 * i) / static_cast<double>(d));
    for (std::size_t l = 0; l < length; ++l) {
      const double a = static_cast<double>(offset + l) * theta;
      cos_t[l * half + i] = static_cast<T>(std::cos(a));
      sin_t[l * half + i] = static_cast<T>(std::sin(a));
    }
  }
}

// Rotate every pair of x (rows of `width` entries, heads of d side by side, L rows per block) by
// +angle (sign = 1) or -angle. Pair i of every head turns alike.
template <class T>
void rotate_pairs(const T* x, T* y, std::size_t blocks, std::size_t length, std::size_t width,
                  std::size_t d, const std::vector<T>& c, const std::vector<T>& s, T sign) {
  const std::size_t half = d / 2;
  for (std::size_t b = 0; b < blocks; ++b)
    for (std::size_t l = 0; l < length; ++l) {
      const T* cr = c.data() + l * half;
      const T* sr = s.data() + l * half;
      for (std::size_t head = 0; head < width; head += d) {
        const T* xr = x + (b * length + l) * width + head;
        T* yr = y + (b * length + l) * width + head;
        for (std::size_t i = 0; i < half; ++i) {
          const T x0 = xr[2 * i], x1 = xr[2 * i + 1], ci = cr[i], si = sign * sr[i];
          yr[2 * i] = x0 * ci - x1 * si;
          yr[2 * i + 1] = x0 * si + x1 * ci;
        }
      }
    }
}
}  // namespace

// y[2i] = x[2i] cos a - x[2i+1] sin a,  y[2i+1] = x[2i] sin a + x[2i+1] cos a,  a = p theta_i.
// y = R x with R orthogonal, so dx = R^T dy: the same rotation with -a.
template <class T>
Tensor<T> rotary(const Tensor<T>& x, std::size_t offset, double base, std::size_t head_dim) {
  need("rotary", x);
  const Shape s = x.shape();
  check(s.size() >= 2 && s.back() > 0, "rotary", "expected input (..., L, d), got ", shape_str(s));
  const std::size_t width = s.back(), d = head_dim ? head_dim : width, length = s[s.size() - 2];
  check(d % 2 == 0 && width % d == 0, "rotary", "the last axis of ", shape_str(s),
        " must hold whole heads of an even size, got head size ", d);
  const std::size_t blocks = length ? x.size() / (length * width) : 0;
  std::vector<T> c, sn;
  rotary_angles<T>(length, d, offset, base, c, sn);
  Array<T> y = Array<T>::from_shape(s);
  rotate_pairs(x.value().data(), y.data(), blocks, length, width, d, c, sn, T(1));
  return record<T>("rotary", std::move(y), {&x},
                   [c = std::move(c), sn = std::move(sn), blocks, length, width, d](Node<T>& n) {
                     Array<T> g = Array<T>::from_shape(shape_of(n.grad));
                     rotate_pairs(n.grad.data(), g.data(), blocks, length, width, d, c, sn, T(-1));
                     n.add_grad(0, std::move(g));
                   });
}

template <class T>
RotaryEmbedding<T>::RotaryEmbedding(std::size_t head_dim, double base)
    : head_dim_(head_dim), base_(base) {
  check(head_dim > 0 && head_dim % 2 == 0, "RotaryEmbedding",
        "the head dimension must be even and positive (dimensions rotate in pairs), got ",
        head_dim);
}

template <class T>
Tensor<T> RotaryEmbedding<T>::forward(const Tensor<T>& x, std::size_t offset) const {
  need("RotaryEmbedding", x);
  check(x.ndim() >= 2 && x.shape().back() % head_dim_ == 0, "RotaryEmbedding",
        "expected input (..., L, heads * ", head_dim_, "), got ", shape_str(x.shape()));
  return rotary(x, offset, base_, head_dim_);
}

#define ATTNLAB_INSTANTIATE(T)                                           \
  template Tensor<T> rotary<T>(const Tensor<T>&, std::size_t, double, std::size_t); \
  template class RotaryEmbedding<T>;
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
