#include "lessons/kit/bert.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include <xtensor/xadapt.hpp>
#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "lessons/story/stats.hpp"
#include "lessons/story/text.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/self_attention_input.hpp"
#include "lessons/story/lesson.hpp"
#include "nn/metrics.hpp"

namespace attnlab::lessons::bert {

// The full run's long phase is 16 epochs: at 4 (a minute less) the neighbour counts tied with the
// model over seeds (issue 37); at 16 it passes them, in about a minute at 2 threads.
ModelSettings model_settings() {
  return full_or_quick(ModelSettings{64, 4, 4, 256, {32, 64, 8192, 10}, {128, 32, 2048, 16}, 2e-3, 400},
                       ModelSettings{48, 4, 2, 192, {32, 32, 4096, 6}, {64, 32, 1024, 1}, 4e-3, 64});
}

FineTuneSettings fine_tune_settings() {
  return {model_settings(), full_or_quick(10, 6), 32, full_or_quick(5e-4, 1e-3), full_or_quick<std::size_t>(100, 60),
          full_or_quick<std::vector<std::size_t>>({5, 10, 20, 50}, {10}), full_or_quick(100L, 40L),
          full_or_quick(200L, 60L), 1e-2};
}

Recipe fine_tune_recipe(const FineTuneSettings& r, std::size_t examples) {
  if (examples == 0 || r.finetune_batch == 0)
    throw std::invalid_argument(text("fine_tune_recipe: ", examples, " labelled entries in batches of ", r.finetune_batch,
                                     " (need both above 0)"));
  Recipe f;
  f.epochs = r.finetune_epochs, f.batch = r.finetune_batch, f.lr = r.finetune_lr, f.weight_decay = 0.01;
  f.warmup = 0.1, f.decay = Decay::cosine, f.floor = 0.05, f.clip = 1.0, f.seed = seed() + 31;
  const long per_epoch = long((examples + f.batch - 1) / f.batch);
  f.epochs = std::max<int>(f.epochs, int((r.least_steps + per_epoch - 1) / per_epoch));
  return f;
}

std::vector<std::size_t> label_counts(const FineTuneSettings& r) {
  std::vector<std::size_t> counts = r.fewer_labels;
  counts.push_back(r.finetune_per_topic);
  return counts;
}

Recipe head_first_recipe(const FineTuneSettings& r, std::size_t examples) {
  if (examples == 0 || r.finetune_batch == 0 || r.head_first_steps < 1)
    throw std::invalid_argument(text("head_first_recipe: ", examples, " labelled entries in batches of ", r.finetune_batch,
                                     " for ", r.head_first_steps, " steps (need all three above 0)"));
  Recipe h;
  h.batch = r.finetune_batch, h.lr = r.head_first_lr, h.weight_decay = 0.01, h.decay = Decay::constant, h.clip = 1.0;
  h.seed = seed() + 31;
  const long per_epoch = long((examples + h.batch - 1) / h.batch);
  h.epochs = int((r.head_first_steps + per_epoch - 1) / per_epoch);
  return h;
}

History train_head_first(nn::EncoderModel<float>& model, const nn::data::TopicSet& labelled, std::size_t context,
                         const Recipe& recipe, Generator& crop) {
  return train(model.head, labelled.size(), [&](const std::vector<std::size_t>& rows) {
    const nn::data::TopicBatch b = nn::data::topic_batch(labelled, rows, context, &crop);
    Tensor<float> h;
    {
      NoGrad frozen;
      h = model.features(b.ids, b.real);
    }
    return cross_entropy(model.classify(h, b.real), b.labels);
  }, recipe);
}

TopicSplits topic_splits(const nn::data::ClozeCorpus& c, const std::vector<std::string>& topics, std::size_t per_topic,
                         std::uint64_t seed) {
  namespace data = nn::data;
  TopicSplits d{data::topic_set(c, c.split.train, topics), {}, data::topic_set(c, c.split.validation, topics),
                data::topic_set(c, c.split.test, topics)};
  d.train = data::topic_subset(d.all_train, topics.size(), per_topic, seed);
  return d;
}

nn::data::ClozeCorpus load_corpus() {
  namespace data = nn::data;
  return data::cloze_corpus(data::split_fortunes(data::read_fortunes(), kHeldOutShare, kHeldOutShare, kSplitSeed));
}

std::string shown(const nn::data::Vocab& v, Index id) {
  const std::string& t = v.token(id);
  if (t == "<mask>") return "\u25ae";
  if (t == "<cls>") return "CLS";
  if (t == "<eos>") return "EOS";
  return visible(t);
}

std::string shown_text(const nn::data::Vocab& v, const std::vector<Index>& ids) {
  std::string s;
  for (Index id : ids) s += shown(v, id);
  return s;
}

nn::EncoderModelConfig config(const nn::data::ClozeCorpus& c, const ModelSettings& r) {
  nn::EncoderModelConfig cfg;
  cfg.vocab = c.vocab.size(), cfg.num_classes = kTopics.size(), cfg.num_layers = r.layers;
  cfg.max_length = r.context();
  // Pre-norm with a final norm (BERT itself is post-norm; pre-norm trains without a long warm-up).
  // No dropout: at this size it costs as much as the rest of the step and the few epochs do not overfit.
  cfg.layer = nn::LayerConfig{r.d_model, r.heads, r.d_ff, 0.0, /*norm_first=*/true, nn::Activation::GELU, 1e-5};
  cfg.positional = nn::Positional::RelativeBias;
  cfg.pooling = nn::Pooling::First;  // the classifier reads [CLS]
  cfg.pad_id = nn::data::Vocab::pad;
  return cfg;
}

std::unique_ptr<nn::MaskedLM<float>> new_model(const nn::data::ClozeCorpus& c, const ModelSettings& r) {
  return new_model(c, r, nn::Pooling::First);
}

std::unique_ptr<nn::MaskedLM<float>> new_model(const nn::data::ClozeCorpus& c, const ModelSettings& r, nn::Pooling pooling) {
  nn::EncoderModelConfig cfg = config(c, r);
  cfg.pooling = pooling;
  Generator gen(seed());
  return std::make_unique<nn::MaskedLM<float>>(cfg, gen);
}

nn::data::ClozeScores score(nn::MaskedLM<float>& bert, const std::vector<nn::data::MaskedWindows>& set) {
  NoGrad no_grad;
  bert.eval();
  nn::data::ClozeTally tally;
  for (const nn::data::MaskedWindows& b : set) {
    const Array<float> logp = log_softmax(bert.forward(b.ids, b.real, b.positions), -1).value();
    const IndexArray guess = nn::argmax_last(logp);
    for (std::size_t k = 0; k < b.size(); ++k)
      tally.add(double(logp(k, std::size_t(b.targets(k)))), guess(k) == b.targets(k), b.choices[k]);
  }
  return tally.scores();
}

std::vector<Index> likeliest(const Array<float>& logp, std::size_t row, const nn::data::ClozeIds& ids, std::size_t k) {
  if (logp.dimension() != 2 || row >= logp.shape()[0] || ids.first < 0 || ids.first >= ids.end ||
      std::size_t(ids.end) > logp.shape()[1] || k > std::size_t(ids.end - ids.first))
    throw std::invalid_argument(text("likeliest: row ", row, " of log-probabilities ", shape_str(logp.shape()), ", the ", k,
                                     " likeliest of the characters [", ids.first, ", ", ids.end, ")"));
  std::vector<Index> order(std::size_t(ids.end - ids.first));
  std::iota(order.begin(), order.end(), ids.first);
  std::sort(order.begin(), order.end(), [&](Index a, Index b) { return logp(row, std::size_t(a)) > logp(row, std::size_t(b)); });
  order.resize(k);
  return order;
}

Recipe pretraining_recipe(const ModelSettings& r, const Phase& ph) {
  Recipe recipe;
  recipe.label = text("pretraining, ", ph.context - 1, " characters"), recipe.epochs = ph.epochs, recipe.batch = ph.batch;
  recipe.lr = r.pretrain_lr, recipe.weight_decay = 0.01, recipe.beta2 = 0.98, recipe.warmup = 0.05;
  recipe.decay = Decay::cosine, recipe.floor = 0.05, recipe.clip = 1.0, recipe.seed = seed();
  return recipe;
}

long phase_steps(const Phase& ph) {
  Recipe q;
  q.epochs = ph.epochs, q.batch = ph.batch;
  return fit_steps(ph.windows, q);
}

History pretrain_phase(nn::MaskedLM<float>& bert, const nn::data::ClozeCorpus& c, const Phase& ph, Recipe recipe,
                       Generator& windows, Generator& masks) {
  namespace data = nn::data;
  if (ph.windows == 0 || ph.batch == 0 || ph.context < 2)
    throw std::invalid_argument(text("pretrain_phase: a phase of ", ph.windows, " windows in batches of ", ph.batch,
                                     " with context ", ph.context, " (need windows and a batch, and a context of 2 or more)"));
  recipe.label = text("pretraining, ", ph.context - 1, " characters"), recipe.epochs = ph.epochs, recipe.batch = ph.batch;
  return train(bert, ph.windows, [&](const std::vector<std::size_t>& rows) {
    const data::MaskedWindows b = data::masked_windows(
        c.ids, c.train, data::random_starts(rows.size(), c.train.size(), ph.context, windows), ph.context, masks);
    return cross_entropy(bert.forward(b.ids, b.real, b.positions), b.targets);
  }, recipe);
}

std::vector<xt::xarray<double>> attention_on(nn::EncoderModel<float>& model, const std::vector<Index>& ids) {
  if (ids.empty()) throw std::invalid_argument("attention_on: an empty sequence");
  NoGrad no_grad;
  model.eval();
  model.features(xt::adapt(ids, {std::size_t(1), ids.size()}));
  std::vector<xt::xarray<double>> out;
  for (const Tensor<float>& w : model.attention_weights()) out.push_back(xt::cast<double>(xt::view(w.value(), 0)));
  return out;
}

AttentionInput attention_input(nn::EncoderModel<float>& model, const nn::data::Vocab& v, const std::vector<Index>& ids,
                               const std::string& name, bool score_parts) {
  if (score_parts) {
    if (ids.empty()) throw std::invalid_argument("attention_on: an empty sequence");
    std::vector<std::string> tokens;
    for (Index id : ids) tokens.push_back(shown(v, id));
    NoGrad no_grad;
    model.eval();
    model.encoder.keep_score_parts(true);
    model.features(xt::adapt(ids, {std::size_t(1), ids.size()}));
    AttentionInput in = with_score_parts(self_attention_input(name, tokens, model.attention_weights()), model.encoder.score_parts());
    model.encoder.keep_score_parts(false);
    return in;
  }
  const std::vector<xt::xarray<double>> layers = attention_on(model, ids);
  std::vector<std::string> tokens;
  for (Index id : ids) tokens.push_back(shown(v, id));
  AttentionInput in{name, tokens, tokens, {}, {}};
  for (std::size_t l = 0; l < layers.size(); ++l) {
    in.layers.push_back(text("layer ", l + 1)), in.heads.emplace_back();
    for (std::size_t h = 0; h < layers[l].shape()[0]; ++h) in.heads[l].push_back(xt::view(layers[l], h));
  }
  return in;
}

plots::Figure head_grid_figure(const AttentionInput& in, const std::string& title) {
  const std::size_t n = in.queries.size(), m = in.keys.size();
  std::size_t count = 0;
  for (const auto& layer : in.heads) count += layer.size();
  if (count == 0) throw std::invalid_argument("head_grid_figure: '" + in.name + "' has no head");
  xt::xarray<double> all = xt::zeros<double>({count, n, m});
  std::vector<std::string> titles;
  for (std::size_t l = 0, k = 0; l < in.heads.size(); ++l)
    for (std::size_t h = 0; h < in.heads[l].size(); ++h, ++k) {
      xt::view(all, k) = in.heads[l][h];
      titles.push_back(text("Layer ", l + 1, ", head ", h + 1));
    }
  plots::HeatmapGridOptions g;
  g.heatmap.x_labels = in.keys, g.heatmap.y_labels = in.queries;
  g.heatmap.vmin = 0.0;  // the top of the scale is the largest weight of any head
  g.heatmap.colorbar_label = "attention weight";
  g.panel_titles = titles;
  g.cols = 2;  // two panels a row: each wide enough to read in the book
  g.title = title;
  g.width_px = 1950;
  g.height_px = int(850 * ((count + 1) / 2) + 250);
  return plots::heatmap_grid(all, g);
}

Array<float> topic_probabilities(nn::EncoderModel<float>& model, const nn::data::TopicSet& s, std::size_t context) {
  NoGrad no_grad;
  model.eval();
  return rows_in_batches(s.size(), 64, [&](const std::vector<std::size_t>& rows) {
    const nn::data::TopicBatch b = nn::data::topic_batch(s, rows, context, nullptr);
    return softmax(model.forward(b.ids, b.real), -1).value();
  });
}

Array<float> encoder_features(nn::EncoderModel<float>& model, const nn::data::TopicSet& s, std::size_t context,
                              bool mean_of_tokens) {
  NoGrad no_grad;
  model.eval();
  const std::size_t d = model.config().layer.d_model;
  return rows_in_batches(s.size(), 64, [&](const std::vector<std::size_t>& rows) {
    const nn::data::TopicBatch b = nn::data::topic_batch(s, rows, context, nullptr);
    const Array<float> h = model.features(b.ids, b.real).value();  // (B, L, d)
    Array<float> f = xt::zeros<float>({rows.size(), d});
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::size_t n = 0;
      for (std::size_t l = 0; l < h.shape()[1]; ++l) {
        if (mean_of_tokens ? !b.real.mask()(i, l) : l > 0) continue;
        xt::view(f, i) += xt::view(h, i, l);
        ++n;
      }
      xt::view(f, i) /= float(std::max<std::size_t>(n, 1));
    }
    return f;
  });
}


