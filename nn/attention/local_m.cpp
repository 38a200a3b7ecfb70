// Luong's local-m attention: the window centred at the decoder's own step.
#include "nn/attention/local_m.hpp"

#include <algorithm>

namespace attnlab::nn {

template <class T>
Array<T> monotonic_centres(const Allowed& real, std::size_t queries, std::size_t first_step) {
  const std::size_t B = real.shape()[0], Lk = real.shape()[1];
  Array<T> p = Array<T>::from_shape({B, queries});
  for (std::size_t b = 0; b < B; ++b) {
    std::size_t length = 0;
    for (std::size_t s = 0; s < Lk; ++s) length += real.mask()(b, s) ? 1 : 0;
    check(length > 0, "monotonic_centres", "row ", b, " of real ", shape_str(real.shape()), " has no real key");
    for (std::size_t i = 0; i < queries; ++i) p(b, i) = T(std::min(first_step + i, length - 1));
  }
  return p;
}

template <class T>
LocalAttentionResult<T> local_m_attention(const Score<T>& score, const Tensor<T>& query, const Tensor<T>& keys,
                                          const Tensor<T>& values, const Allowed& real, std::size_t half_window,
                                          std::size_t first_step) {
  const char* who = "local_m_attention";
  check(half_window > 0, who, "the half-width D must be > 0, got 0");
  std::vector<std::size_t> lengths;
  const Tensor<T> q = local_query(who, query, keys, values, real, lengths);
  const Tensor<T> p(monotonic_centres<T>(real, q.dim(1), first_step));  // a constant: no gradient
  LocalAttentionResult<T> r = window_attention(who, score, q, keys, values, real, p, half_window);
  if (query.ndim() == 2) return {squeeze(r.output, 1), squeeze(r.weights, 1), squeeze(r.positions, 1)};
  return r;
}

#define ATTNLAB_INSTANTIATE(T)                                                                          \
  template Array<T> monotonic_centres<T>(const Allowed&, std::size_t, std::size_t);                    \
  template LocalAttentionResult<T> local_m_attention<T>(const Score<T>&, const Tensor<T>&, const Tensor<T>&, \
                                                        const Tensor<T>&, const Allowed&, std::size_t,    \
                                                        std::size_t);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
