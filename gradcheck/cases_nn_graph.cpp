// Gradient checks of the graph modules of lesson 19: graph attention (every head's projection and
// score vectors, and the node features) and the neighbourhood mean, on a 5-node graph with one
// isolated node (its neighbourhood is itself alone).
#include "gradcheck/cases.hpp"
#include "nn/graph/graph_attention.hpp"

namespace attnlab::cases {

namespace {
Inputs with_graph_params(const nn::Module<D>& m, Inputs inputs) {
  for (const TD& p : m.parameters()) inputs.push_back(p);
  return inputs;
}

const Allowed& five_nodes() {
  static const Allowed a = nn::neighbourhoods(5, {{0, 1}, {1, 2}, {2, 0}, {2, 3}});  // node 4 alone
  return a;
}
}  // namespace

GRADCHECK_CASE("GraphAttention", "x (5,3), 2 heads of 2, 5-node graph", [] {
  Generator gen(31);
  nn::GraphAttention<D> gat(3, 2, 2, gen);
  return gradcheck([&](const Inputs& x) { return gat.forward(x[0], five_nodes()); }, with_graph_params(gat, {rnd({5, 3}, 1)}));
});

GRADCHECK_CASE("MeanAggregation", "x (5,3) -> 4, 5-node graph", [] {
  Generator gen(32);
  nn::MeanAggregation<D> mean(3, 4, gen);
  return gradcheck([&](const Inputs& x) { return mean.forward(x[0], five_nodes()); }, with_graph_params(mean, {rnd({5, 3}, 2)}));
});

}  // namespace attnlab::cases
