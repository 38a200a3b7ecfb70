#include "lessons/kit/vit_model.hpp"

#include <cmath>
#include <stdexcept>

#include <xtensor/xmanipulation.hpp>
#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "io/files.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/in_batches.hpp"
#include "lessons/kit/self_attention_input.hpp"
#include "lessons/story/stats.hpp"
#include "lessons/story/text.hpp"
#include "nn/attention/rollout.hpp"
#include "nn/checkpoint.hpp"
#include "nn/data/images.hpp"
#include "nn/metrics.hpp"
#include "plots/heatmap.hpp"

namespace attnlab::lessons {

namespace {

// What this code builds and how it feeds the model: a card that says otherwise is another model.
const char* const kPositions = "learned: one vector per patch and one for the class token (pos_embed.weight)";
const char* const kRebuild = "a run of lesson 16 writes a model this code runs: build/bin/16_vit --seed 1 --out DIR, "
                             "then --from DIR";
constexpr double kProbeTolerance = 1e-3;  // on logits of order 1-10, computed in float

std::vector<double> probe_outputs(nn::ViT<float>& vit) {
  NoGrad no_grad;
  vit.eval();
  const Array<float> image = vit_probe_image();
  const Array<float> logits = vit.forward(Tensor<float>(Array<float>(xt::view(image, xt::newaxis())))).value();
  return std::vector<double>(logits.begin(), logits.end());
}

}  // namespace

Array<float> mirror_averaged_probabilities(nn::Module<float>& model, const ImageLogits& logits, const Array<float>& images) {
  model.eval();
  return rows_in_batches(images.shape()[0], 500, [&](const std::vector<std::size_t>& rows) {
    const Array<float> batch = xt::view(images, xt::range(rows.front(), rows.front() + rows.size()));
    return Array<float>(0.5f * (softmax(logits(Tensor<float>(batch)), -1).value() +
                                softmax(logits(Tensor<float>(Array<float>(xt::flip(batch, 2)))), -1).value()));
  });
}

Array<float> image_probabilities(nn::Module<float>& model, const ImageLogits& logits, const Array<float>& images) {
  check(images.dimension() == 3, "image_probabilities", "needs images (N, H, W), got ", shape_str(images.shape()));
  model.eval();
  return rows_in_batches(images.shape()[0], 500, [&](const std::vector<std::size_t>& rows) {
    const Array<float> batch = xt::view(images, xt::range(rows.front(), rows.front() + rows.size()));
    return Array<float>(softmax(logits(Tensor<float>(batch)), -1).value());
  });
}

PreparedImage prepare_image(const xt::xarray<double>& grey, std::size_t side, Invert invert) {
  check(grey.dimension() == 2 && grey.size() > 0 && side > 0, "prepare_image",
        "needs a non-empty picture (H, W) and a side above 0, got ", shape_str(grey.shape()), " and ", side);
  const std::size_t H = grey.shape()[0], W = grey.shape()[1], n = std::max(H, W);
  PreparedImage p;
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t y = 0; y < H; ++y)
    for (std::size_t x = 0; x < W; ++x)
      if (y == 0 || x == 0 || y + 1 == H || x + 1 == W) sum += grey(y, x), ++count;
  p.border = sum / double(count);
  Array<double> square = xt::ones<double>({n, n}) * p.border;  // centred, the border's grey around it
  xt::view(square, xt::range((n - H) / 2, (n - H) / 2 + H), xt::range((n - W) / 2, (n - W) / 2 + W)) = grey;
  p.padded_height = p.padded_width = n;
  Array<double> small = xt::clip(nn::data::area_resize(square, side, side), 0.0, 1.0);
  p.inverted = invert == Invert::always || (invert == Invert::automatic && p.border > 0.5);
  if (p.inverted) small = 1.0 - small;
  p.image = xt::cast<float>(small);
  return p;
}

