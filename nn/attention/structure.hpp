// What an approximation of attention keeps of an exact attention matrix P (queries x keys, each
// row a distribution): the numbers lesson 18 reads before it measures any output.
//
//   weight_in_band(P, w)         the mean over the queries of the weight on keys within w positions:
//                                what local attention with window w keeps of each row
//   segment_mean_share(P, r)     the share of the energy sum_ij P_ij^2 left after projecting every
//                                row onto the means of r equal segments of the keys: what a fixed
//                                projection, Linformer's E at its start, keeps
//   relative_error(a, b)         ||a - b|| / ||b|| (Frobenius): an approximate output against the exact one
//
// and queries and keys whose exact attention has a known structure, to hold the approximations to.
#pragma once

#include <cstddef>
#include <utility>

#include <xtensor/xarray.hpp>

#include "core/array.hpp"
#include "core/random.hpp"

namespace attnlab::nn {

// ShapeError naming the function for a P that is not 2-D or is empty.
double weight_in_band(const xt::xarray<double>& P, std::size_t window);
// ShapeError also for 0 segments or more segments than keys. The last segment takes the remainder.
double segment_mean_share(const xt::xarray<double>& P, std::size_t segments);
// ShapeError for shapes that differ or a b of norm 0.
double relative_error(const xt::xarray<double>& a, const xt::xarray<double>& b);

// Queries and keys (each (1, n, d)) made of position codes, q_i = k_i = sharpness * PE(i)
// (sinusoidal): q_i . k_j depends on i - j alone and is largest at i = j, so the attention is a
// band around the diagonal, broad and smooth for a small sharpness, a few tokens wide for a large
// one. Sharpness 0: iid standard normal queries and keys drawn from gen (q first), no pattern.
// ShapeError naming banded_queries_keys for n or d of 0 or a negative sharpness.
std::pair<Array<float>, Array<float>> banded_queries_keys(std::size_t n, std::size_t d, double sharpness,
                                                          Generator& gen);

}  // namespace attnlab::nn
