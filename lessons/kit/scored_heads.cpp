#include "lessons/kit/scored_heads.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

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

ScoredHead first_sequence_head(const std::string& name, const Array<float>& weights, const Array<float>& q,
                               const Array<float>& k, double scale, bool causal) {
  if (weights.dimension() != 3 || q.dimension() != 3 || k.dimension() != 3)
    throw std::invalid_argument("first_sequence_head: '" + name + "': weights " + shape_str(weights.shape()) + ", q " +
                                shape_str(q.shape()) + " and k " + shape_str(k.shape()) + " are not batches (B, n, .)");
  auto first = [](const Array<float>& a) { return xt::xarray<double>(xt::cast<double>(xt::view(a, 0))); };
  return {name, first(weights), first(q), first(k), scale, causal};
}

std::vector<AttentionInput> tagged_inputs(const nn::data::Tagged& set, const std::vector<std::size_t>& rows,
                                          const std::string& name,
                                          const std::function<std::vector<ScoredHead>(const IndexArray&)>& heads_of) {
  if (rows.empty()) throw std::invalid_argument("tagged_inputs: no rows for '" + name + "'");
  std::vector<AttentionInput> inputs;
  for (std::size_t r : rows) {
    const nn::data::Tagged one = set.rows({r});
    std::vector<std::string> keys, queries;
    for (std::size_t i = 0; i < one.length(); ++i)
      keys.push_back(std::to_string(one.inputs(0, i))), queries.push_back(keys.back() + " → " + std::to_string(one.targets(0, i)));
    inputs.push_back(scored_heads_input(name + " " + std::to_string(inputs.size() + 1), queries, keys, heads_of(one.inputs)));
  }
  return inputs;
}

std::vector<AttentionMap> first_head_maps(const std::vector<AttentionInput>& inputs, std::size_t count,
                                          const std::string& what) {
  if (inputs.size() < count)
    throw std::invalid_argument("first_head_maps: " + std::to_string(count) + " inputs asked for, " +
                                std::to_string(inputs.size()) + " given");
  for (std::size_t e = 1; e < count; ++e)
    if (inputs[e].layers != inputs[0].layers)
      throw std::invalid_argument("first_head_maps: input '" + inputs[e].name + "' has other layers than '" +
                                  inputs[0].name + "'");
  std::vector<AttentionMap> maps;
  for (std::size_t l = 0; count > 0 && l < inputs[0].layers.size(); ++l)
    for (std::size_t e = 0; e < count; ++e)
      maps.push_back({inputs[e].heads[l][0], inputs[e].keys, inputs[e].queries,
                      inputs[e].layers[l] + ", " + what + " " + std::to_string(e + 1)});
  return maps;
}

}  // namespace attnlab::lessons
