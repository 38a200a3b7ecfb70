// Exercises for lesson 19, attention on graphs. Grade them with scripts/grade.sh 17.
//
// Write each function in plain xtensor (xt::zeros, loops, std::exp ...), not with the engine's ops.
#include <cmath>
#include <tuple>

#include "core/ops.hpp"
#include "exercises/grading/exercise.hpp"
#include "nn/graph/graph_attention.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

using Edges = std::vector<std::pair<std::size_t, std::size_t>>;

// ---- 19.1 The mean over a neighbourhood ------------------------------------------------------
// X (n, f) holds one row of features per node; `edges` joins pairs of nodes (both ways: (a, b)
// makes a a neighbour of b and b of a). Return the (n, f) array whose row i is the mean of the
// rows of i's neighbourhood: i itself and every node joined to i.
Array<double> neighbourhood_mean(const Array<double>& X, const Edges& edges) {
  not_attempted();  // delete this line and write your answer
}

// ---- 19.2 One head of graph attention --------------------------------------------------------
// Z (n, f) = W x for every node (already projected); a_q and a_k (f) the head's score vectors;
// `edges` as above. Return the (n, n) weights alpha of the lesson's formula: alpha(i, j) is the
// softmax, over i's neighbourhood only, of e_ij = LeakyReLU(a_q . z_i + a_k . z_j) with the
// slope `slope` for negative scores; 0 for every j outside the neighbourhood.
Array<double> graph_attention_weights(const Array<double>& Z, const Array<double>& a_q, const Array<double>& a_k,
                                      const Edges& edges, double slope) {
  not_attempted();  // delete this line and write your answer
}

// ---- 19.3 Read the richest neighbour --------------------------------------------------------
// An experiment, graded by running it. Each node's projected features z (4 of them) hold its
// wealth in z_0, uniform in [0, 1), and three other features at random. Choose the head's score
// vectors a_q and a_k (4 each; the LeakyReLU slope is 0.2) so that every node puts at least 90 %
// of its weight, on average, on the richest member of its neighbourhood (itself included). The
// grader runs the head of 17.2 with the engine's ops on three random graphs of 40 nodes and 80
// edges and measures that mean weight. Then ask yourself whether a_q and a_k could make each node
// read the neighbour whose wealth is closest to its own, and why not (the lesson's section on
// what this attention can and cannot learn).
std::tuple<Array<double>, Array<double>> richest_neighbour_scores() {
  not_attempted();  // delete this line and write your answer
}

}  // namespace

