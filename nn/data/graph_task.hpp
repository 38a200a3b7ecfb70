// The graph task of lesson 19: classify every node of a graph, where some neighbours are worth
// reading and some are not.
//
// Each node has one of `classes` classes. Its features are its class, one-hot, plus Gaussian noise:
// a reliable node's noise is small (sd `reliable_noise`), an unreliable node's large (sd
// `unreliable_noise`), and one more feature says which kind it is (1: unreliable). Each node is
// joined to `same_class` random nodes of its own class and `other_class` random nodes of other
// classes. Alone, a node's features classify it well when it is reliable and badly when not; its
// neighbourhood holds the answer, if the reader knows whom to believe: averaging every neighbour
// mixes the unreliable ones' noise back in, attention can learn to read the reliable ones.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "core/array.hpp"

namespace attnlab::nn::data {

struct GraphTaskOptions {
  std::size_t nodes = 200, classes = 4;
  std::size_t same_class = 3, other_class = 2;  // edges each node starts (undirected, so degrees vary)
  double unreliable_share = 0.3;
  double reliable_noise = 0.5, unreliable_noise = 3.0;
  std::size_t noise_features = 3;  // pure N(0, 1) columns after the class and reliability ones
};

struct Graph {
  Array<double> features;                                    // (nodes, classes + 1 + noise_features)
  IndexArray labels;                                         // (nodes)
  std::vector<bool> unreliable;                              // per node
  std::vector<std::pair<std::size_t, std::size_t>> edges;    // undirected, no self-loops, no repeats
};

// One graph from the generator. std::invalid_argument naming the option at fault when a class
// cannot hold `same_class` other members, or a share or noise is out of range.
Graph make_graph(const GraphTaskOptions& o, std::uint64_t seed);

// `count` graphs, the i-th from seed * 1000003 + i: train, validation and test sets are graphs
// never seen by each other when their seeds differ.
std::vector<Graph> make_graphs(const GraphTaskOptions& o, std::size_t count, std::uint64_t seed);

// Over the graph's edges (both directions, self-loops left out): the share joining two nodes of
// one class, and the share whose source is reliable: what attention spread evenly would put there.
struct EdgeShares {
  double same_class = 0, reliable_source = 0;
};
EdgeShares edge_shares(const Graph& g);

}  // namespace attnlab::nn::data