ExampleEntry example_entry(const nn::data::TopicSet& s, const IndexArray& predicted, std::size_t context) {
  if (s.size() == 0 || predicted.size() < s.size())
    throw std::invalid_argument(text("example_entry: ", s.size(), " entries and ", predicted.size(),
                                     " predictions (need at least one entry, a prediction for each)"));
  ExampleEntry e;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (s.entries[i].size() >= 24 && s.entries[i].size() <= 40 && predicted(i) == s.labels(i)) {
      e.row = i;
      break;
    }
  e.ids = s.entries[e.row];
  if (e.ids.size() > context) e.ids.resize(context);
  return e;
}

ExplorerPage fine_tuned_explorer_page(nn::EncoderModel<float>& pretrained, nn::EncoderModel<float>& scratch,
                                      const nn::data::Vocab& v, const std::vector<Index>& ids, const std::string& topic) {
  const std::string entry = text("\"", shown_text(v, ids), "\"");
  return {"Lesson 15: the fine-tuned BERTs on a held-out entry", "characters (queries)", "characters (keys)",
          text("A held-out ", topic, " entry read by the two models section 2 fine-tuned: the pretrained one, then the "
               "one from scratch (choose the input). [CLS] is the first row: its attention is what the classifier reads. "
               "Choose a layer and a head, hover a character to see which characters it reads, click it for its scores "
               "split into query-key products."),
          {attention_input(pretrained, v, ids, "pretrained, fine-tuned: " + entry, true),
           attention_input(scratch, v, ids, "from scratch, fine-tuned: " + entry, true)}};
}

