// Reading attention head by head: how much weight each head puts at a given offset from the
// query, and which head of which layer does a job. (The induction score of lesson 11 is
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

// Over the layers of a model (one (B, h, L, L) tensor each): the head with the largest
// offset_mass, and its weights on one example.
HeadPick head_for_offset(const std::vector<Tensor<float>>& layers, long offset, std::size_t example = 0);

}  // namespace attnlab::lessons
