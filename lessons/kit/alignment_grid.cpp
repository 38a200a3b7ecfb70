#include "lessons/kit/alignment_grid.hpp"

#include <stdexcept>

#include "lessons/kit/figures.hpp"
#include "core/array.hpp"
#include "nn/data/vocab.hpp"

namespace attnlab::lessons {

plots::Figure alignment_grid(const xt::xarray<double>& maps, const nn::data::TranslationPair& pair,
                             const std::vector<std::string>& titles, const std::string& title,
                             const std::string& ylabel) {
  const std::vector<std::string> source = nn::data::word_tokens(pair.source), target = nn::data::word_tokens(pair.target);
  if (maps.dimension() != 3 || maps.shape()[1] != target.size() || maps.shape()[2] != source.size() ||
      titles.size() != maps.shape()[0] || pair.alignment.size() != target.size())
    throw std::invalid_argument("alignment_grid: maps of shape " + shape_str(maps.shape()) + " and " +
                                std::to_string(titles.size()) + " titles for a sentence of " +
                                std::to_string(source.size()) + " source and " + std::to_string(target.size()) +
                                " target words (" + std::to_string(pair.alignment.size()) + " links)");
  plots::HeatmapGridOptions g;
  g.heatmap = attention_style(source, target);
  for (std::size_t j = 0; j < target.size(); ++j) g.heatmap.outlined.push_back({j, std::size_t(pair.alignment[j])});
  g.cols = 2, g.panel_titles = titles, g.title = title;
  g.xlabel = "source words (keys)", g.ylabel = ylabel;
  g.width_px = 1800, g.height_px = 900 * int((maps.shape()[0] + 1) / 2);
  return plots::heatmap_grid(maps, g);
}

}  // namespace attnlab::lessons