plots::Figure cls_attention_figure(const AttentionInput& in, const std::string& title) {
  if (in.heads.empty() || in.heads.back().empty() || in.keys.empty())
    throw std::invalid_argument("cls_attention_figure: '" + in.name + "' has no layer, head or token");
  const std::size_t L = in.heads.size(), H = in.heads.back().size(), n = in.keys.size();
  xt::xarray<double> rows = xt::zeros<double>({L + H, n});
  std::vector<std::string> labels, cells;
  for (std::size_t l = 0; l < L; ++l) {
    for (const auto& w : in.heads[l]) xt::view(rows, l) += xt::view(w, 0, xt::all());
    xt::view(rows, l) /= double(in.heads[l].size());
    labels.push_back(text("layer ", l + 1, " (mean of heads)"));
  }
  for (std::size_t h = 0; h < H; ++h) {
    xt::view(rows, L + h) = xt::view(in.heads[L - 1][h], 0, xt::all());
    labels.push_back(text("layer ", L, ", head ", h + 1));
  }
  for (std::size_t k = 0; k < L + H; ++k) cells.insert(cells.end(), in.keys.begin(), in.keys.end());
  plots::HeatmapOptions ho;
  ho.cell_text = cells;
  ho.y_labels = labels;
  ho.x_labels = number_labels(n, 10);
  ho.colorbar_label = "attention weight of [CLS]";
  ho.cmap = plots::Colormap::reds();
  HeatmapFigureOptions hs;
  hs.title = title;
  hs.xlabel = "position";
  hs.width = 2000;
  hs.height = int(400 + 1800 / n * (L + H));
  return heatmap_figure(rows, ho, hs);
}

