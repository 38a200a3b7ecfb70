// Relative position bias (Raffel et al., T5): attention learns how much a head likes a key that
// sits r = j - i positions from the query, one scalar per (bucket of r, head), added to the
// scores before the softmax. Distances are bucketed (exact near zero, logarithmic farther out,
// everything beyond max_distance shares the last bucket), so any length has a bias.
#include <cmath>
#include <cstdlib>
#include <set>

#include "nn/init.hpp"
#include "nn/positional/relative.hpp"

namespace attnlab::nn {

std::size_t relative_position_bucket(long relative, std::size_t num_buckets,
                                     std::size_t max_distance, bool bidirectional) {
  std::size_t bucket = 0;
  std::size_t n = 0;  // the distance measured in the direction(s) the buckets cover
  if (bidirectional) {
    num_buckets /= 2;
    if (relative > 0) bucket += num_buckets;  // keys after the query: the upper half
    n = static_cast<std::size_t>(std::labs(relative));
  } else {
    n = relative < 0 ? static_cast<std::size_t>(-relative) : 0;  // only keys before the query
  }
  const std::size_t max_exact = num_buckets / 2;
  if (n < max_exact) return bucket + n;
  // max_exact + log(n / max_exact) / log(max_distance / max_exact) * (num_buckets - max_exact)
  const double scaled = std::log(static_cast<double>(n) / max_exact) /
                        std::log(static_cast<double>(max_distance) / max_exact) *
                        static_cast<double>(num_buckets - max_exact);
  const std::size_t large = max_exact + static_cast<std::size_t>(scaled);
  return bucket + std::min(large, num_buckets - 1);
}

std::vector<std::size_t> unseen_buckets(std::size_t trained_length, std::size_t length, std::size_t num_buckets,
                                        std::size_t max_distance, bool bidirectional) {
  check(trained_length > 0 && trained_length <= length, "unseen_buckets", "need 0 < trained_length <= length, got ",
        trained_length, " and ", length);
  std::set<std::size_t> seen, reached;  // the buckets of the offsets j - i of each length
  for (long r = -long(length) + 1; r < long(length); ++r)
    (std::labs(r) < long(trained_length) ? seen : reached).insert(relative_position_bucket(r, num_buckets, max_distance, bidirectional));
  std::vector<std::size_t> unseen;
  for (std::size_t b : reached)
    if (!seen.count(b)) unseen.push_back(b);
  return unseen;
}

// out[0, h, i, j] = table[bucket[i, j], h]
// d table[b, h] = sum_{(i, j): bucket[i, j] = b} d out[0, h, i, j]  (a scatter-add)
template <class T>
Tensor<T> relative_bias_lookup(const Tensor<T>& table, const IndexArray& bucket) {
  need("relative_bias_lookup", table, "table");
  check(table.ndim() == 2 && bucket.dimension() == 2, "relative_bias_lookup",
        "expected table (buckets, heads) and bucket (Lq, Lk), got ", shape_str(table.shape()),
        " and ", shape_str(bucket.shape()));
  const std::size_t nb = table.dim(0), h = table.dim(1);
  const std::size_t lq = bucket.shape()[0], lk = bucket.shape()[1], cells = lq * lk;
  const Index* b = bucket.data();
  for (std::size_t c = 0; c < cells; ++c)
    check(b[c] >= 0 && static_cast<std::size_t>(b[c]) < nb, "relative_bias_lookup", "bucket ",
          b[c], " out of range for a table of ", nb, " buckets");
  Array<T> out = Array<T>::from_shape({1, h, lq, lk});
  const T* w = table.value().data();
  T* o = out.data();
  for (std::size_t head = 0; head < h; ++head)
    for (std::size_t c = 0; c < cells; ++c) o[head * cells + c] = w[b[c] * h + head];
  return record<T>("relative_bias_lookup", std::move(out), {&table},
                   [bucket, nb, h, cells](Node<T>& n) {
                     Array<T> g = xt::zeros<T>({nb, h});
                     const T* dy = n.grad.data();
                     const Index* bk = bucket.data();
                     T* dw = g.data();
                     for (std::size_t head = 0; head < h; ++head)
                       for (std::size_t c = 0; c < cells; ++c)
                         dw[bk[c] * h + head] += dy[head * cells + c];
                     n.add_grad(0, std::move(g));
                   });
}

template <class T>
RelativePositionBias<T>::RelativePositionBias(std::size_t heads, Generator& gen,
                                              std::size_t num_buckets, std::size_t max_distance,
                                              bool bidirectional)
    : heads_(heads), buckets_(num_buckets), max_distance_(max_distance),
      bidirectional_(bidirectional) {
  // Each half needs an exact part and a log part: at least 4 buckets (2 one-directional), and
  // max_distance past the exact range.
  const std::size_t half = bidirectional ? num_buckets / 2 : num_buckets;
  check(heads > 0 && half >= 2 && max_distance > half / 2, "RelativePositionBias",
        "need heads > 0, ", bidirectional ? "num_buckets >= 4" : "num_buckets >= 2",
        " and max_distance > ", half / 2, "; got heads ", heads, ", num_buckets ", num_buckets,
        ", max_distance ", max_distance);
  weight_ = this->register_parameter("weight", Tensor<T>::zeros({num_buckets, heads}));
  normal(weight_, gen, 0.0, 0.02);
}

template <class T>
Tensor<T> RelativePositionBias<T>::forward(std::size_t lq, std::size_t lk,
                                           std::size_t q_offset) const {
  IndexArray bucket = IndexArray::from_shape({lq, lk});
  Index* b = bucket.data();
  for (std::size_t i = 0; i < lq; ++i)
    for (std::size_t j = 0; j < lk; ++j)
      b[i * lk + j] = static_cast<Index>(relative_position_bucket(
          static_cast<long>(j) - static_cast<long>(q_offset + i), buckets_, max_distance_,
          bidirectional_));
  return relative_bias_lookup(weight_, bucket);
}

#define ATTNLAB_INSTANTIATE(T)                                                          \
  template Tensor<T> relative_bias_lookup<T>(const Tensor<T>&, const IndexArray&);      \
  template class RelativePositionBias<T>;
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
