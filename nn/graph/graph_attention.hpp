// Attention on a graph (lesson 19): a node attends to its neighbours only.
//
// Graph attention (Velickovic et al., 2018), one head:
//   z_j = W x_j,   e_ij = LeakyReLU(a_q . z_i + a_k . z_j),   alpha_ij = softmax over j in N(i) of e_ij,
//   h_i = sum_{j in N(i)} alpha_ij z_j
// is lesson 04's masked softmax with the graph as the mask: the adjacency matrix (self-loops
// included) says which keys a query may see. Its score is additive in i and j, so every node ranks
// its neighbours the same way (a_k . z_j decides the order; a_q . z_i only shifts the row): what it
// can learn is which neighbours are worth reading, not which are like the reader.
//
// Mean aggregation (a graph convolution, Kipf & Welling without the symmetric normalization):
//   h_i = W (1/|N(i)|) sum_{j in N(i)} x_j
// reads every neighbour with the same weight: the baseline that attention has to beat.
#pragma once

#include <memory>
#include <vector>

#include "core/allowed.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// A graph's neighbourhoods as a (nodes, nodes) mask: row i allows i itself and every j joined to i.
// Edges are undirected pairs of node indices. std::invalid_argument naming the edge for an index
// out of range.
Allowed neighbourhoods(std::size_t nodes, const std::vector<std::pair<std::size_t, std::size_t>>& edges);

template <class T>
class GraphAttention : public Module<T> {
 public:
  // `heads` heads of `head_features` each; their outputs concatenated: (nodes, heads * head_features).
  GraphAttention(std::size_t in_features, std::size_t head_features, std::size_t heads, Generator& gen,
                 T negative_slope = T(0.2));
  // x (nodes, in_features); neighbourhoods (nodes, nodes). The weights of every head into *weights,
  // (heads, nodes, nodes), each row summing to 1 over the node's neighbourhood, if given.
  Tensor<T> forward(const Tensor<T>& x, const Allowed& neighbourhoods, Tensor<T>* weights = nullptr) const;
  std::size_t heads() const { return heads_.size(); }

 private:
  struct Head {
    std::unique_ptr<Linear<T>> project;  // W, without bias
    Tensor<T> a_query, a_key;            // (head_features, 1) each
  };
  std::vector<Head> heads_;
  T slope_;
};

template <class T>
class MeanAggregation : public Module<T> {
 public:
  MeanAggregation(std::size_t in_features, std::size_t out_features, Generator& gen);
  Tensor<T> forward(const Tensor<T>& x, const Allowed& neighbourhoods) const;

 private:
  Linear<T> project_;
};

}  // namespace attnlab::nn