ClsMass cls_attention_by_kind(nn::EncoderModel<float>& model, const nn::data::ClozeCorpus& c, const nn::data::TopicSet& s,
                              std::size_t context) {
  if (s.size() == 0) throw std::invalid_argument("cls_attention_by_kind: an empty set");
  const auto kind = [&](Index id) {
    if (id < c.ids.first || id >= c.ids.end) return 0;
    const std::string& t = c.vocab.token(id);
    return (t.size() == 1 && std::isalnum(static_cast<unsigned char>(t[0]))) ? 2 : 1;
  };
  ClsMass m;
  for (std::size_t i = 0; i < s.size(); ++i) {
    std::vector<Index> e = s.entries[i];
    if (e.size() > context) e.resize(context);
    const auto a = attention_on(model, e);
    m.by_layer.resize(a.size(), std::array<double, 3>{});
    for (std::size_t l = 0; l < a.size(); ++l)
      for (std::size_t j = 0; j < e.size(); ++j)
        m.by_layer[l][std::size_t(kind(e[j]))] += xt::mean(xt::view(a[l], xt::all(), 0, j))() / double(s.size());
    for (Index id : e) m.share[std::size_t(kind(id))] += 1.0 / double(e.size()) / double(s.size());
  }
  return m;
}

std::vector<std::vector<std::string>> cls_mass_rows(const ClsMass& m) {
  const auto shares = [](const std::string& name, const std::array<double, 3>& k) {
    return std::vector<std::string>{name, percent(k[0], 1), percent(k[1], 1), percent(k[2], 1)};
  };
  std::vector<std::vector<std::string>> rows = {shares("share of the tokens", m.share)};
  for (std::size_t l = 0; l < m.by_layer.size(); ++l) rows.push_back(shares(text("layer ", l + 1, ": [CLS]'s attention"), m.by_layer[l]));
  return rows;
}