// =============================================================================================
// How your answers are graded (no need to read on): against the engine's own ops.
namespace {

const Edges kEdges = {{0, 1}, {1, 2}, {2, 0}, {2, 3}, {4, 5}};  // node 6 has no neighbour

Array<double> engine_mean(const Array<double>& X, const Edges& edges) {
  const Mask m = nn::neighbourhoods(X.shape()[0], edges).mask();
  Array<double> op = xt::cast<double>(m);
  for (std::size_t i = 0; i < op.shape()[0]; ++i) xt::view(op, i, xt::all()) /= xt::sum(xt::view(op, i, xt::all()))();
  return matmul(Tensor<double>(op), Tensor<double>(X)).value();
}

void grade_mean(const std::function<Array<double>(const Array<double>&, const Edges&)>& answer, Grader& g) {
  const Array<double> X = random_array({7, 3}, 1);
  g.close("7 nodes, one of them alone", answer(X, kEdges), engine_mean(X, kEdges), 1e-12,
          "the neighbourhood holds the node itself: a node without edges keeps its own row");
  g.close("one edge", answer(X, {{3, 6}}), engine_mean(X, {{3, 6}}), 1e-12,
          "an edge counts both ways: (3, 6) puts 6 in 3's neighbourhood and 3 in 6's");
}

Array<double> engine_weights(const Array<double>& Z, const Array<double>& a_q, const Array<double>& a_k,
                             const Edges& edges, double slope) {
  const Tensor<double> z(Z), q = matmul(z, Tensor<double>(Array<double>(xt::reshape_view(a_q, {a_q.size(), std::size_t(1)})))),
                       k = matmul(z, Tensor<double>(Array<double>(xt::reshape_view(a_k, {a_k.size(), std::size_t(1)}))));
  const Tensor<double> e = leaky_relu(add(q, transpose(k, 0, 1)), slope);
  return masked_softmax(e, nn::neighbourhoods(Z.shape()[0], edges)).value();
}

void grade_weights(const std::function<Array<double>(const Array<double>&, const Array<double>&, const Array<double>&,
                                                     const Edges&, double)>& answer,
                   Grader& g) {
  const Array<double> Z = random_array({7, 4}, 2), a_q = random_array({4}, 3), a_k = random_array({4}, 4);
  g.close("7 nodes, slope 0.2", answer(Z, a_q, a_k, kEdges, 0.2), engine_weights(Z, a_q, a_k, kEdges, 0.2), 1e-12,
          "e_ij = LeakyReLU(a_q . z_i + a_k . z_j); the softmax of row i runs over i's neighbourhood, i included");
  g.close("slope 0 (a ReLU)", answer(Z, a_q, a_k, kEdges, 0.0), engine_weights(Z, a_q, a_k, kEdges, 0.0), 1e-12,
          "LeakyReLU(s) is s for s > 0 and slope * s otherwise");
  const Array<double> big = 3000.0 * Z;  // scores in the thousands: exp overflows unless shifted
  g.close("scores in the thousands", answer(big, a_q, a_k, kEdges, 0.2), engine_weights(big, a_q, a_k, kEdges, 0.2), 1e-9,
          "subtract each row's largest score (over the neighbourhood) before exp");
}

// Three random graphs of 40 nodes and 80 edges (self-loops and repeats allowed: the neighbourhood
// is a set), features uniform in [0, 1): the mean over the nodes of the weight on the neighbour
// with the largest z_0.
void grade_richest(const std::function<std::tuple<Array<double>, Array<double>>()>& answer, Grader& g) {
  const auto [a_q, a_k] = answer();
  if (!g.check(a_q.size() == 4 && a_k.size() == 4, "a_q and a_k have 4 entries each",
               "sizes " + std::to_string(a_q.size()) + " and " + std::to_string(a_k.size())))
    return;
  double on_richest = 0;
  for (std::uint64_t seed : {1, 2, 3}) {
    Generator gen(seed);
    const std::size_t n = 40;
    Edges edges;
    for (int e = 0; e < 80; ++e) edges.push_back({gen.below(n), gen.below(n)});
    const Array<double> Z = random_array({n, 4}, seed + 10, 0.0, 1.0);
    const Array<double> w = engine_weights(Z, a_q, a_k, edges, 0.2);
    const Mask near = nn::neighbourhoods(n, edges).mask();
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t richest = i;
      for (std::size_t j = 0; j < n; ++j)
        if (near(i, j) && Z(j, 0) > Z(richest, 0)) richest = j;
      on_richest += w(i, richest) / double(3 * n);
    }
  }
  g.check(on_richest >= 0.9, "the mean weight on the richest neighbour, 3 random graphs of 40 nodes",
          "measured " + std::to_string(on_richest) + ", target at least 0.9",
          "the score is LeakyReLU(a_q . z_i + a_k . z_j): which of the two terms can tell node i's neighbours apart? "
          "Then: how far apart are two neighbours' wealths, and what does the softmax need to separate them?");
}

}  // namespace

EXERCISE(neighbourhood_mean, "The mean over a neighbourhood", grade_mean);
EXERCISE(graph_attention_weights, "One head of graph attention", grade_weights);
EXERCISE(richest_neighbour_scores, "Read the richest neighbour", grade_richest);
HINT(richest_neighbour_scores,
     "a_q . z_i is the same for every key of row i, so the softmax ignores it: a_q = 0. a_k = (c, 0, 0, 0) ranks the "
     "neighbours by wealth; neighbours' wealths can differ by 0.01, so c must be in the thousands for the softmax to "
     "put nearly all the weight on the top one");
