#include "nn/caption/estimator_spread.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace attnlab::nn {

DrawSpread spread_of(const std::vector<std::vector<double>>& draws) {
  const std::size_t D = draws.size();
  if (D < 2) throw std::invalid_argument("spread_of: " + std::to_string(D) + " draws; a variance needs two or more");
  for (const auto& g : draws)
    if (g.size() != draws[0].size())
      throw std::invalid_argument("spread_of: draws of " + std::to_string(draws[0].size()) + " and " +
                                  std::to_string(g.size()) + " entries");
  DrawSpread s{std::vector<double>(draws[0].size(), 0.0), 0.0};
  for (const auto& g : draws)
    for (std::size_t i = 0; i < g.size(); ++i) s.mean[i] += g[i] / double(D);
  for (const auto& g : draws)
    for (std::size_t i = 0; i < g.size(); ++i) s.variance += (g[i] - s.mean[i]) * (g[i] - s.mean[i]) / double(D - 1);
  return s;
}

std::vector<double> flat_gradient(Module<float>& model, const std::vector<Tensor<float>>& params,
                                  const Tensor<float>& loss) {
  model.zero_grad();
  loss.backward();
  std::vector<double> g;
  for (const Tensor<float>& p : params)
    for (const float v : p.grad()) g.push_back(v);
  return g;
}

double vector_length(const std::vector<double>& a) {
  double s = 0;
  for (const double v : a) s += v * v;
  return std::sqrt(s);
}

double vector_cosine(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size())
    throw std::invalid_argument("vector_cosine: vectors of " + std::to_string(a.size()) + " and " + std::to_string(b.size()) +
                                " entries");
  double dot = 0;
  for (std::size_t i = 0; i < a.size(); ++i) dot += a[i] * b[i];
  const double n = vector_length(a) * vector_length(b);
  return n > 0 ? dot / n : 0.0;
}

}  // namespace attnlab::nn