plots::Figure masking_figure(const nn::data::Vocab& v, const std::vector<MaskedExample>& examples, std::size_t width) {
  using nn::data::MaskChoice;
  if (width == 0) throw std::invalid_argument("masking_figure: rows of 0 tokens");
  std::vector<std::array<std::size_t, 2>> pieces;  // (example, first position)
  for (std::size_t e = 0; e < examples.size(); ++e) {
    const MaskedExample& x = examples[e];
    if (x.masked.input.size() != x.ids.size() || x.masked.choice.size() != x.ids.size())
      throw std::invalid_argument(text("masking_figure: example ", e, " has ", x.ids.size(), " tokens, ",
                                       x.masked.input.size(), " read and ", x.masked.choice.size(), " choices"));
    for (std::size_t lo = 0; lo < x.ids.size(); lo += width) pieces.push_back({e, lo});
  }
  if (pieces.empty()) throw std::invalid_argument("masking_figure: no tokens to draw");
  const std::size_t rows = 2 * pieces.size();
  xt::xarray<double> kind = xt::zeros<double>({rows, width});
  std::vector<std::string> cells(rows * width), labels;
  for (std::size_t p = 0; p < pieces.size(); ++p) {
    const auto [e, lo] = pieces[p];
    const MaskedExample& x = examples[e];
    for (std::size_t l = 0; l < width; ++l) {
      const std::size_t at = lo + l;
      const bool in = at < x.ids.size();
      kind(2 * p, l) = kind(2 * p + 1, l) = in ? double(int(x.masked.choice[at])) : std::nan("");
      if (!in) continue;
      cells[2 * p * width + l] = shown(v, x.ids[at]);
      cells[(2 * p + 1) * width + l] = shown(v, x.masked.input[at]);
    }
    labels.push_back(text("entry ", e + 1, ", ", lo, "-", std::min(lo + width, x.ids.size()) - 1, ": text"));
    labels.push_back("what BERT reads");
  }
  plots::HeatmapOptions ho;
  ho.cell_text = cells, ho.y_labels = labels, ho.x_labels = number_labels(width, 5);
  // One color per choice (the values 0..3 land exactly on the table's four entries).
  ho.cmap = plots::Colormap("choices", {plots::Color{0.97, 0.97, 0.97}, plots::Color{0.99, 0.68, 0.38},
                                         plots::Color{0.90, 0.33, 0.33}, plots::Color{0.45, 0.76, 0.45}}, false);
  ho.vmin = 0, ho.vmax = 3, ho.colorbar = false;
  HeatmapFigureOptions style;
  style.title = "The 80/10/10 rule: orange [MASK], red random, green kept";
  style.xlabel = "position in the row";
  style.width = 1800;
  style.height = int(300 + 75 * rows);
  return heatmap_figure(kind, ho, style);
}

