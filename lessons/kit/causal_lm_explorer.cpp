#include "lessons/kit/causal_lm_explorer.hpp"

#include <stdexcept>

#include "lessons/kit/figures.hpp"
#include "lessons/kit/self_attention_input.hpp"
#include "nn/lm/score.hpp"
#include "plots/heatmap.hpp"

namespace attnlab::lessons {

AttentionInput causal_lm_attention_input(nn::CausalLM<float>& model, const nn::data::Vocab& vocab,
                                         const std::vector<Index>& ids, const std::string& name) {
  const std::size_t limit = model.config().max_length;
  if (ids.empty() || ids.size() > limit)
    throw std::invalid_argument("causal_lm_attention_input: needs 1 .. " + std::to_string(limit) + " ids, got " +
                                std::to_string(ids.size()));
  {
    NoGrad no_grad;
    model.blocks.keep_score_parts(true);  // the queries and keys too, for the neuron view
    model.forward(nn::lm::as_row(ids));
  }
  AttentionInput in = with_score_parts(self_attention_input(name, token_labels(ids, vocab), model.attention_weights()),
                                       model.blocks.score_parts());
  model.blocks.keep_score_parts(false);
  // Grouped-query attention (lesson 12): the page groups the query heads by the key/value head they read.
  if (const std::size_t kv = model.config().layer.kv_heads; kv > 0) in.kv_heads.assign(in.layers.size(), kv);
  return in;
}

plots::Figure causal_mask_figure(const std::vector<std::string>& labels, const std::string& title) {
  if (labels.empty()) throw std::invalid_argument("causal_mask_figure: no labels, no mask to draw");
  const std::size_t n = labels.size();
  xt::xarray<double> mask = xt::zeros<double>({n, n});
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j <= i; ++j) mask(i, j) = 1.0;
  plots::Figure fig(1500, 1400);
  fig.title(title);
  plots::HeatmapOptions o = attention_style(labels, labels, true);
  o.decimals = 0;
  o.colorbar = false;
  plots::heatmap(fig.panel(0).xlabel("Keys").ylabel("Queries"), mask, o);
  return fig;
}

}  // namespace attnlab::lessons
