// Where each head looks, by offset: over self-attention weights (B, h, L, L), the mean weight each
// head puts at every offset i - j from -(L - 1) to L - 1 (offset_mass at each), its peak, and the
// weight at a given offset. A head that fetches the token o places to the left peaks at o.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xarray.hpp>

#include "core/array.hpp"
#include "plots/figure.hpp"

namespace attnlab::lessons {

struct OffsetProfile {
  xt::xarray<double> weight;  // (h, 2L - 1): column o + L - 1 holds offset o
  std::size_t length = 0;     // L

  // The mean weight of `head` at `offset`; std::out_of_range naming OffsetProfile::at outside the range.
  double at(std::size_t head, long offset) const;
  // The offset where `head` looks most, and its weight there (the first such offset on ties).
  std::pair<long, double> peak(std::size_t head) const;
  // How many of `offsets` some head peaks at; how many some head gives more than `share` of its weight.
  std::size_t offsets_peaked(const std::vector<std::size_t>& offsets) const;
  std::size_t offsets_above(const std::vector<std::size_t>& offsets, double share) const;
  // Tick labels for the columns, offsets -(L - 1) .. L - 1: the multiples of `every`, blank between.
  std::vector<std::string> offset_labels(std::size_t every = 1) const;
};

// ShapeError naming offset_profile unless weights are (B, h, L, L).
OffsetProfile offset_profile(const Array<float>& weights);

// Where the heads of several models look, in one heatmap under `title`: a row per head, the heads of
// the first profile on top, named by `head_labels`; a column per offset, labelled every `every`.
// std::invalid_argument naming offset_profiles_figure for no profiles, profiles of different
// lengths, or not one label a row.
plots::Figure offset_profiles_figure(const std::vector<OffsetProfile>& profiles, const std::vector<std::string>& head_labels,
                                     const std::string& title, std::size_t every = 3, int width = 1800, int height = 1300);

}  // namespace attnlab::lessons
