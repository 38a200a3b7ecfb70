// Attention over points on a line, lesson 01's kernel regression: how many keys a query uses in
// effect, and weights over points as an input of the attention explorer (lessons/kit/explorer.hpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "lessons/kit/explorer.hpp"

namespace attnlab::lessons {

// How many keys a query attends to, in effect: 1 / sum_j a_ij^2 (n for uniform weights, 1 for a
// one-hot row), averaged over the rows of weights (queries, keys). std::invalid_argument naming
// keys_per_query for weights that are not 2-D or have no rows.
double keys_per_query(const xt::xarray<double>& weights);

// An explorer input over points: queries and keys labelled by their x to two decimals, one layer
// per name in layers, each with `heads` heads, head h of layer l the weights weights_of(l, h,
// queries) returns, (queries, keys). The scores are distances, not dot products: no neuron view.
// std::invalid_argument naming points_input for no layers or no heads; explorer_html checks shapes.
AttentionInput points_input(const std::string& name, const xt::xarray<double>& queries, const xt::xarray<double>& keys,
                            const std::vector<std::string>& layers, std::size_t heads,
                            const std::function<xt::xarray<double>(std::size_t layer, std::size_t head,
                                                                   const xt::xarray<double>& queries)>& weights_of);

}  // namespace attnlab::lessons
