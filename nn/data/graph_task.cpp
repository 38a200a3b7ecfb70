#include "nn/data/graph_task.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

#include "core/random.hpp"

namespace attnlab::nn::data {

Graph make_graph(const GraphTaskOptions& o, std::uint64_t seed) {
  auto fail = [](const std::string& why) { throw std::invalid_argument("make_graph: " + why); };
  if (o.classes < 2) fail("classes must be at least 2, got " + std::to_string(o.classes));
  if (o.nodes < o.classes * (o.same_class + 1))
    fail(std::to_string(o.nodes) + " nodes cannot give each of " + std::to_string(o.classes) + " classes " +
         std::to_string(o.same_class + 1) + " members");
  if (!(o.unreliable_share >= 0 && o.unreliable_share <= 1)) fail("unreliable_share must be in [0, 1]");
  if (!(o.reliable_noise >= 0 && o.unreliable_noise >= 0)) fail("noise must not be negative");
  Generator gen(seed);
  Graph g;
  const std::size_t n = o.nodes, width = o.classes + 1 + o.noise_features;
  g.features = xt::zeros<double>({n, width});
  g.labels = IndexArray::from_shape({n});
  g.unreliable.assign(n, false);
  std::vector<std::vector<std::size_t>> members(o.classes);
  for (std::size_t i = 0; i < n; ++i) {
    // Every class gets its members in turn, then the order is shuffled by the edges' draws below.
    const std::size_t c = i % o.classes;
    g.labels(i) = static_cast<Index>(c);
    members[c].push_back(i);
    g.unreliable[i] = gen.uniform() < o.unreliable_share;
    const double sd = g.unreliable[i] ? o.unreliable_noise : o.reliable_noise;
    for (std::size_t k = 0; k < o.classes; ++k) g.features(i, k) = (k == c ? 1.0 : 0.0) + gen.normal(0.0, sd);
    g.features(i, o.classes) = g.unreliable[i] ? 1.0 : 0.0;
    for (std::size_t k = 0; k < o.noise_features; ++k) g.features(i, o.classes + 1 + k) = gen.normal();
  }
  std::set<std::pair<std::size_t, std::size_t>> edges;
  auto join = [&](std::size_t a, std::size_t b) {
    if (a != b) edges.insert({std::min(a, b), std::max(a, b)});
  };
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t c = static_cast<std::size_t>(g.labels(i));
    for (std::size_t k = 0; k < o.same_class; ++k) {
      std::size_t j;
      do j = members[c][gen.below(members[c].size())]; while (j == i);
      join(i, j);
    }
    for (std::size_t k = 0; k < o.other_class; ++k) {
      const std::size_t other = (c + 1 + gen.below(o.classes - 1)) % o.classes;
      join(i, members[other][gen.below(members[other].size())]);
    }
  }
  g.edges.assign(edges.begin(), edges.end());
  return g;
}

std::vector<Graph> make_graphs(const GraphTaskOptions& o, std::size_t count, std::uint64_t seed) {
  std::vector<Graph> out;
  for (std::size_t i = 0; i < count; ++i) out.push_back(make_graph(o, seed * 1000003 + i));
  return out;
}

EdgeShares edge_shares(const Graph& g) {
  if (g.edges.empty()) throw std::invalid_argument("edge_shares: the graph has no edges");
  double same = 0, reliable = 0;
  for (const auto& [a, b] : g.edges) {
    same += 2.0 * (g.labels(a) == g.labels(b));
    reliable += double(!g.unreliable[a]) + double(!g.unreliable[b]);
  }
  const double both_ways = 2.0 * double(g.edges.size());
  return {same / both_ways, reliable / both_ways};
}

}  // namespace attnlab::nn::data
