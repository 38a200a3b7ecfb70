// Relative position representations (Shaw, Uszkoreit and Vaswani 2018): the key at distance
// r = j - i from the query carries a learned vector w_{clip(r, K)} on top of its content, so the
// score q_i . (k_j + w_r) / sqrt(d_k) has a position term that depends on what the query asks.
// Only 2K + 1 vectors: every distance beyond K shares the edge one (the paper's clipping), which is
// what lets the model run at lengths it never saw.
#include <algorithm>
#include <cmath>

#include "nn/init.hpp"
#include "nn/positional/shaw.hpp"

namespace attnlab::nn {

IndexArray shaw_relative_index(std::size_t lq, std::size_t lk, std::size_t q_offset, std::size_t max_distance) {
  check(max_distance > 0, "shaw_relative_index", "max_distance must be > 0, got ", max_distance);
  const long K = static_cast<long>(max_distance);
  IndexArray index = IndexArray::from_shape({lq, lk});
  for (std::size_t i = 0; i < lq; ++i)
    for (std::size_t j = 0; j < lk; ++j) {
      const long r = static_cast<long>(j) - static_cast<long>(q_offset + i);
      index(i, j) = static_cast<Index>(std::clamp(r, -K, K) + K);
    }
  return index;
}

// Per (b, h): p[i, r] = q_bh[i] . table[r] for all R rows (Lq R d_k multiply-adds, R = 2K + 1 is
// small), then out[i, j] = scale * p[i, index[i, j]], a gather. The backward runs the same two steps
// in reverse: scatter-add dout into dp by index, then dq = dp table and dtable = dp^T q_bh.
template <class T>
Tensor<T> relative_key_scores(const Tensor<T>& q, const Tensor<T>& table, const IndexArray& index,
                              std::size_t heads, double scale) {
  const char* op = "relative_key_scores";
  need(op, q, "q");
  need(op, table, "table");
  check(table.ndim() == 2 && table.dim(0) > 0 && table.dim(1) > 0, op, "table must be (R, d_k), got ",
        shape_str(table.shape()));
  const std::size_t R = table.dim(0), dk = table.dim(1);
  check(heads > 0 && q.ndim() == 3 && q.dim(2) == heads * dk, op, "q must be (B, Lq, heads * d_k) = (B, Lq, ", heads,
        " * ", dk, ") for table ", shape_str(table.shape()), ", got ", shape_str(q.shape()));
  const std::size_t B = q.dim(0), Lq = q.dim(1);
  check(index.dimension() == 2 && index.shape()[0] == Lq, op, "index must be (Lq = ", Lq, ", Lk), got ",
        shape_str(index.shape()));
  const std::size_t Lk = index.shape()[1];
  for (const Index r : index)
    check(r >= 0 && static_cast<std::size_t>(r) < R, op, "index entry ", r, " out of range for a table of ", R, " rows");
  const T s = static_cast<T>(scale);
  const std::size_t width = heads * dk;  // one query row of q
  Array<T> out = Array<T>::from_shape({B, heads, Lq, Lk});
  const T* qv = q.value().data();
  const T* w = table.value().data();
  const Index* idx = index.data();
  std::vector<T> p(R);
  for (std::size_t b = 0; b < B; ++b)
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t i = 0; i < Lq; ++i) {
        const T* qi = qv + (b * Lq + i) * width + h * dk;
        for (std::size_t r = 0; r < R; ++r) {
          T acc = 0;
          for (std::size_t c = 0; c < dk; ++c) acc += qi[c] * w[r * dk + c];
          p[r] = s * acc;
        }
        T* o = out.data() + ((b * heads + h) * Lq + i) * Lk;
        for (std::size_t j = 0; j < Lk; ++j) o[j] = p[idx[i * Lk + j]];
      }
  return record<T>(op, std::move(out), {&q, &table}, [index, B, Lq, Lk, R, dk, heads, s](Node<T>& n) {
    const std::size_t width = heads * dk;
    const T* g = n.grad.data();
    const T* qv = n.input(0).data();
    const T* w = n.input(1).data();
    const Index* idx = index.data();
    Array<T> dq = xt::zeros<T>({B, Lq, width}), dw = xt::zeros<T>({R, dk});
    std::vector<T> p(R);
    for (std::size_t b = 0; b < B; ++b)
      for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t i = 0; i < Lq; ++i) {
          std::fill(p.begin(), p.end(), T(0));
          const T* gi = g + ((b * heads + h) * Lq + i) * Lk;
          for (std::size_t j = 0; j < Lk; ++j) p[idx[i * Lk + j]] += s * gi[j];
          const std::size_t at = (b * Lq + i) * width + h * dk;
          for (std::size_t r = 0; r < R; ++r) {
            if (p[r] == T(0)) continue;
            for (std::size_t c = 0; c < dk; ++c) {
              dq.data()[at + c] += p[r] * w[r * dk + c];
              dw.data()[r * dk + c] += p[r] * qv[at + c];
            }
          }
        }
    if (n.needs_grad(0)) n.add_grad(0, std::move(dq));
    if (n.needs_grad(1)) n.add_grad(1, std::move(dw));
  });
}

template <class T>
ShawRelativePosition<T>::ShawRelativePosition(std::size_t head_dim, std::size_t max_distance, Generator& gen)
    : head_dim_(head_dim), max_distance_(max_distance) {
  check(head_dim > 0 && max_distance > 0, "ShawRelativePosition", "need head_dim > 0 and max_distance > 0, got ",
        head_dim, " and ", max_distance);
  table_ = this->register_parameter("key_table", Tensor<T>::zeros({2 * max_distance + 1, head_dim}));
  normal(table_, gen, 0.0, 0.02);
}

template <class T>
Tensor<T> ShawRelativePosition<T>::forward(const Tensor<T>& q, std::size_t lk, std::size_t q_offset) const {
  need("ShawRelativePosition", q, "q");
  check(q.ndim() == 3 && q.dim(2) % head_dim_ == 0 && q.dim(2) > 0, "ShawRelativePosition",
        "q must be (B, Lq, heads * d_k) with d_k = ", head_dim_, ", got ", shape_str(q.shape()));
  return relative_key_scores(q, table_, shaw_relative_index(q.dim(1), lk, q_offset, max_distance_),
                             q.dim(2) / head_dim_, 1.0 / std::sqrt(static_cast<double>(head_dim_)));
}

#define ATTNLAB_INSTANTIATE(T)                                                                               \
  template Tensor<T> relative_key_scores<T>(const Tensor<T>&, const Tensor<T>&, const IndexArray&, std::size_t, \
                                            double);                                                         \
  template class ShawRelativePosition<T>;
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
