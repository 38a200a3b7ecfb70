// Single-head attentions side by side in the attention explorer (lessons/kit/explorer.hpp): each
// one a layer of one head, with its queries, keys and its own scale for the neuron view. Lesson 04
// puts its model trained with 1/sqrt(d_k) beside the one trained without, on the same input.
#pragma once

#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "core/array.hpp"
#include "lessons/kit/explorer.hpp"

namespace attnlab::lessons {

struct ScoredHead {
  std::string name;            // the layer's name in the page: "with 1/sqrt(d_k)"
  xt::xarray<double> weights;  // (queries, keys): softmax(q . k * scale), masked keys 0
  xt::xarray<double> q, k;     // (queries, d_k) and (keys, d_k), as they were scored
  double scale = 0.0;          // 0: 1 / sqrt(d_k)
  bool causal = false;         // query i sees keys 0 ... i only: bias -inf beyond
  Mask allowed{};              // (queries, keys), false: a key the query may not see (bias -inf); {}: all
  // Optional ({}: none), for the gradient view: a loss's gradient in the weights, dA, and in the scores, dS.
  xt::xarray<double> weight_grad{}, score_grad{};
};

// The heads as one explorer input, a layer each, in order, with per-layer scales (layer_scale).
// std::invalid_argument naming scored_heads_input for no heads, a head whose weights or mask are
// not (queries, keys), or gradients for some heads and not others; explorer_html checks the rest
// (q and k against the weights, dS against dA).
AttentionInput scored_heads_input(const std::string& name, const std::vector<std::string>& queries,
                                  const std::vector<std::string>& keys, const std::vector<ScoredHead>& heads);

}  // namespace attnlab::lessons