plots::Figure pretraining_figure(const History& h, std::size_t first_phase_epochs, std::size_t first_phase_steps,
                                 const ModelSettings& r, const nn::data::ClozeScores& unigram,
                                 const nn::data::ClozeScores& neighbours) {
  const auto &vl = h.validation_of("loss"), &va = h.validation_of("accuracy");
  const auto &vls = h.validation_of("loss_short"), &vas = h.validation_of("accuracy_short");
  const std::size_t short_chars = r.short_windows.context - 1, long_chars = r.long_windows.context - 1;
  if (vl.empty() || va.size() != vl.size() || vls.size() != vl.size() || vas.size() != vl.size() ||
      first_phase_epochs > vl.size() || first_phase_steps > h.steps)
    throw std::invalid_argument(text("pretraining_figure: validation scores of ", vl.size(), ", ", va.size(), ", ", vls.size(),
                                     " and ", vas.size(), " epochs, ", first_phase_epochs, " epochs and ", first_phase_steps,
                                     " steps in the first phase of ", h.steps, " (need one score of each per epoch, "
                                     "and the first phase within the run)"));
  plots::Figure fig(1800, 1900, 2, 1);
  fig.title("Masked characters: held-out loss and accuracy against counted baselines");
  const Windowed training = windowed(h.loss, std::max<std::size_t>(1, h.steps / 60));
  // The step at which each epoch ends: the two phases have their own steps per epoch.
  std::vector<double> epoch_end;
  const std::size_t fe = first_phase_epochs;
  const std::size_t short_steps = first_phase_steps / std::max<std::size_t>(1, fe);
  const std::size_t long_steps = (h.steps - first_phase_steps) / std::max<std::size_t>(1, vl.size() - fe);
  for (std::size_t e = 1; e <= vl.size(); ++e)
    epoch_end.push_back(double(e <= fe ? e * short_steps : first_phase_steps + (e - fe) * long_steps));
  const std::vector<double> span = {1.0, double(h.steps)};
  const auto colored = [](plots::Series s, std::size_t color, bool dashed = false) {
    s.color = plots::series_color(color), s.dashed = dashed;
    return s;
  };
  const auto flat = [&](const std::string& name, double v, std::size_t color) { return colored(curve(name, span, {v, v}), color, true); };
  const auto boundary = [&](double lo, double hi) {  // where the long windows start
    const double x = double(first_phase_steps) + 0.5;
    return reference(text("windows of ", long_chars, " from here"), {x, x}, {lo, hi});
  };
  const double top = std::max(*std::max_element(training.y.begin(), training.y.end()), unigram.loss);
  plots::LineOptions lo;
  lo.markers = true;
  lo.ymin = 0.0;  // a cross-entropy is never below 0: the axis starts there, not at a padded -1
  plots::line_plot(fig.panel(0).title("Cross-entropy of the masked characters").xlabel("training step").ylabel("nats"),
                   {colored(curve("training (mean over steps)", training.x, training.y), 0),
                    colored(curve(text("validation, windows of ", short_chars), epoch_end, vls), 1),
                    colored(curve(text("validation, windows of ", long_chars), epoch_end, vl), 2),
                    flat("unigram, test", unigram.loss, 3), flat("neighbours, test", neighbours.loss, 4),
                    boundary(0.0, top)}, lo);
  lo.ymin = 0.0, lo.ymax = 1.0;
  plots::line_plot(fig.panel(1).title("Accuracy on the masked characters").xlabel("training step").ylabel("accuracy"),
                   {colored(curve(text("validation, windows of ", short_chars), epoch_end, vas), 1),
                    colored(curve(text("validation, windows of ", long_chars), epoch_end, va), 2),
                    flat("unigram, test", unigram.accuracy, 3), flat("neighbours, test", neighbours.accuracy, 4),
                    boundary(0.0, 1.0)}, lo);
  return fig;
}