Array<float> vit_probe_image() {
  Array<float> img = xt::zeros<float>({std::size_t(28), std::size_t(28)});
  for (std::size_t y = 0; y < 28; ++y)
    for (std::size_t x = 0; x < 28; ++x)
      img(y, x) = float(0.5 + 0.5 * std::sin(0.35 * double(x) + 0.2 * double(y)) * std::cos(0.15 * double(y)));
  return img;
}

void write_vit_card(const std::string& stem, nn::ViT<float>& vit, const std::vector<std::string>& classes,
                    const HeldOut& held_out) {
  const nn::ViTConfig& c = vit.config();
  // The card has no field for the readout: load_vit builds the class-token ViT the lesson saves.
  check(c.readout == nn::Readout::class_token, "write_vit_card",
        "the card describes a ViT whose head reads the class token; this one reads the patches' mean");
  Json card = card_origin();
  card.update(Json{{"model", "ViT"}, {"image_height", c.image_height}, {"image_width", c.image_width},
                   {"channels", c.channels}, {"patch", c.patch}, {"layers", c.num_layers}});
  put_layer(card, c.layer);
  card.update(Json{{"positions", kPositions}, {"classes", classes},
                   {"input", "grey levels in [0, 1], a light garment on a black (0) background, as Fashion-MNIST"},
                   {"prediction", "the mean of the class probabilities of the image and of its mirror image"},
                   {"held_out", to_json(held_out)},
                   {"probe", {{"input", "vit_probe_image() (lessons/kit/vit_model.cpp)"}, {"outputs", probe_outputs(vit)}}}});
  write_file_atomic(lesson().path(stem + ".json"), card.dump(1) + "\n", "write_vit_card");
}

LoadedViT load_vit(const std::string& folder, const std::string& stem) {
  const Card card = Card::read(folder + "/" + stem + ".json", "load_vit");
  card.expect("model", "ViT", kRebuild);
  card.expect("positions", kPositions, kRebuild);
  nn::ViTConfig c;
  c.image_height = card.field("image_height").get<std::size_t>();
  c.image_width = card.field("image_width").get<std::size_t>();
  c.channels = card.field("channels").get<std::size_t>();
  c.patch = card.field("patch").get<std::size_t>();
  c.num_layers = card.field("layers").get<std::size_t>();
  c.layer = layer_of(card);
  LoadedViT m;
  m.classes = card.field("classes").get<std::vector<std::string>>();
  c.num_classes = m.classes.size();
  const CardOrigin origin = origin_of(card);
  m.lesson = origin.lesson, m.seed = origin.seed;
  m.held_out = held_out_of(card);
  Generator gen(0);  // every weight is then read from the file
  m.model = std::make_unique<nn::ViT<float>>(c, gen);
  nn::load_checkpoint(folder + "/" + stem + ".npz", m.model->named_parameters());
  check_probe(card, probe_outputs(*m.model), kProbeTolerance, kRebuild);
  return m;
}

Looks class_token_looks(nn::ViT<float>& vit, const Array<float>& images, bool score_parts) {
  NoGrad no_grad;
  vit.eval();
  vit.encoder.keep_score_parts(score_parts);
  const nn::ViTOutput<float> out = vit.forward_with_attention(Tensor<float>(images));
  std::vector<nn::ScoreParts<float>> parts;
  if (score_parts) parts = vit.encoder.score_parts();
  vit.encoder.keep_score_parts(false);
  std::vector<Array<float>> maps;
  for (const Tensor<float>& a : out.attention) maps.push_back(a.value());
  const nn::ClassTokenAttention a = vit.config().readout == nn::Readout::patch_mean ? nn::patch_mean_attention(maps)
                                                                                  : nn::class_token_attention(maps);
  const std::size_t rows = vit.config().image_height / vit.config().patch;
  const std::size_t cols = vit.config().image_width / vit.config().patch;
  const auto grid = [&](auto row) { xt::xarray<double> m = row; m.reshape({rows, cols}); return m; };
  Looks looks;
  looks.logits = xt::cast<double>(out.logits.value());
  looks.parts = std::move(parts);
  for (std::size_t b = 0; b < images.shape()[0]; ++b) {
    looks.rollout.push_back(grid(xt::view(a.rollout, b)));
    looks.layers.emplace_back(), looks.heads.emplace_back(), looks.maps.emplace_back();
    for (std::size_t l = 0; l < maps.size(); ++l) {
      looks.layers[b].push_back(grid(xt::view(a.layers, b, l)));
      const std::size_t H = maps[l].shape()[1];
      xt::xarray<double> heads = xt::cast<double>(xt::view(maps[l], b, xt::all(), 0, xt::range(1, xt::placeholders::_)));
      heads.reshape({H, rows, cols});
      looks.heads[b].push_back(heads);
      looks.maps[b].push_back(xt::cast<double>(xt::view(maps[l], b)));
    }
  }
  return looks;
}

