// Solutions to exercises/19_graph_attention.cpp, and the mistakes the grader must catch.
#include <algorithm>
#include <cmath>
#include <tuple>

#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

using Edges = std::vector<std::pair<std::size_t, std::size_t>>;

// Who is in whose neighbourhood: i itself, and both ends of every edge, unless `self` is false.
Mask neighbourhood(std::size_t n, const Edges& edges, bool self = true, bool both_ways = true) {
  Mask m = xt::zeros<bool>({n, n});
  for (std::size_t i = 0; i < n; ++i) m(i, i) = self;
  for (const auto& [a, b] : edges) {
    m(a, b) = true;
    if (both_ways) m(b, a) = true;
  }
  return m;
}

Array<double> mean_over(const Array<double>& X, const Mask& m) {
  const std::size_t n = X.shape()[0], f = X.shape()[1];
  Array<double> out = xt::zeros<double>({n, f});
  for (std::size_t i = 0; i < n; ++i) {
    double count = 0;
    for (std::size_t j = 0; j < n; ++j)
      if (m(i, j)) {
        count += 1;
        for (std::size_t c = 0; c < f; ++c) out(i, c) += X(j, c);
      }
    if (count > 0)
      for (std::size_t c = 0; c < f; ++c) out(i, c) /= count;
  }
  return out;
}

Array<double> neighbourhood_mean(const Array<double>& X, const Edges& edges) {
  return mean_over(X, neighbourhood(X.shape()[0], edges));
}
SOLUTION(neighbourhood_mean);

Array<double> mean_without_self(const Array<double>& X, const Edges& edges) {
  return mean_over(X, neighbourhood(X.shape()[0], edges, false));
}
WRONG_ANSWER(neighbourhood_mean, mean_without_self, "the node left out of its own neighbourhood");

Array<double> mean_one_way(const Array<double>& X, const Edges& edges) {
  return mean_over(X, neighbourhood(X.shape()[0], edges, true, false));
}
WRONG_ANSWER(neighbourhood_mean, mean_one_way, "each edge read one way only");

Array<double> weights(const Array<double>& Z, const Array<double>& a_q, const Array<double>& a_k, const Edges& edges,
                      double slope, bool masked, bool shift) {
  const std::size_t n = Z.shape()[0], f = Z.shape()[1];
  const Mask m = neighbourhood(n, edges);
  std::vector<double> q(n, 0.0), k(n, 0.0);
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t c = 0; c < f; ++c) q[i] += a_q(c) * Z(i, c), k[i] += a_k(c) * Z(i, c);
  Array<double> alpha = xt::zeros<double>({n, n});
  for (std::size_t i = 0; i < n; ++i) {
    std::vector<double> e(n);
    double top = -INFINITY;
    for (std::size_t j = 0; j < n; ++j) {
      const double s = q[i] + k[j];
      e[j] = s > 0 ? s : slope * s;
      if (m(i, j) || !masked) top = std::max(top, e[j]);
    }
    double sum = 0;
    for (std::size_t j = 0; j < n; ++j)
      if (m(i, j) || !masked) sum += alpha(i, j) = std::exp(e[j] - (shift ? top : 0.0));
    for (std::size_t j = 0; j < n; ++j) alpha(i, j) /= sum;
  }
  return alpha;
}

Array<double> graph_attention_weights(const Array<double>& Z, const Array<double>& a_q, const Array<double>& a_k,
                                      const Edges& edges, double slope) {
  return weights(Z, a_q, a_k, edges, slope, true, true);
}
SOLUTION(graph_attention_weights);

Array<double> weights_over_every_node(const Array<double>& Z, const Array<double>& a_q, const Array<double>& a_k,
                                      const Edges& edges, double slope) {
  return weights(Z, a_q, a_k, edges, slope, false, true);
}
WRONG_ANSWER(graph_attention_weights, weights_over_every_node, "the softmax over every node, the graph ignored");

Array<double> weights_unshifted(const Array<double>& Z, const Array<double>& a_q, const Array<double>& a_k,
                                const Edges& edges, double slope) {
  return weights(Z, a_q, a_k, edges, slope, true, false);
}
WRONG_ANSWER(graph_attention_weights, weights_unshifted, "exp of the raw scores: overflows at large scores");

// Only a_k tells a node's neighbours apart (a_q . z_i shifts the whole row); a large multiple of
// the wealth makes the softmax nearly an argmax.
std::tuple<Array<double>, Array<double>> scores(double query_wealth, double key_wealth) {
  Array<double> a_q = xt::zeros<double>({4}), a_k = xt::zeros<double>({4});
  a_q(0) = query_wealth, a_k(0) = key_wealth;
  return {a_q, a_k};
}

std::tuple<Array<double>, Array<double>> richest_neighbour_scores() { return scores(0.0, 5000.0); }
SOLUTION(richest_neighbour_scores);

std::tuple<Array<double>, Array<double>> richest_by_query() { return scores(5000.0, 0.0); }
WRONG_ANSWER(richest_neighbour_scores, richest_by_query, "the wealth on the query's side: every neighbour scores the same");

std::tuple<Array<double>, Array<double>> richest_gently() { return scores(0.0, 1.0); }
WRONG_ANSWER(richest_neighbour_scores, richest_gently, "the right direction, a unit scale: the softmax stays nearly flat");

}  // namespace