namespace {
const plots::Color kGray{0.6, 0.6, 0.6};

plots::Series dashed_curve(const std::string& name, const std::vector<double>& x, const std::vector<double>& y,
                           plots::Color color) {
  plots::Series s = curve(name, x, y);
  s.dashed = true, s.color = color;
  return s;
}

// A dashed level line from x0 to x1.
plots::Series flat(const std::string& name, double x0, double x1, double y, plots::Color color) {
  return dashed_curve(name, {x0, x1}, {y, y}, color);
}
}  // namespace

plots::Figure finetuning_figure(const History& pretrained, const History& scratch, double bag, std::size_t classes) {
  const auto& pa = pretrained.validation_of("accuracy");
  const auto& sa = scratch.validation_of("accuracy");
  if (pa.empty() || pa.size() != sa.size())
    throw std::invalid_argument(text("finetuning_figure: validation accuracies of ", pa.size(), " and ", sa.size(),
                                     " epochs (need one a epoch, as many for both)"));
  plots::Figure fig(1800, 1900, 2, 1);
  fig.title("Fine-tuning on five topics: pretrained against from scratch");
  const auto by_step = [](const History& h) { return windowed(h.loss, std::max<std::size_t>(1, h.steps_per_epoch / 2)); };
  const Windowed wp = by_step(pretrained), ws = by_step(scratch);
  plots::LineOptions training_style;
  plots::line_plot(fig.panel(0).title("Training loss").xlabel("step").ylabel("cross-entropy"),
                   {curve("pretrained", wp.x, wp.y), curve("from scratch", ws.x, ws.y)}, training_style);
  plots::LineOptions lo;
  lo.markers = true;
  lo.ymin = 0.0;
  lo.ymax = 1.0;
  std::vector<double> x(pa.size());
  std::iota(x.begin(), x.end(), 1.0);
  plots::line_plot(fig.panel(1).title("Validation accuracy").xlabel("epoch").ylabel("accuracy"),
                   {curve("pretrained", x, pa), curve("from scratch", x, sa),
                    flat("bag of characters (test)", 1.0, double(pa.size()), bag, plots::series_color(2)),
                    flat("chance", 1.0, double(pa.size()), 1.0 / double(classes), kGray)}, lo);
  return fig;
}

