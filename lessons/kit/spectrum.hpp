// Singular values, for the low-rank story of lesson 16 (why Linformer's projection can work):
// LAPACK's divide-and-conquer SVD (gesdd) through xtensor-blas, the one place attnlab needs LAPACK.
#pragma once

#include <cstddef>
#include <vector>

#include <xtensor/xarray.hpp>

namespace attnlab::lessons {

// The singular values of a 2-D matrix, largest first. ShapeError on another rank or an empty
// matrix; std::runtime_error if LAPACK does not converge.
std::vector<double> singular_values(const xt::xarray<double>& matrix);

// The fewest leading singular values that hold `share` of the energy sum sigma_i^2 (0 < share
// <= 1): the rank a best approximation needs to keep that share of the Frobenius norm squared.
std::size_t rank_for_energy(const std::vector<double>& sigma, double share);

}  // namespace attnlab::lessons