AttentionInput vit_attention_input(const std::string& name, const Looks& looks, std::size_t b) {
  AttentionInput in{name, {"cls"}, {}, {}, {}};
  const std::size_t rows = looks.rollout.at(b).shape()[0], cols = looks.rollout.at(b).shape()[1];
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < cols; ++c) in.queries.push_back("r" + std::to_string(r + 1) + "c" + std::to_string(c + 1));
  in.keys = in.queries;
  for (std::size_t l = 0; l < looks.maps.at(b).size(); ++l) {
    in.layers.push_back("layer " + std::to_string(l + 1));
    in.heads.emplace_back();
    for (std::size_t h = 0; h < looks.maps[b][l].shape()[0]; ++h) in.heads[l].push_back(xt::view(looks.maps[b][l], h));
  }
  return looks.parts.empty() ? in : with_score_parts(std::move(in), looks.parts, b);
}

namespace {
double mass_on(const xt::xarray<double>& map, const xt::xarray<bool>& on) {  // the share of a map on `on`
  return xt::sum(xt::where(on, map, 0.0))() / xt::sum(map)();
}
}  // namespace

ForegroundAttention attention_on_foreground(nn::ViT<float>& vit, const Array<float>& images, float threshold) {
  check(images.dimension() == 3, "attention_on_foreground", "needs images (N, H, W), got ", shape_str(images.shape()));
  const std::size_t patch = vit.config().patch, L = vit.config().num_layers;
  ForegroundAttention r;
  r.layers.resize(L);
  in_batches(images.shape()[0], 500, [&](const std::vector<std::size_t>& rows) {
    const Array<float> batch = xt::view(images, xt::range(rows.front(), rows.front() + rows.size()));
    const Looks looks = class_token_looks(vit, batch);
    for (std::size_t b = 0; b < rows.size(); ++b) {
      const xt::xarray<bool> on = nn::data::foreground_patches(xt::view(batch, b), patch, threshold);
      r.area.push_back(double(xt::sum(on)()) / double(on.size()));
      for (std::size_t l = 0; l < L; ++l) r.layers[l].push_back(mass_on(looks.layers[b][l], on));
      r.rollout.push_back(mass_on(looks.rollout[b], on));
    }
  });
  return r;
}

ForegroundShares foreground_shares(const ForegroundAttention& on) {
  ForegroundShares s{mean_of(on.area), mean_of(on.rollout), 0, {}};
  s.lift = s.area > 0 ? s.rollout / s.area : 0.0;
  for (const std::vector<double>& layer : on.layers) s.layers.push_back(mean_of(layer));
  return s;
}

std::vector<std::vector<std::string>> foreground_rows(const ForegroundAttention& on, const std::string& thing) {
  if (on.area.empty()) throw std::invalid_argument("foreground_rows: no images to average over");
  std::vector<std::vector<std::string>> rows{row("share of the patches " + thing + " covers", percent(mean_of(on.area), 1))};
  for (std::size_t l = 0; l < on.layers.size(); ++l)
    rows.push_back(row(text("layer ", l + 1, ": class token's attention on them"), percent(mean_of(on.layers[l]), 1)));
  rows.push_back(row("rollout over all layers, on them", percent(mean_of(on.rollout), 1)));
  return rows;
}

