#include "lessons/kit/scored_heads.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <xtensor/xbuilder.hpp>

#include "core/array.hpp"
#include "lessons/kit/figures.hpp"

namespace attnlab::lessons {

AttentionInput scored_heads_input(const std::string& name, const std::vector<std::string>& queries,
                                  const std::vector<std::string>& keys, const std::vector<ScoredHead>& heads) {
  if (heads.empty()) throw std::invalid_argument("scored_heads_input: no heads for '" + name + "'");
  AttentionInput in{name, queries, keys, {}, {}};
  const std::size_t n = queries.size(), m = keys.size();
  for (const ScoredHead& h : heads) {
    const auto& s = h.weights.shape();
    if (s.size() != 2 || s[0] != n || s[1] != m)
      throw std::invalid_argument("scored_heads_input: '" + name + "', head '" + h.name + "': weights " + shape_str(s) +
                                  " for " + std::to_string(n) + " queries and " + std::to_string(m) + " keys");
    const bool masked = h.allowed.dimension() > 0;  // a default xarray is a 0-D scalar: no mask
    if (masked && (h.allowed.dimension() != 2 || h.allowed.shape(0) != n || h.allowed.shape(1) != m))
      throw std::invalid_argument("scored_heads_input: '" + name + "', head '" + h.name + "': mask " +
                                  shape_str(h.allowed.shape()) + " for " + std::to_string(n) + " queries and " +
                                  std::to_string(m) + " keys");
    xt::xarray<double> bias = xt::zeros<double>({n, m});
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < m; ++j)
        if ((h.causal && j > i) || (masked && !h.allowed(i, j))) bias(i, j) = -std::numeric_limits<double>::infinity();
    const double dk = h.q.dimension() == 2 ? double(h.q.shape(1)) : 1.0;
    in.layers.push_back(h.name);
    in.heads.push_back({h.weights}), in.q.push_back({h.q}), in.k.push_back({h.k}), in.bias.push_back({bias});
    in.layer_scale.push_back(h.scale > 0.0 ? h.scale : 1.0 / std::sqrt(dk));
    if (h.weight_grad.dimension() > 0 || h.score_grad.dimension() > 0)
      in.weight_grad.push_back({h.weight_grad}), in.score_grad.push_back({h.score_grad});
  }
  if (!in.weight_grad.empty() && in.weight_grad.size() != heads.size())
    throw std::invalid_argument("scored_heads_input: '" + name + "': gradients for " + std::to_string(in.weight_grad.size()) +
                                " of " + std::to_string(heads.size()) + " heads (every head or none)");
  return in;
}

std::vector<AttentionInput> gradient_run_inputs(const xt::xarray<double>& q, const xt::xarray<double>& k,
                                                const std::vector<GradientRun>& runs) {
  if (runs.empty()) throw std::invalid_argument("gradient_run_inputs: no runs");
  if (q.dimension() != 2 || k.dimension() != 2 || q.shape(1) != k.shape(1))
    throw std::invalid_argument("gradient_run_inputs: queries " + shape_str(q.shape()) + " and keys " +
                                shape_str(k.shape()) + " are not (n, d_k) and (m, d_k)");
  const std::vector<std::string> queries = numbered("q", q.shape(0), 1), keys = numbered("k", k.shape(0), 1);
  std::vector<AttentionInput> inputs;
  for (const GradientRun& r : runs)
    inputs.push_back(scored_heads_input(r.name, queries, keys,
                                        {{"softmax(QKᵀ/√d)", r.weights, q, k, 0.0, false, r.allowed, r.weight_grad, r.score_grad}}));
  return inputs;
}

}  // namespace attnlab::lessons
