#include "nn/graph/graph_attention.hpp"

#include <stdexcept>
#include <string>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "nn/init.hpp"

namespace attnlab::nn {

Allowed neighbourhoods(std::size_t nodes, const std::vector<std::pair<std::size_t, std::size_t>>& edges) {
  Mask m = xt::zeros<bool>({nodes, nodes});
  for (std::size_t i = 0; i < nodes; ++i) m(i, i) = true;  // a node reads itself too
  for (const auto& [a, b] : edges) {
    if (a >= nodes || b >= nodes)
      throw std::invalid_argument("neighbourhoods: edge (" + std::to_string(a) + ", " + std::to_string(b) +
                                  ") names a node beyond the graph's " + std::to_string(nodes));
    m(a, b) = m(b, a) = true;
  }
  return Allowed::where(std::move(m));
}

template <class T>
GraphAttention<T>::GraphAttention(std::size_t in_features, std::size_t head_features, std::size_t heads, Generator& gen,
                                  T negative_slope)
    : slope_(negative_slope) {
  if (in_features == 0 || head_features == 0 || heads == 0)
    throw std::invalid_argument("GraphAttention: sizes must be positive, got in " + std::to_string(in_features) +
                                ", head features " + std::to_string(head_features) + ", heads " + std::to_string(heads));
  for (std::size_t h = 0; h < heads; ++h) {
    Head head;
    head.project = std::make_unique<Linear<T>>(in_features, head_features, gen, false);
    this->register_module("head" + std::to_string(h) + "_project", *head.project);
    head.a_query = this->register_parameter("head" + std::to_string(h) + "_a_query", Tensor<T>::zeros({head_features, 1}));
    head.a_key = this->register_parameter("head" + std::to_string(h) + "_a_key", Tensor<T>::zeros({head_features, 1}));
    xavier_uniform(head.a_query, gen);
    xavier_uniform(head.a_key, gen);
    heads_.push_back(std::move(head));
  }
}

template <class T>
Tensor<T> GraphAttention<T>::forward(const Tensor<T>& x, const Allowed& adjacency, Tensor<T>* weights) const {
  const Shape a = adjacency.shape();
  if (x.shape().size() != 2 || x.shape()[1] != heads_[0].project->in_features() || a.size() != 2 || a[0] != x.shape()[0] ||
      a[1] != x.shape()[0])
    throw ShapeError("GraphAttention: x " + shape_str(x.shape()) + " and neighbourhoods " + shape_str(a) +
                     ": expected (nodes, " + std::to_string(heads_[0].project->in_features()) + ") and (nodes, nodes)");
  std::vector<Tensor<T>> outputs, alphas;
  for (const Head& h : heads_) {
    const Tensor<T> z = h.project->forward(x);                                  // (N, F)
    const Tensor<T> q = matmul(z, h.a_query), k = matmul(z, h.a_key);           // (N, 1) each
    const Tensor<T> e = leaky_relu(add(q, transpose(k, 0, 1)), slope_);         // e_ij = q_i + k_j: (N, N)
    const Tensor<T> alpha = masked_softmax(e, adjacency);                       // over i's neighbourhood
    outputs.push_back(matmul(alpha, z));                                        // h_i = sum_j alpha_ij z_j
    if (weights) alphas.push_back(alpha);
  }
  if (weights) *weights = stack(alphas, 0);
  return outputs.size() == 1 ? outputs[0] : concat(outputs, 1);
}

template <class T>
MeanAggregation<T>::MeanAggregation(std::size_t in_features, std::size_t out_features, Generator& gen)
    : project_(in_features, out_features, gen) {
  this->register_module("project", project_);
}

template <class T>
Tensor<T> MeanAggregation<T>::forward(const Tensor<T>& x, const Allowed& adjacency) const {
  const Shape a = adjacency.shape();
  if (x.shape().size() != 2 || a.size() != 2 || a[0] != x.shape()[0] || a[1] != x.shape()[0])
    throw ShapeError("MeanAggregation: x " + shape_str(x.shape()) + " and neighbourhoods " + shape_str(a) +
                     ": expected (nodes, features) and (nodes, nodes)");
  // Row i of the mean operator: 1/|N(i)| on i's neighbourhood. A constant, so no gradient to it.
  Array<T> mean_op = xt::cast<T>(adjacency.mask());
  for (std::size_t i = 0; i < a[0]; ++i) {
    auto row = xt::view(mean_op, i, xt::all());
    row /= xt::sum(row)();
  }
  return project_.forward(matmul(Tensor<T>(mean_op), x));
}

template class GraphAttention<float>;
template class GraphAttention<double>;
template class MeanAggregation<float>;
template class MeanAggregation<double>;

}  // namespace attnlab::nn
