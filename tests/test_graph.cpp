// Attention on graphs (lesson 19): the neighbourhood mask, graph attention's weights living on the
// graph only, the mean aggregation, the generated graph task, and errors that name what is wrong.
#include <doctest/doctest.h>

#include <set>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "nn/data/graph_task.hpp"
#include "nn/graph/graph_attention.hpp"

using namespace attnlab;
namespace data = attnlab::nn::data;
using doctest::Contains;

TEST_CASE("neighbourhoods: itself and every node joined to it, both ways; an edge beyond the graph named") {
  const Allowed a = nn::neighbourhoods(4, {{0, 1}, {1, 2}});
  const Mask want = {{true, true, false, false}, {true, true, true, false}, {false, true, true, false},
                     {false, false, false, true}};
  CHECK(a.mask() == want);
  CHECK_THROWS_WITH_AS(nn::neighbourhoods(3, {{0, 3}}), Contains("edge (0, 3) names a node beyond the graph's 3"),
                       std::invalid_argument);
}

TEST_CASE("graph attention: each head's weights sum to 1 over the neighbourhood and are exactly 0 elsewhere") {
  Generator gen(3);
  nn::GraphAttention<double> gat(5, 3, 2, gen);
  const Allowed a = nn::neighbourhoods(6, {{0, 1}, {1, 2}, {3, 4}});
  Tensor<double> w;
  const Tensor<double> h = gat.forward(Tensor<double>::randn({6, 5}, gen), a, &w);
  CHECK(h.shape() == Shape{6, 6});  // 2 heads of 3, concatenated
  REQUIRE(w.shape() == Shape{2, 6, 6});
  for (std::size_t head = 0; head < 2; ++head)
    for (std::size_t i = 0; i < 6; ++i) {
      double sum = 0;
      for (std::size_t j = 0; j < 6; ++j) {
        if (!a.mask()(i, j)) CHECK(w.value()(head, i, j) == 0.0);
        sum += w.value()(head, i, j);
      }
      CHECK(sum == doctest::Approx(1.0));
    }
  CHECK(w.value()(0, 5, 5) == 1.0);  // node 5 has no neighbour: it reads itself alone
  CHECK_THROWS_WITH_AS(gat.forward(Tensor<double>::randn({6, 4}, gen), a), Contains("GraphAttention: x (6,4) and neighbourhoods (6,6): expected (nodes, 5)"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(nn::GraphAttention<double>(5, 0, 2, gen), Contains("GraphAttention: sizes must be positive"),
                       std::invalid_argument);
}

TEST_CASE("graph attention's score is a sum of a reader term and a neighbour term: every node ranks its neighbours alike") {
  // On a complete graph, the rows of one head's weights are the same distribution for every reader
  // whose scores all fall on one side of LeakyReLU's kink; in general the order of the keys is
  // shared. Checked as the order: argsort of each row identical.
  Generator gen(5);
  nn::GraphAttention<double> gat(4, 3, 1, gen);
  std::vector<std::pair<std::size_t, std::size_t>> all;
  for (std::size_t i = 0; i < 5; ++i)
    for (std::size_t j = i + 1; j < 5; ++j) all.push_back({i, j});
  Tensor<double> w;
  gat.forward(Tensor<double>::randn({5, 4}, gen), nn::neighbourhoods(5, all), &w);
  auto order = [&](std::size_t i) {
    std::vector<std::size_t> o = {0, 1, 2, 3, 4};
    std::sort(o.begin(), o.end(), [&](std::size_t a, std::size_t b) { return w.value()(0, i, a) < w.value()(0, i, b); });
    return o;
  };
  for (std::size_t i = 1; i < 5; ++i) CHECK(order(i) == order(0));
}

TEST_CASE("mean aggregation: the neighbourhood's mean of the features, then one linear map") {
  Generator gen(7);
  nn::MeanAggregation<double> mean(2, 2, gen);
  const Allowed a = nn::neighbourhoods(3, {{0, 1}});
  const Tensor<double> x(Array<double>{{1, 2}, {3, 4}, {5, 6}});
  // Rows: mean of nodes 0 and 1 = (2, 3); of 0 and 1 = (2, 3); node 2 alone = (5, 6).
  const Tensor<double> want = matmul(Tensor<double>(Array<double>{{2, 3}, {2, 3}, {5, 6}}), mean.parameters()[0], false, true);
  const Tensor<double> got = mean.forward(x, a);
  CHECK(xt::allclose(got.value(), want.value() + xt::view(mean.parameters()[1].value(), xt::newaxis(), xt::all())));
}

TEST_CASE("the graph task: classes, reliability, edges within and across classes, held-out graphs") {
  data::GraphTaskOptions o;
  const data::Graph g = data::make_graph(o, 1);
  CHECK(g.features.shape() == Shape{200, 8});
  CHECK(g.labels.size() == 200);
  std::size_t unreliable = 0;
  for (bool u : g.unreliable) unreliable += u;
  CHECK(unreliable > 30);
  CHECK(unreliable < 90);  // 30 % of 200, give or take
  for (std::size_t i = 0; i < 200; ++i) CHECK(g.features(i, 4) == (g.unreliable[i] ? 1.0 : 0.0));
  std::set<std::pair<std::size_t, std::size_t>> seen;
  for (const auto& [a, b] : g.edges) {
    CHECK(a < b);  // undirected, stored once, no self-loops
    CHECK(seen.insert({a, b}).second);
  }
  const data::EdgeShares s = data::edge_shares(g);
  CHECK(s.same_class > 0.5);   // 3 of every 5 edges a node starts join its own class
  CHECK(s.same_class < 0.7);
  CHECK(s.reliable_source == doctest::Approx(1.0 - double(unreliable) / 200).epsilon(0.1));
  // Same seed, same graph; another seed, another graph.
  CHECK(data::make_graph(o, 1).edges == g.edges);
  CHECK(data::make_graph(o, 2).edges != g.edges);
  const std::vector<data::Graph> three = data::make_graphs(o, 3, 9);
  CHECK(three.size() == 3);
  CHECK(three[0].edges != three[1].edges);
  o.nodes = 10;
  CHECK_THROWS_WITH_AS(data::make_graph(o, 1), Contains("make_graph: 10 nodes cannot give each of 4 classes 4 members"),
                       std::invalid_argument);
}
