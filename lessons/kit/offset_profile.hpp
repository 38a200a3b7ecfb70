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
#include "core/tensor.hpp"
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

// Where every head of a model looks near the query (lesson 14's BERT): a row per head of every
// layer ("layer l, head h", layer-major), a column per offset o of the key from the query, -reach ..
// reach (negative: the key is to the left; -1 the token just before), each the head's mean weight
// there (offset_mass at i - j = -o). ShapeError naming near_offsets for a layer that is not
// (B, h, L, L) or layers with different head counts; std::invalid_argument naming it for no layers
// or a reach below 1.
struct NearOffsets {
  xt::xarray<double> weight;       // (layers x heads, 2 reach + 1): column o + reach holds offset o
  std::vector<std::string> heads;  // the rows' names
  long reach = 0;

  // A row's weight at offset o; std::out_of_range naming NearOffsets::at outside the table.
  double at(std::size_t row, long offset) const;
  // The row with the most weight at `offset` (the first on ties).
  std::size_t sharpest(long offset) const;
  // The columns' tick labels: "-8" .. "0" .. "+8".
  std::vector<std::string> offset_labels() const;
};
NearOffsets near_offsets(const std::vector<Tensor<float>>& layers, long reach);

// The table as one heatmap under `title`, every cell's weight printed, from 0 up: a row per head
// (95 pixels each), a column per offset.
plots::Figure near_offsets_figure(const NearOffsets& near, const std::string& title);

}  // namespace attnlab::lessons
