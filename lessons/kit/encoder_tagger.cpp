#include "lessons/kit/encoder_tagger.hpp"

#include <stdexcept>
#include <string>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/self_attention_input.hpp"
#include "lessons/kit/tagging.hpp"
#include "lessons/story/lesson.hpp"
#include "lessons/story/stats.hpp"
#include "lessons/story/text.hpp"

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

LengthScores evaluate_at_two_lengths(nn::EncoderModel<float>& model, const nn::data::Tagged& held_out,
                                     const nn::data::Tagged& held_out_long, std::size_t batch) {
  const Tagger logits_of = [&model](const IndexArray& inputs) { return model.forward(inputs); };
  return evaluate_at_two_lengths(logits_of, held_out, held_out_long, batch);
}

ScoredTagger train_and_score(std::unique_ptr<nn::EncoderModel<float>> model, const nn::data::Tagged& train,
                             const nn::data::Tagged& test, const nn::data::Tagged& test_long, const Recipe& recipe,
                             std::size_t batch) {
  ScoredTagger t{{}, std::move(model), {}};
  t.history = train_tagger(*t.model, train, recipe);
  static_cast<LengthScores&>(t) = evaluate_at_two_lengths(*t.model, test, test_long, batch);
  return t;
}

TwoLengthReport report_two_lengths(const std::vector<NamedTagger>& taggers, std::size_t train_length,
                                   std::size_t long_length) {
  if (taggers.empty()) throw std::invalid_argument("report_two_lengths: no taggers");
  TwoLengthReport r;
  std::vector<double> token[2], exact[2];
  for (const auto& [name, t] : taggers) {
    if (t == nullptr || t->history.epoch_loss.empty())
      throw std::invalid_argument("report_two_lengths: " + name + " has no training to report");
    const auto at_long = [t = t](double v) { return t->runs_long() ? fixed(v, 3) : std::string("n/a"); };
    r.rows.push_back(row(name, fixed(t->at_train.token, 3), fixed(t->at_train.exact, 3), at_long(t->at_long.token),
                         at_long(t->at_long.exact), fixed(t->history.epoch_loss.back(), 4)));
    for (std::size_t i = 0; i < (t->runs_long() ? 2 : 1); ++i) {
      const TagScores& s = i ? t->at_long : t->at_train;
      metric(text("token_accuracy_", name, "_L", i ? long_length : train_length), s.token);
      metric(text("exact_match_", name, "_L", i ? long_length : train_length), s.exact);
      r.bars[i].categories.push_back(name), token[i].push_back(s.token), exact[i].push_back(s.exact);
    }
  }
  for (std::size_t i : {0, 1}) r.bars[i].series = {{"per-token accuracy", token[i]}, {"exact match", exact[i]}};
  return r;
}

PositionReport report_by_position(const std::vector<NamedTagger>& taggers, std::size_t train_length) {
  PositionReport r;
  for (std::size_t i = 0; i < taggers.size(); ++i) {
    const auto& [name, t] = taggers[i];
    if (!t->runs_long()) {
      r.rows.push_back(row(name, "n/a", "n/a", "n/a"));
      continue;
    }
    const std::vector<double>& a = t->at_long.by_position;
    r.rows.push_back(row(name, fixed(mean_over(a, 0, train_length), 3), fixed(mean_over(a, train_length), 3),
                         fixed(t->at_long.exact, 3)));
    r.curves.push_back(curve(name, a));
    r.curves.back().x = r.curves.back().x - 1.0, r.curves.back().color = plots::series_color(i);  // positions from 0
  }
  return r;
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

plots::Figure offset_heads_figure(const std::vector<NamedOffsetHead>& heads, std::size_t trained, const std::string& title) {
  if (heads.empty()) throw std::invalid_argument("offset_heads_figure: no heads for '" + title + "'");
  std::vector<LinePanel> panels;
  const double edge = double(trained) - 0.5;  // offsets beyond +-(trained - 1) never occurred in training
  for (const NamedOffsetHead& h : heads) {
    const std::size_t n = h.head.profile.size();
    if (n % 2 == 0)
      throw std::invalid_argument("offset_heads_figure: " + h.name + "'s profile holds " + std::to_string(n) +
                                  " offsets, not 2L - 1");
    const double L = double(n + 1) / 2.0;
    plots::Series profile("", xt::arange<double>(-L + 1, L), h.head.profile);
    profile.color = h.color;
    panels.push_back({h.name + " (layer " + std::to_string(h.head.pick.layer + 1) + ", head " +
                          std::to_string(h.head.pick.head + 1) + ")",
                      {profile, reference("farthest offset in training", {-edge, -edge}, {0.0, 1.0}),
                       reference("", {edge, edge}, {0.0, 1.0})}});
  }
  LinePanelsOptions style;
  style.title = title, style.xlabel = "Offset i - j (positive: key left of the query)", style.ylabel = "Mean weight";
  style.line.markers = true, style.line.ymin = 0.0, style.line.ymax = 1.05;
  return line_panels(panels, style);
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

AttentionInput explorer_input(const std::vector<NamedModel>& models, const std::string& name,
                              const nn::data::Vocab& vocab, const IndexArray& one) {
  return explorer_input(models, name, at_positions(vocab.decode(std::vector<Index>(one.begin(), one.end()))), one);
}

std::optional<std::pair<std::size_t, std::size_t>> first_repeat(const std::vector<std::string>& tokens) {
  for (std::size_t i = 0; i < tokens.size(); ++i)
    for (std::size_t j = i + 1; j < tokens.size(); ++j)
      if (tokens[i] == tokens[j]) return std::make_pair(i, j);
  return std::nullopt;
}

}  // namespace attnlab::lessons
