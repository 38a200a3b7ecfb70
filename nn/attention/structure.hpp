// What an approximation of attention keeps of an exact attention matrix P (queries x keys, each
// row a distribution): the numbers lesson 16 reads before it measures any output.
//
//   weight_in_band(P, w)         the mean over the queries of the weight on keys within w positions:
//                                what local attention with window w keeps of each row
//   segment_mean_share(P, r)     the share of the energy sum_ij P_ij^2 left after projecting every
//                                row onto the means of r equal segments of the keys: what a fixed
//                                projection, Linformer's E at its start, keeps
//   relative_error(a, b)         ||a - b|| / ||b|| (Frobenius): an approximate output against the exact one
#pragma once

#include <cstddef>

#include <xtensor/xarray.hpp>

namespace attnlab::nn {

// ShapeError naming the function for a P that is not 2-D or is empty.
double weight_in_band(const xt::xarray<double>& P, std::size_t window);
// ShapeError also for 0 segments or more segments than keys. The last segment takes the remainder.
double segment_mean_share(const xt::xarray<double>& P, std::size_t segments);
// ShapeError for shapes that differ or a b of norm 0.
double relative_error(const xt::xarray<double>& a, const xt::xarray<double>& b);

}  // namespace attnlab::nn
