// The date task of lessons 02 and 03 as the models see it: generated dates (nn/data/dates) in
// their human formats, split train / validation / test by distinct source string, and encoded one
// character per token with vocabularies built from the training split; and two checks of what a
// model made of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
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

// Where the input spells the target's year (its first four characters) with four digits: the
// position of the first digit, the last place it occurs; nullopt when the year is not written out
// (a two-digit year). What year_attention and year_window measure against, and figures mark.
std::optional<std::size_t> year_digits_at(const Pair& pair);

// Each map's rows scaled to sum to 1 (a row of zeros stays zero): local attention's weights sum to
// less than 1, the Gaussian scales them down, and year_attention compares shares.
std::vector<xt::xarray<double>> row_shares(std::vector<xt::xarray<double>> maps);

// Where a local window goes when the year is written: over the examples whose input spells the
// year with four digits, at position `at`, the share of the year-writing steps t = 0..3 whose digit
// (at + t) lies within D of the window's centre p_t, the mean distance |p_t - (at + t)|, and the
// share a window fixed at the middle of the input (S / 2, S the characters before <eos>) would get.
// centres[i] holds example i's p_t per output step (nn::rnn::window_centres). std::invalid_argument
// when the counts differ.
struct YearWindow {
  double within = 0, mean_distance = 0, middle_within = 0;
  std::size_t steps = 0;  // year-writing steps counted
};
YearWindow year_window(const std::vector<std::vector<double>>& centres, const std::vector<Pair>& pairs,
                       double half_window);

// Whether a string is shaped like an ISO date, YYYY-MM-DD: ten characters, digits where digits belong.
bool iso_shaped(const std::string& s);

// How much of each field the predictions get right: the shares of predictions whose year
// (characters 0-3), month (5-6) and day (8-9) match the target's, and the share shaped like an ISO
// date at all. std::invalid_argument when the counts differ or there are none.
struct DateFields {
  double year = 0, month = 0, day = 0, iso_shaped = 0;
};
DateFields date_fields(const std::vector<std::string>& predictions, const std::vector<Pair>& pairs);

// Up to `want` rows of `pairs` whose sources differ in length: the first row of each band of
// `band` characters (lengths 0 .. band - 1, band .. 2 band - 1, ...), in the order met.
// std::invalid_argument for a band of 0.
std::vector<std::size_t> lengths_apart(const std::vector<Pair>& pairs, std::size_t want, std::size_t band);

// Up to `want` rows of `pairs` that show different written forms: the first source with " of ",
// a word then a slash, a long form with ", ", a dash, a dot, digits only, in that order, then the
// first rows not yet taken. Examples for a figure that cover the formats rather than look-alikes.
std::vector<std::size_t> varied_examples(const std::vector<Pair>& pairs, std::size_t want);

// A long written form: words and a comma-space (", "), more than 20 characters ("Tuesday, March 4,
// 1997"), one of varied_examples' forms. first_long_form: the first row of `pairs` whose source is
// one, or the last row when none is; std::invalid_argument naming first_long_form for no pairs.
bool long_written_form(const std::string& source);
std::size_t first_long_form(const std::vector<Pair>& pairs);

}  // namespace attnlab::nn::data