plots::Figure looks_grid(const std::vector<xt::xarray<double>>& images, const std::vector<std::string>& captions,
                         const std::vector<xt::xarray<double>>& overlays, int cols, const std::string& title, int height) {
  plots::ImageOptions o;
  o.overlay_alpha = 0.6;
  return plots::image_grid(images, captions, overlays, o, {cols, title, 1800, height});
}

nn::GridSimilarity learned_position_similarity(const nn::ViT<float>& vit, std::size_t far) {
  const nn::ViTConfig& c = vit.config();
  const std::size_t rows = c.image_height / c.patch, cols = c.image_width / c.patch, n = rows * cols;
  const Array<float> table = xt::view(vit.pos_embed.weight().value(), xt::range(1, n + 1));  // row 0 is the class token's
  nn::GridSimilarity g = nn::grid_similarity(table, rows, cols, far);
  g.cosine.reshape({n, rows, cols});
  return g;
}

xt::xarray<double> image_of(const Array<float>& images, std::size_t b) { return xt::cast<double>(xt::view(images, b)); }

namespace {
void check_counts(const char* name, const Array<float>& images, const Looks& looks, const std::vector<std::string>& captions) {
  check(images.dimension() == 3 && looks.rollout.size() == images.shape()[0] && captions.size() == images.shape()[0], name,
        "needs images (N, H, W) with the looks and a caption of each, got images ", shape_str(images.shape()), ", ",
        looks.rollout.size(), " looks and ", captions.size(), " captions");
}
}  // namespace

plots::Figure rollout_pairs(const Array<float>& images, const Looks& looks, const std::vector<std::string>& captions,
                            const std::string& title) {
  check_counts("rollout_pairs", images, looks, captions);
  std::vector<xt::xarray<double>> shown, overlays;
  std::vector<std::string> names;
  for (std::size_t b = 0; b < captions.size(); ++b) {
    shown.insert(shown.end(), 2, image_of(images, b));
    overlays.insert(overlays.end(), {{}, looks.rollout[b]});
    names.insert(names.end(), {captions[b], "rollout"});
  }
  return looks_grid(shown, names, overlays, 4, title, int(450 * ((captions.size() + 1) / 2) + 120));
}

plots::Figure layer_rows(const Array<float>& images, const Looks& looks, const std::vector<std::string>& captions,
                         const std::vector<std::size_t>& rows, const std::string& title) {
  check_counts("layer_rows", images, looks, captions);
  const std::size_t L = looks.layers.empty() ? 0 : looks.layers[0].size();
  std::vector<xt::xarray<double>> shown, overlays;
  std::vector<std::string> names;
  for (std::size_t b : rows) {
    check(b < captions.size(), "layer_rows", "row ", b, " of ", captions.size(), " images");
    shown.insert(shown.end(), L + 2, image_of(images, b));
    names.push_back(captions[b]), overlays.emplace_back();
    for (std::size_t l = 0; l < L; ++l) names.push_back("layer " + std::to_string(l + 1)), overlays.push_back(looks.layers[b][l]);
    names.push_back("rollout"), overlays.push_back(looks.rollout[b]);
  }
  return looks_grid(shown, names, overlays, int(L + 2), title, int(330 * rows.size() + 120));
}

ExplorerPage vit_explorer_page(const Looks& looks, const std::vector<std::string>& names) {
  check(names.size() <= looks.maps.size(), "vit_explorer_page", names.size(), " names for the looks of ", looks.maps.size(),
        " images");
  ExplorerPage page;
  page.query_side = "tokens (queries)", page.key_side = "tokens (keys)";
  for (std::size_t b = 0; b < names.size(); ++b) page.inputs.push_back(vit_attention_input(names[b], looks, b));
  return page;
}

