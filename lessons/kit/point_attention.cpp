#include "lessons/kit/point_attention.hpp"

#include <stdexcept>

#include <xtensor/xmath.hpp>
#include <xtensor/xreducer.hpp>

#include "core/array.hpp"
#include "lessons/kit/figures.hpp"

namespace attnlab::lessons {

double keys_per_query(const xt::xarray<double>& weights) {
  if (weights.dimension() != 2 || weights.shape(0) == 0)
    throw std::invalid_argument("keys_per_query: weights " + shape_str(weights.shape()) + " are not (queries, keys) with a query");
  // The mean over queries of 1 / sum_k w_qk^2, as loops: xtensor's reducer over a square made GCC 12
  // warn of a memset it cannot bound (-Wstringop-overflow, a false alarm).
  const std::size_t queries = weights.shape(0), keys = weights.shape(1);
  double total = 0.0;
  for (std::size_t q = 0; q < queries; ++q) {
    double squares = 0.0;
    for (std::size_t k = 0; k < keys; ++k) squares += weights(q, k) * weights(q, k);
    total += 1.0 / squares;
  }
  return total / double(queries);
}

AttentionInput points_input(const std::string& name, const xt::xarray<double>& queries, const xt::xarray<double>& keys,
                            const std::vector<std::string>& layers, std::size_t heads,
                            const std::function<xt::xarray<double>(std::size_t layer, std::size_t head,
                                                                   const xt::xarray<double>& queries)>& weights_of) {
  if (layers.empty() || heads == 0)
    throw std::invalid_argument("points_input: '" + name + "' has " + std::to_string(layers.size()) + " layers of " +
                                std::to_string(heads) + " heads");
  AttentionInput in{name, value_labels(queries, 1), value_labels(keys, 1), {}, {}};
  for (std::size_t l = 0; l < layers.size(); ++l) {
    in.layers.push_back(layers[l]), in.heads.emplace_back();
    for (std::size_t h = 0; h < heads; ++h) in.heads.back().push_back(weights_of(l, h, queries));
  }
  return in;
}

}  // namespace attnlab::lessons
