#include "nn/attention/linformer.hpp"

#include <string>

namespace attnlab::nn {

namespace {

// Row r averages positions [r m, (r + 1) m), m = n / rank (the last row takes the remainder).
template <class T>
Tensor<T> segment_means(std::size_t rank, std::size_t n) {
  Array<T> e = xt::zeros<T>({rank, n});
  const std::size_t m = n / rank;
  for (std::size_t r = 0; r < rank; ++r) {
    const std::size_t begin = r * m, end = r + 1 == rank ? n : begin + m;
    for (std::size_t j = begin; j < end; ++j) e(r, j) = T(1) / T(end - begin);
  }
  return Tensor<T>(std::move(e));
}

}  // namespace

template <class T>
Linformer<T>::Linformer(std::size_t max_length, std::size_t rank) : max_length_(max_length), rank_(rank) {
  check(rank > 0 && rank <= max_length, "Linformer", "need 0 < rank <= max_length, got rank ", rank,
        ", max_length ", max_length);
  E = this->register_parameter("E", segment_means<T>(rank, max_length));
  F = this->register_parameter("F", segment_means<T>(rank, max_length));
}

template <class T>
Tensor<T> Linformer<T>::forward(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v,
                                std::optional<double> scale) const {
  need("Linformer", q, "query");
  need("Linformer", k, "key");
  need("Linformer", v, "value");
  const Shape qs = q.shape(), ks = k.shape(), vs = v.shape();
  const std::string shapes = "Q " + shape_str(qs) + ", K " + shape_str(ks) + ", V " + shape_str(vs);
  check(ks.size() >= 2 && qs.size() == ks.size() && vs.size() == ks.size(), "Linformer",
        "Q, K and V need one rank >= 2 (..., L, d): ", shapes);
  const std::size_t L = ks[ks.size() - 2];
  check(vs[vs.size() - 2] == L, "Linformer", "K and V have different lengths: ", shapes);
  check(L <= max_length_, "Linformer", "sequence of ", L, " keys is longer than max_length ", max_length_,
        ": ", shapes);
  // The first L columns of E and F: (rank, L), broadcast over the leading dims of K and V.
  const Tensor<T> e = L == max_length_ ? E : slice(E, 1, 0, long(L));
  const Tensor<T> f = L == max_length_ ? F : slice(F, 1, 0, long(L));
  AttentionOptions<T> o;
  o.scale = scale;
  return scaled_dot_product_attention(q, matmul(e, k), matmul(f, v), o).output;
}

template class Linformer<float>;
template class Linformer<double>;

}  // namespace attnlab::nn
