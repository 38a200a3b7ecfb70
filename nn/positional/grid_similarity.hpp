// How much of a 2-D grid a set of learned position vectors holds: the cosine similarity of every
// pair of positions laid out as a rows x cols grid (row-major), and the mean of it for positions one
// step apart (Manhattan distance 1) against positions `far` or more steps apart. A table that knows
// its grid has alike neighbours; 16 unrelated random vectors show no gap.
#pragma once

#include <cstddef>

#include <xtensor/xarray.hpp>

#include "core/array.hpp"

namespace attnlab::nn {

struct GridSimilarity {
  xt::xarray<double> cosine;  // (N, N), N = rows * cols
  double neighbours = 0, far = 0;
};

// vectors (rows * cols, d). ShapeError naming the function for vectors that are not 2-D, a count
// that is not rows * cols, a vector of norm 0, or a grid with no pair `far` steps apart.
GridSimilarity grid_similarity(const Array<float>& vectors, std::size_t rows, std::size_t cols, std::size_t far = 3);

}  // namespace attnlab::nn
