// The date task of lessons 02 and 03 as the models see it: generated dates (nn/data/dates) in
// their human formats, split train / validation / test by distinct source string, and encoded one
// character per token with vocabularies built from the training split; and two checks of what a
// model made of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <xtensor/xarray.hpp>

#include "nn/data/batch.hpp"
#include "nn/data/pair.hpp"
#include "nn/data/split.hpp"

namespace attnlab::nn::data {

struct DateTask : EncodedSplits {
  Splits<Pair> pairs;  // the strings, split 80 / 10 / 10
};
// n distinct dates from the seed. std::invalid_argument for n below 10 (a split would be empty).
DateTask make_date_task(std::size_t n, std::uint64_t seed);

// How many inputs appear in two splits: 0 when the splits are held out from each other.
std::size_t split_overlap(const Splits<Pair>& pairs);

// Does attention land where the answer is? Over the examples whose input spells the year with
// four digits, the share of attention the first four output steps (the year's digits) put on
// those four input characters, averaged; beside it the same share under uniform attention (4 / S).
// attention[i] is example i's (output steps, source characters) map. std::invalid_argument when
// the counts differ.
struct YearAttention {
  double mass = 0, uniform = 0;
  std::size_t examples = 0;
};
YearAttention year_attention(const std::vector<xt::xarray<double>>& attention, const std::vector<Pair>& pairs);

}  // namespace attnlab::nn::data