plots::Figure patch_grids(const xt::xarray<double>& image, const std::string& name, const std::vector<std::size_t>& patches) {
  check(image.dimension() == 2 && image.shape()[0] == image.shape()[1], "patch_grids", "needs a square image (H, H), got ",
        shape_str(image.shape()));
  const std::size_t side = image.shape()[0];
  plots::Figure fig(1800, 950, 1, int(patches.size()));
  fig.title("An image as a sequence of patches");
  for (std::size_t i = 0; i < patches.size(); ++i) {
    const std::size_t p = patches[i];
    check(p > 0 && side % p == 0, "patch_grids", "patch size ", p, " does not divide the image side ", side);
    plots::ImageOptions o;
    o.grid = p, o.caption = "p = " + std::to_string(p) + ": " + std::to_string((side / p) * (side / p)) + " patches of " +
                            std::to_string(p * p) + " pixels";
    plots::image(fig.panel(int(i)).title(name), image, o);
  }
  return fig;
}

plots::Figure patch_vectors_figure(const Array<float>& image, std::size_t patch) {
  check(image.dimension() == 2 && patch > 0 && image.shape()[0] % patch == 0 && image.shape()[1] % patch == 0,
        "patch_vectors_figure", "needs an image (H, W) whose sides patch size ", patch, " divides, got ",
        shape_str(image.shape()));
  const std::size_t n = (image.shape()[0] / patch) * (image.shape()[1] / patch);
  const Tensor<float> x(Array<float>(xt::view(image, xt::newaxis(), xt::newaxis())));  // (1, 1, H, W)
  plots::HeatmapOptions o;
  o.y_labels = number_labels(n), o.x_labels = number_labels(patch * patch, patch), o.square_cells = false;
  o.colorbar_label = "grey level";
  return heatmap_figure(xt::view(nn::patchify(x, patch).value(), 0), o,
                        {text("The ", n, " patch vectors at p = ", patch), "pixel within the patch", "patch", 1800, 950});
}

std::vector<std::vector<std::string>> vit_parameter_rows(const nn::ViT<float>& vit) {
  const nn::ViTConfig& c = vit.config();
  const std::size_t d = c.layer.d_model, inputs = c.channels * c.patch * c.patch;
  return {row(text("patch embedding: Linear(", inputs, ", ", d, ")"), vit.patch_embed.parameter_count()),
          row(text("class token and ", vit.num_patches() + 1, " positions"), vit.cls_token.size() + vit.pos_embed.parameter_count()),
          row(text(c.num_layers, " encoder layers and the final norm"), vit.encoder.parameter_count()),
          row(text("head: Linear(", d, ", ", c.num_classes, ")"), vit.head.parameter_count()), row("total", vit.parameter_count())};
}

plots::Figure accuracy_by_class(const IndexArray& labels, const std::vector<std::pair<std::string, IndexArray>>& predictions,
                                const std::vector<std::string>& classes, const std::string& title) {
  std::vector<std::pair<std::string, std::vector<double>>> series;
  for (const auto& [model, predicted] : predictions) {
    const Array<double> rates = nn::confusion_rates(labels, predicted, classes.size());
    series.push_back({model, {}});
    for (std::size_t c = 0; c < classes.size(); ++c) series.back().second.push_back(rates(c, c));
  }
  plots::Figure bars(1800, 1000);
  bar_panel(bars.panel(0).title(title).ylabel("test accuracy"), classes, series, 2, 1.1);
  return bars;
}

plots::Figure position_similarity_grid(const Array<double>& cosine, const std::string& title) {
  const auto s = cosine.shape();
  check(cosine.dimension() == 3 && s[1] == s[2] && s[0] == s[1] * s[2], "position_similarity_grid",
        "needs cosines (side^2, side, side), got ", shape_str(s));
  plots::HeatmapGridOptions o;
  o.heatmap.cmap = plots::Colormap::rdbu(), o.heatmap.vmin = -1.0, o.heatmap.vmax = 1.0, o.heatmap.colorbar_label = "cosine";
  o.cols = int(s[1]), o.title = title;
  o.panel_title = "Position", o.xlabel = "column", o.ylabel = "row", o.width_px = 1800, o.height_px = 1800;
  return plots::heatmap_grid(cosine, o);
}

}  // namespace attnlab::lessons
