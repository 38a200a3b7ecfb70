// Singular values: how close a matrix is to one of low rank (lesson 18 asks it of attention
// matrices, the question behind Linformer). LAPACK's divide-and-conquer SVD (gesdd) through
// xtensor-blas, the one place attnlab needs LAPACK. Why here and not in nn/ beside
// nn/attention/structure.hpp: attnlab::nn is a library others install or add_subdirectory, and it
// needs neither xtensor-blas nor LAPACK; only the lesson kit links them (lessons/CMakeLists.txt).
#pragma once

#include <cstddef>
#include <vector>

#include <xtensor/xarray.hpp>

#include "core/array.hpp"

namespace attnlab::lessons {

// The first `count` matrices of a batch (B, n, m), in double (all B when count >= B): attention
// weights of a batch as the matrices summarize_spectra reads. ShapeError unless the batch is 3-D.
std::vector<xt::xarray<double>> leading_matrices(const Array<float>& batch, std::size_t count);

// The singular values of a 2-D matrix, largest first. ShapeError on another rank or an empty
// matrix; std::runtime_error if LAPACK does not converge.
std::vector<double> singular_values(const xt::xarray<double>& matrix);

// The fewest leading singular values that hold `share` of the energy sum sigma_i^2 (0 < share
// <= 1): the rank a best approximation needs to keep that share of the Frobenius norm squared.
std::size_t rank_for_energy(const std::vector<double>& sigma, double share);

// The share of the energy in the r largest singular values, for r = 1 .. sigma.size(): what the
// best rank-r approximation keeps (sigma largest first; the last entry is 1). ShapeError for no
// values or all zeros.
std::vector<double> cumulative_energy_share(const std::vector<double>& sigma);

// Several matrices of one shape, their spectra summarized as means over the matrices: sigma_r /
// sigma_1 for every r (a curve to draw), the rank that holds `share` of the energy, and the share
// of the energy in the `rank` largest singular values (what the best rank-`rank` approximation
// keeps). ShapeError for no matrices, matrices of different shapes, a rank of 0 or an all-zero matrix.
struct SpectrumSummary {
  std::vector<double> sigma;
  double rank_for_share = 0, share_in_rank = 0;
};
SpectrumSummary summarize_spectra(const std::vector<xt::xarray<double>>& matrices, std::size_t rank, double share = 0.9);

}  // namespace attnlab::lessons
