// Rotary position embedding (Su et al., RoFormer). Each pair (x[2i], x[2i+1]) of a query or key
// at position p is rotated by the angle p * theta_i, theta_i = base^(-2i/d). A rotation by a
// and one by b satisfy R_a^T R_b = R_(b-a), so q_p . k_s = q^T R_(s-p) k: the score sees only the
// offset s - p, and needs no table, so it works for any length.
#include <cmath>
#include <memory>
#include <vector>

#include "nn/positional/rotary.hpp"

#include "core/runtime/parallel.hpp"

namespace attnlab::nn {

namespace {

// cos and sin of p * theta_i for positions p < n, laid out (n, d/2), for one head size and base.
// A training step rotates the queries and keys of every layer at the same positions, and the
// table cost 1,024 cos and sin in double (a fifth of the op's time at the GPT's 64 positions of
// 16 pairs), so each thread keeps the table of the last head size and base it used, grown to the
// furthest position asked for. An entry's value depends only on p, d and base: the same bits
// whether it was computed now or earlier.
template <class T>
struct AngleTable {
  std::size_t d = 0;
  double base = 0;
  std::vector<T> cos_t, sin_t;
};

template <class T>
const AngleTable<T>& rotary_angles(std::size_t positions, std::size_t d, double base) {
  static thread_local AngleTable<T> table;
  const std::size_t half = d / 2;
  if (table.d != d || table.base != base) table = AngleTable<T>{d, base, {}, {}};
  const std::size_t have = table.cos_t.size() / half;
  if (positions > have) {
    table.cos_t.resize(positions * half);
    table.sin_t.resize(positions * half);
    for (std::size_t i = 0; i < half; ++i) {
      const double theta = std::pow(base, -static_cast<double>(2 * i) / static_cast<double>(d));
      for (std::size_t p = have; p < positions; ++p) {
        const double a = static_cast<double>(p) * theta;
        table.cos_t[p * half + i] = static_cast<T>(std::cos(a));
        table.sin_t[p * half + i] = static_cast<T>(std::sin(a));
      }
    }
  }
  return table;
}

// Rotate every pair of x (rows of `width` entries, heads of d side by side, L rows per block) by
// +angle (sign = 1) or -angle; row l of a block takes row l of the tables c and s. Pair i of
// every head turns alike. Rows are independent: chunks of them run in parallel.
template <class T>
void rotate_pairs(const T* x, T* y, std::size_t blocks, std::size_t length, std::size_t width,
                  std::size_t d, const T* c, const T* s, T sign) {
  const std::size_t half = d / 2;
  parallel_for(blocks * length, grain_for(width, pass_grain), [=](std::size_t first, std::size_t last) {
    for (std::size_t row = first; row < last; ++row) {
      const std::size_t l = row % length;
      const T* cr = c + l * half;
      const T* sr = s + l * half;
      for (std::size_t head = 0; head < width; head += d) {
        const T* xr = x + row * width + head;
        T* yr = y + row * width + head;
        for (std::size_t i = 0; i < half; ++i) {
          const T x0 = xr[2 * i], x1 = xr[2 * i + 1], ci = cr[i], si = sign * sr[i];
          yr[2 * i] = x0 * ci - x1 * si;
          yr[2 * i + 1] = x0 * si + x1 * ci;
        }
      }
    }
  });
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
  // Rows offset .. offset + length - 1 of the table, copied for the backward (the table may grow).
  const AngleTable<T>& table = rotary_angles<T>(offset + length, d, base);
  const std::size_t from = offset * (d / 2), count = length * (d / 2);
  auto c = std::make_shared<const std::vector<T>>(table.cos_t.begin() + from, table.cos_t.begin() + from + count);
  auto sn = std::make_shared<const std::vector<T>>(table.sin_t.begin() + from, table.sin_t.begin() + from + count);
  Array<T> y = Array<T>::from_shape(s);
  rotate_pairs(x.value().data(), y.data(), blocks, length, width, d, c->data(), sn->data(), T(1));
  return record<T>("rotary", std::move(y), {&x}, [c, sn, blocks, length, width, d](Node<T>& n) {
    Array<T> g = Array<T>::from_shape(shape_of(n.grad));
    rotate_pairs(n.grad.data(), g.data(), blocks, length, width, d, c->data(), sn->data(), T(-1));
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
