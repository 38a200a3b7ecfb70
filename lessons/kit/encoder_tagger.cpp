#include "lessons/kit/encoder_tagger.hpp"

#include <stdexcept>
#include <string>

#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/self_attention_input.hpp"
#include "lessons/kit/tagging.hpp"

namespace attnlab::lessons {

History train_tagger(nn::EncoderModel<float>& model, const nn::data::Tagged& train, const Recipe& recipe) {
  return lessons::train(model, train.size(), [&](const std::vector<std::size_t>& rows) {
    const nn::data::Tagged b = train.rows(rows);
    return cross_entropy(model.forward(b.inputs), b.targets);
  }, recipe);
}

std::vector<Timing> tagger_step_medians(const std::vector<std::unique_ptr<nn::EncoderModel<float>>>& models,
                                        const nn::data::Tagged& batch, int rounds) {
  std::vector<nn::Module<float>*> timed;
  for (const auto& m : models) timed.push_back(m.get());
  return training_step_medians(
      timed, [&](std::size_t i) { return cross_entropy(models[i]->forward(batch.inputs), batch.targets); }, rounds);
}

std::vector<Tensor<float>> attention_on(nn::EncoderModel<float>& model, const IndexArray& inputs) {
  NoGrad no_grad;
  model.eval();
  model.forward(inputs);
  return model.attention_weights();
}

IndexArray encoder_tags(nn::EncoderModel<float>& model, const IndexArray& inputs, const nn::HeadGates& gates) {
  check(model.config().pooling == nn::Pooling::None, "encoder_tags",
        "the model pools its tokens into one output, not one tag per token");
  model.eval();
  const auto tags = [&] { return predict_tags([&](const IndexArray& x) { return model.forward(x); }, inputs); };
  if (gates.empty()) return tags();
  IndexArray p;
  nn::with_head_gates(model.encoder, gates, [&] { p = tags(); });
  return p;
}

double tag_accuracy(nn::EncoderModel<float>& model, const nn::data::Tagged& set, Index ignore,
                    const nn::HeadGates& gates) {
  return score_tags(encoder_tags(model, set.inputs, gates), set.targets, ignore).token;
}

OffsetProfile offset_profile_of(nn::EncoderModel<float>& model, const IndexArray& inputs, std::size_t layer) {
  if (layer >= model.encoder.size())
    throw std::out_of_range("offset_profile_of: layer " + std::to_string(layer) + " of a model of " +
                            std::to_string(model.encoder.size()) + " layers");
  return offset_profile(attention_on(model, inputs)[layer].value());
}

OffsetHead offset_head(nn::EncoderModel<float>& model, const IndexArray& inputs, long offset, std::size_t far) {
  const std::vector<Tensor<float>> layers = attention_on(model, inputs);
  OffsetHead h{head_for_offset(layers, offset), 0.0, {}};
  const Array<float>& w = layers[h.pick.layer].value();  // (B, heads, L, L)
  h.far = far_mass(w, far)[h.pick.head];
  h.profile = xt::view(offset_profile(w).weight, h.pick.head);
  return h;
}

HeadWorth head_worth(nn::EncoderModel<float>& model, const nn::data::Tagged& validation, const nn::data::Tagged& test,
                     Index ignore) {
  const nn::HeadGates all_on = nn::all_heads_on(model.encoder);
  const nn::HeadAblation ablation =
      nn::ablate_heads(all_on, [&](const nn::HeadGates& g) { return tag_accuracy(model, validation, ignore, g); });
  HeadWorth w{ablation.importance, nn::prune_heads(all_on, ablation.least_important_first, [&](const nn::HeadGates& g) {
                return tag_accuracy(model, test, ignore, g);
              }), {}};
  for (std::size_t l = 0; l < all_on.size(); ++l)
    for (std::size_t h = 0; h < all_on[l].size(); ++h) {
      nn::HeadGates g = all_on;
      g[l][h] = 0.0f;
      w.alone_off.push_back(encoder_tags(model, validation.inputs, g));
    }
  return w;
}

plots::Figure head_importance_figure(const std::vector<std::pair<std::string, xt::xarray<double>>>& importances,
                                     const std::string& title) {
  if (importances.empty()) plots::fail("head_importance_figure", "no models for '", title, "'");
  plots::Figure fig(1600, 550 * int(importances.size()), int(importances.size()), 1);
  fig.title(title);
  for (std::size_t p = 0; p < importances.size(); ++p) {
    const xt::xarray<double>& importance = importances[p].second;
    plots::HeatmapOptions o;
    o.cmap = plots::Colormap::reds(), o.vmin = 0.0, o.vmax = 1.0;
    o.annotate = true, o.colorbar = false, o.square_cells = false;
    o.x_labels = numbered("head ", importance.shape()[1], 1);
    o.y_labels = numbered("layer ", importance.shape()[0], 1);
    plots::heatmap(fig.panel(int(p), 0).title(importances[p].first), importance, o);
  }
  fig.shared_colorbar({plots::Colormap::reds(), 0.0, 1.0, "accuracy lost"});
  return fig;
}

std::vector<std::string> at_positions(const std::vector<std::string>& tokens) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < tokens.size(); ++i) out.push_back(tokens[i] + " @" + std::to_string(i));
  return out;
}

std::vector<std::string> at_positions(const IndexArray& one) {
  std::vector<std::string> tokens;
  for (Index id : one) tokens.push_back(std::to_string(id));
  return at_positions(tokens);
}

AttentionInput explorer_input(nn::EncoderModel<float>& model, const std::string& name,
                              const std::vector<std::string>& tokens, const IndexArray& one) {
  struct Drop {  // the kept queries and keys go however this ends
    nn::Encoder<float>& e;
    ~Drop() { e.keep_score_parts(false); }
  } drop{model.encoder};
  model.encoder.keep_score_parts(true);
  const std::vector<Tensor<float>> layers = attention_on(model, one);
  return with_score_parts(self_attention_input(name, tokens, layers), model.encoder.score_parts());
}

AttentionInput explorer_input(const std::vector<NamedModel>& models, const std::string& name,
                              const std::vector<std::string>& tokens, const IndexArray& one) {
  if (models.empty()) throw std::invalid_argument("explorer_input: no models for '" + name + "'");
  AttentionInput all{name, tokens, tokens, {}, {}};
  for (const auto& [model_name, model] : models) {
    const AttentionInput in = explorer_input(*model, name, tokens, one);
    if (all.layers.empty()) all.scale = in.scale;
    if (in.scale != all.scale)
      throw std::invalid_argument("explorer_input: '" + model_name + "' scores at scale " + std::to_string(in.scale) +
                                  ", the models before it at " + std::to_string(all.scale));
    for (std::size_t l = 0; l < in.layers.size(); ++l) {
      all.layers.push_back(model_name + ", " + in.layers[l]);
      all.heads.push_back(in.heads[l]), all.q.push_back(in.q[l]), all.k.push_back(in.k[l]), all.bias.push_back(in.bias[l]);
    }
  }
  return all;
}

}  // namespace attnlab::lessons
