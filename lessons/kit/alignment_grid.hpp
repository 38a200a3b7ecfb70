// Cross-attention of one translated sentence against its true alignment, as lessons 08 draws it.
#pragma once

#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "nn/data/translation.hpp"
#include "plots/plots.hpp"

namespace attnlab::lessons {

// maps (panels, target words, source words): one panel each, titled, two a row, one shared 0..1
// colorbar; rows are the target words (queries), columns the source words (keys), and the true
// link of every target word is boxed in red. std::invalid_argument naming the function when the
// maps do not fit the sentence or the titles the panels.
plots::Figure alignment_grid(const xt::xarray<double>& maps, const nn::data::TranslationPair& pair,
                             const std::vector<std::string>& titles, const std::string& title,
                             const std::string& ylabel = "target words (queries)");

}  // namespace attnlab::lessons
