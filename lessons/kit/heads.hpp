// Reading attention head by head: how much weight each head puts at a given offset from the
// query, and which head of which layer does a job. (The induction score of lesson 13 is
// nn::induction_mass, nn/attention/induction.hpp.)
#pragma once

#include <cstddef>
#include <vector>

#include <xtensor/xarray.hpp>

#include "core/tensor.hpp"

namespace attnlab::lessons {

// weights (B, h, Lq, Lk) of self-attention: for each head, the mean weight a query puts on the key
// `offset` places to its left (offset < 0: to its right), over every query that has such a key
// and every example.
std::vector<double> offset_mass(const Array<float>& weights, long offset);

// weights (B, h, L, L) of self-attention: for each head, the weight a query puts on the keys at
// least `distance` places away (on either side), averaged over every query and example: how much
// a model trained on shorter sequences looks where it never looked. ShapeError naming far_mass
// unless the weights are (B, h, L, L) with B, L > 0.
std::vector<double> far_mass(const Array<float>& weights, std::size_t distance);

// weights (B, h, L, L) of self-attention: for each head, the total weight its queries put on keys to
// their left and on keys to their right (the query itself in neither), over every example and
// every query and key at place `from` or later (1: leave out a [CLS] in front). ShapeError naming
// side_mass unless the weights are (B, h, L, L).
struct SideMass {
  std::vector<double> left, right;  // one per head
};
SideMass side_mass(const Array<float>& weights, std::size_t from = 0);

struct HeadPick {
  std::size_t layer = 0, head = 0;
  double mass = -1.0;          // its offset_mass
  xt::xarray<double> weights;  // (Lq, Lk) of the chosen example
};

// weights (B, h, L, L) of causal self-attention: for each head, the mean distance from a query back
// to the keys it reads, sum_{j <= i} A_ij (i - j), over every query and example (0: each position
// reads itself; 1: the previous one). ShapeError naming mean_distance_back unless (B, h, L, L).
std::vector<double> mean_distance_back(const Array<float>& weights);

// Over the layers (one (B, h, L, L) tensor each): the largest weight above the diagonal (a query
// reading a later key), in any head of any example; exactly 0 under a causal mask. ShapeError
// naming max_weight_above_diagonal for a layer that is not (B, h, L, L).
double max_weight_above_diagonal(const std::vector<Tensor<float>>& layers);

// Over the layers of a model (one (B, h, L, L) tensor each): the head with the largest
// offset_mass, and its weights on one example.
HeadPick head_for_offset(const std::vector<Tensor<float>>& layers, long offset, std::size_t example = 0);

}  // namespace attnlab::lessons
