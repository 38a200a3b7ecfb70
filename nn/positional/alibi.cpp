// ALiBi (Press et al., "Train Short, Test Long"): no position in the embeddings at all; each head
// subtracts slope_h * distance from its scores, a fixed linear penalty on far keys. Heads with
// small slopes look far, heads with large slopes look near. It has no table, so it extrapolates.
#include <cmath>
#include <cstdlib>

#include "nn/positional/alibi.hpp"

namespace attnlab::nn {

namespace {
// For n a power of two: start^1, start^2, ..., start^n with start = 2^(-8/n), i.e. 2^(-8i/n).
std::vector<double> power_of_two_slopes(std::size_t n) {
  std::vector<double> s(n);
  for (std::size_t i = 0; i < n; ++i)
    s[i] = std::pow(2.0, -8.0 * static_cast<double>(i + 1) / static_cast<double>(n));
  return s;
}
}  // namespace

std::vector<double> alibi_slopes(std::size_t heads) {
  check(heads > 0, "alibi_slopes", "need at least one head, got ", heads);
  std::size_t pow2 = 1;
  while (pow2 * 2 <= heads) pow2 *= 2;
  std::vector<double> slopes = power_of_two_slopes(pow2);
  if (pow2 == heads) return slopes;
  // The paper's recipe otherwise: the slopes of 2 * pow2 heads interleave between ours; take
  // every other one of them (the odd powers) until there are enough.
  const std::vector<double> extra = power_of_two_slopes(2 * pow2);
  for (std::size_t i = 0; slopes.size() < heads; i += 2) slopes.push_back(extra[i]);
  return slopes;
}

// bias[0, h, i, j] = -slope_h * |q_offset + i - j|
template <class T>
Tensor<T> alibi_bias(std::size_t heads, std::size_t lq, std::size_t lk, std::size_t q_offset) {
  const std::vector<double> slopes = alibi_slopes(heads);
  Array<T> b = Array<T>::from_shape({1, heads, lq, lk});
  T* o = b.data();
  for (std::size_t h = 0; h < heads; ++h)
    for (std::size_t i = 0; i < lq; ++i)
      for (std::size_t j = 0; j < lk; ++j) {
        const long dist = std::labs(static_cast<long>(q_offset + i) - static_cast<long>(j));
        *o++ = static_cast<T>(-slopes[h] * static_cast<double>(dist));
      }
  return Tensor<T>(std::move(b));
}

template <class T>
ALiBi<T>::ALiBi(std::size_t heads) : heads_(heads), slopes_(alibi_slopes(heads)) {}

template <class T>
Tensor<T> ALiBi<T>::forward(std::size_t lq, std::size_t lk, std::size_t q_offset) const {
  return alibi_bias<T>(heads_, lq, lk, q_offset);
}

#define ATTNLAB_INSTANTIATE(T)                                                              \
  template Tensor<T> alibi_bias<T>(std::size_t, std::size_t, std::size_t, std::size_t);   \
  template class ALiBi<T>;
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
