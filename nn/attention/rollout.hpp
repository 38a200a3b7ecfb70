// Where a class token looks: its attention to the other tokens in each layer, and the attention
// rollout of Abnar & Zuidema (2020) through all of them. With the residual stream counted as half
// of each layer, A^_l = (mean_h A_l + I) / 2, and the class token's row of A^_L ... A^_1 says how
// much of each input token reached it through the layers (each row of the product sums to 1).
#pragma once

#include <vector>

#include <xtensor/xarray.hpp>

#include "core/array.hpp"

namespace attnlab::nn {

struct ClassTokenAttention {
  xt::xarray<double> layers;   // (B, L, T - 1): token 0's weights on tokens 1..T-1, mean over heads
  xt::xarray<double> rollout;  // (B, T - 1): token 0's row of A^_L ... A^_1, on tokens 1..T-1
};

// attention: one (B, heads, T, T) array per layer, first layer first (ViTOutput::attention's
// values). ShapeError naming the function for no layers, an array that is not 4-D with square
// (T, T) maps, or layers whose shapes differ.
ClassTokenAttention class_token_attention(const std::vector<Array<float>>& attention);

// The same for a head that reads the mean of tokens 1..T-1 (nn::Readout::patch_mean): per layer the
// mean of those tokens' rows, their weights on tokens 1..T-1, and the mean of their rows of
// A^_L ... A^_1, how much of each input token reached the pooled vector. The same errors, naming
// patch_mean_attention.
ClassTokenAttention patch_mean_attention(const std::vector<Array<float>>& attention);

}  // namespace attnlab::nn