LabelCurves label_curves(const std::vector<LabelPoint>& points, const std::string& title) {
  LabelCurves c;
  for (const LabelPoint& q : points) {
    c.per_topic.push_back(double(q.per_topic)), c.pretrained.push_back(q.pretrained), c.scratch.push_back(q.scratch);
    c.bag.push_back(q.bag), c.gap.push_back(q.pair.gap), c.noise.push_back(q.pair.noise);
  }
  c.title = title;
  return c;
}

SweepComparison compare_sweeps(const std::vector<LabelPoint>& changed, const std::vector<LabelPoint>& plain) {
  bool same = !changed.empty() && changed.size() == plain.size();
  for (std::size_t i = 0; same && i < changed.size(); ++i) same = changed[i].per_topic == plain[i].per_topic;
  if (!same)
    throw std::invalid_argument(text("compare_sweeps: ", changed.size(), " and ", plain.size(),
                                     " label counts (need the same counts, at least one)"));
  SweepComparison s;
  const double n = double(changed.size());
  for (std::size_t i = 0; i < changed.size(); ++i) {
    const LabelPoint &q = changed[i], &was = plain[i];
    s.ahead += q.pair.gap > 0, s.beyond_chance += q.pair.gap > 2 * q.pair.noise;
    s.over_best_scratch += q.pretrained > std::max(q.scratch, was.scratch);
    s.mean_gap += q.pair.gap / n, s.plain_mean_gap += was.pair.gap / n;
    s.pretrained_change += (q.pretrained - was.pretrained) / n, s.scratch_change += (q.scratch - was.scratch) / n;
  }
  return s;
}

plots::Figure labels_figure(const LabelCurves& c, std::size_t classes) {
  const std::size_t n = c.per_topic.size();
  if (n == 0 || c.pretrained.size() != n || c.scratch.size() != n || c.bag.size() != n || c.gap.size() != n ||
      c.noise.size() != n)
    throw std::invalid_argument(text("labels_figure: ", n, " label counts, ", c.pretrained.size(), " and ", c.scratch.size(),
                                     " accuracies, ", c.bag.size(), " of the bag, ", c.gap.size(), " gaps and ",
                                     c.noise.size(), " chance scales (need as many of each)"));
  std::vector<double> gap, upper, lower;
  for (std::size_t i = 0; i < n; ++i)
    gap.push_back(100 * c.gap[i]), upper.push_back(200 * c.noise[i]), lower.push_back(-200 * c.noise[i]);
  plots::Figure fig(1800, 1900, 2, 1);
  fig.title(c.title);
  plots::LineOptions lo;
  lo.markers = true, lo.log_x = true, lo.ymin = 0.0, lo.ymax = 1.0;
  plots::Series bag_line = curve("bag of characters", c.per_topic, c.bag);
  bag_line.color = plots::series_color(2);
  const double lo_x = c.per_topic.front(), hi_x = c.per_topic.back();
  plots::line_plot(fig.panel(0).title("Test accuracy").xlabel("labelled training entries a topic").ylabel("accuracy"),
                   {curve("pretrained, fine-tuned", c.per_topic, c.pretrained), curve("from scratch", c.per_topic, c.scratch),
                    bag_line, flat("chance", lo_x, hi_x, 1.0 / double(classes), kGray)}, lo);
  plots::LineOptions go;
  go.markers = true, go.log_x = true;
  plots::line_plot(fig.panel(1).title("Pretrained minus from scratch, same test entries").xlabel("labelled training entries a topic")
                       .ylabel("gap (points)"),
                   {curve("gap", c.per_topic, gap), dashed_curve("twice the chance scale", c.per_topic, upper, kGray),
                    dashed_curve("", c.per_topic, lower, kGray), flat("no gap", lo_x, hi_x, 0.0, plots::Color{0.2, 0.2, 0.2})}, go);
  return fig;
}

}  // namespace attnlab::lessons::bert
