// Lesson 14: a Vision Transformer trained on Fashion-MNIST, and where it looks.
//
// A Transformer reads a sequence. The Vision Transformer (Dosovitskiy et al. 2020) makes an image
// one: cut it into p x p patches, flatten each patch into a vector, project it to d_model, put a
// learned class token in front and add a learned position to every token. After the encoder the
// class token alone goes to the classifier, so everything the model knows about the image must
// reach it through attention. We walk one image through those steps with the shapes printed,
// train a ViT on the 60,000 Fashion-MNIST training images (5,000 of them held out for
// validation), measure two choices (patch size 7 against 4, and a plain MLP on the raw pixels),
// touch the 10,000 test images once, and then look at where the class token looks.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

#include "core/runtime/parallel.hpp"
#include "lessons/kit/kit.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/fashion_mnist.hpp"
#include "nn/metrics.hpp"
#include "nn/schedule.hpp"
#include "nn/vit.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

using F = float;
constexpr std::size_t kSide = data::kFashionMnistSide, kClasses = 10;
constexpr std::size_t kModel = 64, kHeads = 4, kLayers = 4, kFeedForward = 256, kMlpHidden = 200;
constexpr std::size_t kBatch = 128;
constexpr double kLr = 2e-3, kWeightDecay = 0.05;
constexpr std::uint64_t kSplitSeed = 2017;  // the validation images are the same in every run

std::string class_name(std::size_t c) { return data::fashion_mnist_classes()[c]; }
std::vector<std::string> class_names() {
  std::vector<std::string> names;
  for (std::size_t c = 0; c < kClasses; ++c) names.push_back(class_name(c));
  return names;
}

struct Images {
  Array<F> images;    // (N, 28, 28) in [0, 1]
  IndexArray labels;  // (N)
  std::size_t size() const { return labels.size(); }
  Images rows(const std::vector<std::size_t>& r) const { return {data::take_rows(images, r), data::take_rows(labels, r)}; }
};

struct Data {
  Images train, validation, test;
};

// The training file split in two by a fixed shuffle: validation picks the model's settings and
// shows its progress; the test file is read here and scored once, in section 4.
Data load_data() {
  const auto all = data::load_fashion_mnist<F>(data::FashionSplit::train, full_or_quick<std::size_t>(0, 9000));
  const auto test = data::load_fashion_mnist<F>(data::FashionSplit::test, full_or_quick<std::size_t>(0, 2000));
  const std::size_t n_validation = full_or_quick<std::size_t>(5000, 2000);
  const std::vector<std::size_t> order = data::epoch_order(all.size(), kSplitSeed, 0);
  const Images everything{all.images, all.labels};
  Data d{everything.rows({order.begin() + long(n_validation), order.end()}),
         everything.rows({order.begin(), order.begin() + long(n_validation)}), {test.images, test.labels}};
  config({{"train_images", d.train.size()}, {"validation_images", d.validation.size()},
          {"test_images", d.test.size()}});
  return d;
}

nn::ViTConfig vit_config(std::size_t patch) {
  nn::ViTConfig c;
  c.patch = patch;
  c.num_layers = kLayers;
  // Pre-norm, GELU, no dropout: at this size and budget the model underfits rather than overfits.
  c.layer = nn::LayerConfig{kModel, kHeads, kFeedForward, 0.0, /*norm_first=*/true, nn::Activation::GELU, 1e-6};
  return c;
}

// The baseline: the 784 raw pixels through two hidden layers; no patches, no positions, no attention.
class PixelMLP : public nn::Module<F> {
 public:
  explicit PixelMLP(Generator& gen)
      : in(kSide * kSide, kMlpHidden, gen), hidden(kMlpHidden, kMlpHidden, gen), out(kMlpHidden, kClasses, gen) {
    register_module("in", in);
    register_module("hidden", hidden);
    register_module("out", out);
  }
  Tensor<F> forward(const Tensor<F>& images) const {
    const Tensor<F> x = reshape(images, {long(images.shape()[0]), long(kSide * kSide)});
    return out(gelu(hidden(gelu(in(x)))));
  }
  nn::Linear<F> in, hidden, out;
};

// Any of the lesson's classifiers: images (B, 28, 28) -> logits (B, 10).
using Logits = std::function<Tensor<F>(const Tensor<F>&)>;

// Class probabilities of every image (N, 10), in batches, without the tape: the mean of the model's
// probabilities for the image and for its mirror image. A garment mirrored is the same garment
// (training shows the model both), so the two views are two opinions on one question. Measured on
// the validation images (seed 7, the full recipe at 30 epochs): 0.905 from the image alone, 0.911 from the
// pair; an average of the weights over the last steps (decay 0.999) gave nothing (0.905).
Array<F> probabilities(nn::Module<F>& model, const Logits& logits, const Array<F>& images) {
  model.eval();
  return rows_in_batches(images.shape()[0], 500, [&](const std::vector<std::size_t>& rows) {
    const Array<F> batch = xt::view(images, xt::range(rows.front(), rows.front() + rows.size()));
    const Array<F> mirrored = xt::flip(batch, 2);  // left to right
    return Array<F>(F(0.5) * (softmax(logits(Tensor<F>(batch)), -1).value() +
                              softmax(logits(Tensor<F>(mirrored)), -1).value()));
  });
}

// Light augmentation: each training image moved by up to kShift pixels in each direction (the
// background, 0, fills in) and mirrored left to right with probability 1/2. A garment moved or
// mirrored is the same garment, so the model sees more images than the file holds; validation and
// test images are never changed. One pixel, not two: measured on the validation images (seed 7,
// the full recipe), shifts of up to 2 pixels end at 0.894 and of up to 1 pixel at 0.905; label
// smoothing 0.1 (0.893) and a wider model in the same time (d 96, 16 epochs: 0.889) did not help.
constexpr int kShift = 1;

Array<F> shifted_and_mirrored(const Array<F>& images, Generator& gen) {
  const int side = int(kSide);
  Array<F> out = xt::zeros<F>(images.shape());
  for (std::size_t b = 0; b < images.shape()[0]; ++b) {
    const int dy = int(gen.below(2 * kShift + 1)) - kShift, dx = int(gen.below(2 * kShift + 1)) - kShift;
    const bool mirror = gen.below(2) == 1;
    for (int y = 0; y < side; ++y)
      for (int x = 0; x < side; ++x) {
        const int from_y = y - dy, moved_x = x - dx, from_x = mirror ? side - 1 - moved_x : moved_x;
        if (from_y >= 0 && from_y < side && moved_x >= 0 && moved_x < side)
          out(b, std::size_t(y), std::size_t(x)) = images(b, std::size_t(from_y), std::size_t(from_x));
      }
  }
  return out;
}

// The recipe every model here trains with: AdamW (weight decay 0.05), batches of 128, shifted and
// mirrored training images, a linear warm-up over the first 5 % of the steps and a cosine decay to
// 1/50 of the peak, gradients clipped at norm 1. The validation scores are taken after every epoch.
History train(nn::Module<F>& model, const Logits& logits, const Data& d, int n_epochs, const std::string& label) {
  nn::AdamW<F> opt(model.parameters(), kLr, 0.9, 0.999, 1e-8, kWeightDecay);
  FitOptions fo;
  fo.label = label;
  fo.epochs = n_epochs;
  fo.batch = kBatch;
  fo.seed = seed();
  fo.clip = 1.0;
  const long total = fit_steps(d.train.size(), fo);
  fo.lr = nn::warmup_cosine_lr(kLr, total / 20, total, kLr / 50);
  fo.validate = [&] { return class_scores(probabilities(model, logits, d.validation.images), d.validation.labels); };
  Generator augment(seed() + 100);  // batches come in order, so the same seed gives the same images
  return fit(model, opt, d.train.size(),
             [&](const std::vector<std::size_t>& rows) {
               const Array<F> images = shifted_and_mirrored(data::take_rows(d.train.images, rows), augment);
               return cross_entropy(logits(Tensor<F>(images)), data::take_rows(d.train.labels, rows));
             },
             fo);
}

double final_validation_accuracy(const History& h) { return h.validation_of("accuracy").back(); }

// ---------------------------------------------------------------------------------------------
// 1. Images as sequences.

void images_as_sequences(const Data& d) {
  const Array<F> one = xt::view(d.train.images, xt::range(0, 1));
  const std::size_t label = std::size_t(d.train.labels(0));
  say("One training image, a ", class_name(label), ", is a 28 x 28 grid of grey levels. With patch size p = 7 "
      "it becomes 16 patches of 49 pixels, read row by row; with p = 4, 49 patches of 16 pixels. Either way "
      "the Transformer sees a sequence whose order it does not know: the positions have to be learned.");
  plots::Figure fig(3000, 1000, 1, 3);
  fig.title("An image as a sequence of patches");
  for (std::size_t p : {7, 4}) {
    plots::ImageOptions o;
    o.grid = p;
    o.caption = text("p = ", p, ": ", (kSide / p) * (kSide / p), " patches of ", p * p, " pixels");
    plots::image(fig.panel(p == 7 ? 0 : 1).title(class_name(label)), xt::xarray<double>(xt::view(one, 0)), o);
  }
  const Tensor<F> x(one);
  const Array<F> patch_vectors = nn::patchify(unsqueeze(x, 1), 7).value();  // (1, 16, 49)
  plots::HeatmapOptions ho;
  ho.y_labels = number_labels(16);
  ho.x_labels = number_labels(49, 7);
  ho.square_cells = false;
  ho.colorbar_label = "grey level";
  plots::heatmap(fig.panel(2).title("The 16 patch vectors (p = 7)").xlabel("pixel within the patch").ylabel("patch"),
                 xt::view(patch_vectors, 0), ho);
  save_figure(fig, "patches", "One training image cut into 7 x 7 and 4 x 4 patches, and the 16 vectors of 49 pixels it becomes at p = 7.");

  // The forward pass of nn::ViT, one step at a time, on an untrained model.
  Generator gen(seed());
  nn::ViT<F> vit(vit_config(7), gen);
  vit.eval();
  NoGrad no_grad;
  const Tensor<F> patches = nn::patchify(unsqueeze(x, 1), 7);
  const Tensor<F> embedded = vit.patch_embed(x);
  const Tensor<F> with_class = concat<F>({broadcast_to(vit.cls_token, {1, 1, kModel}), embedded}, 1);
  const Tensor<F> positioned = vit.pos_embed.forward(with_class);
  const Tensor<F> encoded = vit.encoder.forward(positioned);
  const Tensor<F> class_vector = squeeze(slice(encoded, 1, 0, 1), 1);
  const Tensor<F> logits = vit.head(class_vector);
  table({"step", "shape", "what it is"},
        {row("the image", shape_str(x.shape()), "a batch of one 28 x 28 image"),
         row("patchify", shape_str(patches.shape()), "16 patches, each 49 pixels flattened row by row"),
         row("patch embedding", shape_str(embedded.shape()), "one Linear(49, 64) applied to every patch"),
         row("class token in front", shape_str(with_class.shape()), "a learned vector, the same for every image"),
         row("+ learned positions", shape_str(positioned.shape()), "17 learned vectors of 64, one per place"),
         row("encoder", shape_str(encoded.shape()), text(kLayers, " pre-norm layers, ", kHeads, " heads of ", kModel / kHeads)),
         row("the class token's vector", shape_str(class_vector.shape()), "after the final layer norm"),
         row("head", shape_str(logits.shape()), "Linear(64, 10): one score per class")});
  const double diff = max_abs_diff(xt::cast<double>(logits.value()), xt::cast<double>(vit.forward(x).value()));
  say("The steps above give the same logits as ViT::forward to ", sci(diff), ". At p = 4 the sequence is 50 "
      "tokens instead of 17, and each layer's score matrices grow with its square: 4 heads x 50^2 = ", 4 * 50 * 50,
      " scores per layer instead of 4 x 17^2 = ", 4 * 17 * 17, ".");
  metric("walkthrough_vs_forward_max_diff", diff);
}

// ---------------------------------------------------------------------------------------------
// 2. Training the ViT.

struct Trained {
  std::unique_ptr<nn::ViT<F>> vit;
  History history;
};

Trained train_vit(const Data& d) {
  Generator gen(seed());
  Trained t{std::make_unique<nn::ViT<F>>(vit_config(7), gen), {}};
  nn::ViT<F>& vit = *t.vit;
  const std::size_t blocks = vit.encoder.parameter_count(), total = vit.parameter_count();
  table({"part", "parameters"},
        {row("patch embedding: Linear(49, 64)", vit.patch_embed.parameter_count()),
         row("class token and 17 positions", vit.cls_token.size() + vit.pos_embed.parameter_count()),
         row(text(kLayers, " encoder layers and the final norm"), blocks),
         row("head: Linear(64, 10)", vit.head.parameter_count()), row("total", total)});
  // As many epochs as fit the ten minutes with a margin: on a two-core AVX2 machine an epoch takes
  // about 13.3 s and the rest of the lesson about 105 s, so 35 epochs end near 570 s.
  const int n_epochs = epochs(35, 2);
  config({{"vit_patch", 7}, {"vit_d_model", kModel}, {"vit_heads", kHeads}, {"vit_layers", kLayers},
          {"vit_feed_forward", kFeedForward}, {"epochs", n_epochs}, {"batch", kBatch}, {"peak_lr", kLr},
          {"weight_decay", kWeightDecay},
          {"augmentation", text("shift up to ", counted(kShift, "pixel"), ", mirror with probability 1/2")}});
  say("We train it for ", n_epochs, " epochs of ", d.train.size(), " images with AdamW (peak learning rate ", kLr,
      ", weight decay ", kWeightDecay, "), a 5 % warm-up and a cosine decay, batches of ", kBatch, ". Every "
      "training image is moved by up to ", counted(kShift, "pixel"), " each way and mirrored half the time, new draws in "
      "every epoch: with 55,000 images and no augmentation this model starts to fit its training images better "
      "than new ones well before the last epoch. The training loss is therefore measured on changed images. "
      "To classify an image, validation or test, the model reads it and its mirror image and averages its two "
      "sets of class probabilities.");
  t.history = train(vit, [&](const Tensor<F>& x) { return vit.forward(x); }, d, n_epochs, "ViT p=7");
  const History& h = t.history;
  std::vector<std::vector<std::string>> rows;
  const auto& acc = h.validation_of("accuracy");
  const auto& loss = h.validation_of("loss");
  for (std::size_t e = 0; e < acc.size(); ++e)
    if (e < 3 || (e + 1) % 5 == 0 || e + 1 == acc.size())
      rows.push_back(row(e + 1, fixed(h.epoch_loss[e], 4), fixed(loss[e], 4), fixed(acc[e], 4)));
  table({"epoch", "training loss", "validation loss", "validation accuracy"}, rows);
  CurvesFigureOptions style;
  style.title = "ViT (patch 7) on Fashion-MNIST";
  save_figure(loss_curves({{"ViT p=7", &h}}, style), "vit_training",
              "Training loss by step, and training against validation loss by epoch.");
  say("Validation accuracy ", fixed(acc.back(), 4), " after ", h.seconds, " s of training (", fixed(h.median_step_ms(), 1),
      " ms a step, median, at ", counted(threads(), "thread"), ").");
  metric("val_acc_vit", acc.back());
  timing("vit_train_seconds", h.seconds);
  timing("vit_step_ms", h.median_step_ms());
  return t;
}

// ---------------------------------------------------------------------------------------------
// 3. Choices, measured: the patch size, and no attention at all.

struct Baseline {
  std::unique_ptr<PixelMLP> mlp;
  History history;
};

// Both sizes train on a third of the training images for three epochs (two in the quick run): as
// many steps as one full epoch, so that the comparison costs about a minute of the ten and the main
// model keeps the rest. A patch 4 step takes about 3.3 times as long.
void patch_sizes(const Data& full) {
  const int n_epochs = full_or_quick(3, 2);
  const std::size_t n_images = full.train.size() / 3;
  const Data d{full.train.rows(data::first_rows(n_images)), full.validation, {}};  // the rows are in shuffled order
  say("Smaller patches give the model finer pieces and a longer sequence. Both sizes train for ",
      counted(n_epochs, "epoch"), " on ", n_images, " of the training images with the same recipe; the validation "
      "accuracy is after the last epoch.");
  std::vector<std::vector<std::string>> rows;
  std::vector<plots::Series> series;
  std::vector<double> step_ms, accuracy;  // patch 7, then patch 4
  for (std::size_t p : {7, 4}) {
    Generator gen(seed() + 1);
    nn::ViT<F> vit(vit_config(p), gen);
    const History h = train(vit, [&](const Tensor<F>& x) { return vit.forward(x); }, d, n_epochs, text("ViT p=", p));
    const std::size_t tokens = vit.num_patches() + 1;
    rows.push_back(row(p, tokens, vit.parameter_count(), kHeads * tokens * tokens, fixed(h.median_step_ms(), 1),
                       fixed(h.seconds, 0), fixed(final_validation_accuracy(h), 4)));
    std::vector<double> seconds;
    for (std::size_t e = 1; e <= h.validation_of("accuracy").size(); ++e)
      seconds.push_back(h.seconds * double(e) / double(h.validation_of("accuracy").size()));
    series.push_back(curve(text("patch ", p, " (", tokens, " tokens)"), seconds, h.validation_of("accuracy")));
    metric(text("val_acc_short_p", p), final_validation_accuracy(h));
    timing(text("step_ms_p", p), h.median_step_ms());
    step_ms.push_back(h.median_step_ms());
    accuracy.push_back(final_validation_accuracy(h));
  }
  table({"patch", "tokens", "parameters", "scores per layer", "ms per step", "seconds", "validation accuracy"}, rows);
  const std::string cost = fixed(step_ms[1] / step_ms[0], 1);
  say("A patch 4 step costs ", cost, " times as much as a patch 7 step. After the same steps it scores ",
      fixed(accuracy[1], 4), " against ", fixed(accuracy[0], 4), ". In the same seconds patch 7 takes ", cost,
      " times as many steps, so the main model uses patch 7.");
  LineFigureOptions style;
  style.title = "Patch 7 against patch 4: validation accuracy against training time";
  style.xlabel = "seconds of training";
  style.ylabel = "validation accuracy";
  style.markers = true;
  save_figure(line_figure(series, style), "patch_sizes",
              "Validation accuracy after each epoch against the seconds spent, for the two patch sizes.");
}

Baseline mlp_baseline(const Data& d, const History& vit_history) {
  Generator gen(seed() + 2);
  Baseline b{std::make_unique<PixelMLP>(gen), {}};
  const int n_epochs = int(vit_history.validation_of("accuracy").size());
  say("The baseline sees the 784 pixels as one flat vector: two hidden layers of ", kMlpHidden, " (",
      b.mlp->parameter_count(), " parameters), the same epochs (", n_epochs, "), recipe and batches.");
  PixelMLP& mlp = *b.mlp;
  b.history = train(mlp, [&](const Tensor<F>& x) { return mlp.forward(x); }, d, n_epochs, "MLP");
  const History& h = b.history;
  table({"model", "parameters", "seconds", "validation accuracy"},
        {row("ViT, patch 7", "", fixed(vit_history.seconds, 0), fixed(final_validation_accuracy(vit_history), 4)),
         row("MLP on pixels", mlp.parameter_count(), fixed(h.seconds, 0), fixed(final_validation_accuracy(h), 4))});
  LineFigureOptions style;
  style.title = "ViT against an MLP on raw pixels";
  style.xlabel = "epoch";
  style.ylabel = "validation accuracy";
  save_figure(line_figure({curve("ViT, patch 7", vit_history.validation_of("accuracy")),
                           curve("MLP on pixels", h.validation_of("accuracy"))},
                          style),
              "vit_vs_mlp", "Validation accuracy by epoch of the ViT and of the MLP baseline.");
  metric("val_acc_mlp", final_validation_accuracy(h));
  timing("mlp_train_seconds", h.seconds);
  return b;
}

// ---------------------------------------------------------------------------------------------
// 4. The test set, once.

struct TestResult {
  Array<F> vit, mlp;  // probabilities (N, 10)
  IndexArray vit_predicted;
  double vit_accuracy = 0, mlp_accuracy = 0;
};

TestResult the_test_set(const Data& d, nn::ViT<F>& vit, const History& vit_history, PixelMLP& mlp) {
  TestResult r{probabilities(vit, [&](const Tensor<F>& x) { return vit.forward(x); }, d.test.images),
               probabilities(mlp, [&](const Tensor<F>& x) { return mlp.forward(x); }, d.test.images), {}};
  r.vit_predicted = nn::argmax_last(r.vit);
  const IndexArray mlp_predicted = nn::argmax_last(r.mlp);
  const double vit_acc = r.vit_accuracy = nn::accuracy(r.vit_predicted, d.test.labels);
  const double mlp_acc = r.mlp_accuracy = nn::accuracy(mlp_predicted, d.test.labels);
  // Rows the true class, columns the predicted one; the diagonal is the accuracy by class.
  const Array<double> confusion = nn::confusion_rates(d.test.labels, r.vit_predicted, kClasses);
  const Array<double> mlp_confusion = nn::confusion_rates(d.test.labels, mlp_predicted, kClasses);
  std::vector<double> vit_per_class(kClasses), mlp_per_class(kClasses);
  for (std::size_t c = 0; c < kClasses; ++c) vit_per_class[c] = confusion(c, c), mlp_per_class[c] = mlp_confusion(c, c);
  say("Until now the test images have not been used. Scored once: the ViT classifies ", percent(vit_acc, 2),
      " of the ", d.test.size(), " test images correctly, the MLP ", percent(mlp_acc, 2), ".");
  if (!quick()) {
    // What bounds a miss: a model that fits its training images much better than new ones is
    // overfitting (more data or regularisation); one that fits both alike is underfitting (more
    // epochs or width, which the 10-minute budget bounds).
    const double train_loss = vit_history.epoch_loss.back(), val_loss = vit_history.validation_of("loss").back();
    say(vit_acc >= 0.90 ? "The course's target, 0.90 in a full run, is met."
                        : text("The course's target, 0.90 in a full run, is missed by ", fixed(0.90 - vit_acc, 4), "."),
        " In the last epoch the training loss was ", fixed(train_loss, 3), " against ", fixed(val_loss, 3),
        " on validation: ",
        train_loss < val_loss - 0.05 ? "the model fits its training images better than new ones, so more data or "
                                       "stronger regularisation is what would help next."
                                     : "it fits new images about as well as its training images, so a larger model or "
                                       "more epochs is what would help next, and the time budget is what bounds them.");
  }
  plots::Figure fig(3000, 1100, 1, 2);
  fig.title("The test set, scored once");
  bar_panel(fig.panel(0).title("Accuracy by class").ylabel("test accuracy"), class_names(),
            {{"ViT, patch 7", vit_per_class}, {"MLP on pixels", mlp_per_class}}, 2, 1.0);
  confusion_panel(fig.panel(1).title("ViT: true class (rows) against predicted (columns)"), confusion, class_names(),
                  "share of the true class");
  save_figure(fig, "test_set", "Test accuracy by class for both models, and the ViT's confusion matrix (each row sums to 1).");
  metric("test_acc_vit", vit_acc);
  metric("test_acc_mlp", mlp_acc);
  return r;
}

// ---------------------------------------------------------------------------------------------
// 5. Where it looks.

// Per image: the class token's attention to the patches in each layer (mean over heads), and the
// rollout (Abnar & Zuidema 2020): with the residual stream counted as half of each layer,
// A^_l = (mean_h A_l + I) / 2, the class token's row of A^_L ... A^_1 says how much of each input
// token reached it through all the layers. Both as (side, side) maps over the patches.
struct Looks {
  std::vector<std::vector<xt::xarray<double>>> layers;  // [image][layer]
  std::vector<xt::xarray<double>> rollout;               // [image]
};

Looks class_token_looks(nn::ViT<F>& vit, const Array<F>& images) {
  NoGrad no_grad;
  vit.eval();
  const std::vector<Tensor<F>> attention = vit.forward_with_attention(Tensor<F>(images)).attention;
  const std::size_t n = images.shape()[0], T = vit.num_patches() + 1, side = kSide / vit.config().patch;
  auto patch_map = [&](const xt::xarray<double>& m) {
    xt::xarray<double> row = xt::view(m, 0, xt::range(1, T));
    row.reshape({side, side});
    return row;
  };
  Looks looks;
  for (std::size_t b = 0; b < n; ++b) {
    xt::xarray<double> rollout = xt::eye<double>(T);
    std::vector<xt::xarray<double>> per_layer;
    for (const Tensor<F>& a : attention) {
      const xt::xarray<double> mean = xt::mean(xt::cast<double>(xt::view(a.value(), b)), {0});  // (T, T)
      per_layer.push_back(patch_map(mean));
      const xt::xarray<double> step = 0.5 * mean + 0.5 * xt::eye<double>(T);
      xt::xarray<double> next = xt::zeros<double>({T, T});
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t k = 0; k < T; ++k)
          if (step(i, k) != 0.0) xt::view(next, i) += step(i, k) * xt::view(rollout, k);
      rollout = next;
    }
    looks.layers.push_back(per_layer);
    looks.rollout.push_back(patch_map(rollout));
  }
  return looks;
}

// Which patches the garment covers: at least half of their pixels brighter than 0.05 (the
// background of Fashion-MNIST is 0).
xt::xarray<bool> garment_patches(const Array<F>& image, std::size_t patch) {
  const std::size_t side = kSide / patch;
  xt::xarray<bool> on = xt::zeros<bool>({side, side});
  for (std::size_t r = 0; r < side; ++r)
    for (std::size_t c = 0; c < side; ++c) {
      std::size_t bright = 0;
      for (std::size_t i = 0; i < patch; ++i)
        for (std::size_t j = 0; j < patch; ++j) bright += image(r * patch + i, c * patch + j) > F(0.05);
      on(r, c) = 2 * bright >= patch * patch;
    }
  return on;
}

// The share of a map's mass on the garment's patches.
double mass_on(const xt::xarray<double>& map, const xt::xarray<bool>& on) {
  const double total = xt::sum(map)();
  return total > 0 ? xt::sum(xt::where(on, map, 0.0))() / total : 0.0;
}

// Over every test image: the share of the patches the garment covers, and the share of the class
// token's patch attention (each layer, and the rollout) that lands on them, for the correct and
// the wrong predictions apart.
// Returns the rollout's share on the garment over the share of the patches it covers (1: no
// preference).
double attention_on_the_garment(nn::ViT<F>& vit, const Data& d, const IndexArray& predicted) {
  const std::size_t patch = vit.config().patch, L = vit.config().num_layers;
  std::vector<double> area, rollout_right, rollout_wrong;
  std::vector<std::vector<double>> layer(L);
  for (std::size_t lo = 0; lo < d.test.size(); lo += 500) {
    const std::size_t hi = std::min(d.test.size(), lo + 500);
    const Array<F> batch = xt::view(d.test.images, xt::range(lo, hi));
    const Looks looks = class_token_looks(vit, batch);
    for (std::size_t b = 0; b < hi - lo; ++b) {
      const xt::xarray<bool> on = garment_patches(xt::view(batch, b), patch);
      area.push_back(double(xt::sum(on)()) / double(on.size()));
      for (std::size_t l = 0; l < L; ++l) layer[l].push_back(mass_on(looks.layers[b][l], on));
      (predicted(lo + b) == d.test.labels(lo + b) ? rollout_right : rollout_wrong).push_back(mass_on(looks.rollout[b], on));
    }
  }
  std::vector<double> rollout_all = rollout_right;
  rollout_all.insert(rollout_all.end(), rollout_wrong.begin(), rollout_wrong.end());
  std::vector<std::vector<std::string>> rows{row("share of the patches the garment covers", percent(mean_of(area), 1))};
  for (std::size_t l = 0; l < L; ++l)
    rows.push_back(row(text("layer ", l + 1, ": class token's attention on them"), percent(mean_of(layer[l]), 1)));
  rows.push_back(row("rollout over all layers, on them", percent(mean_of(rollout_all), 1)));
  rows.push_back(row("rollout, correctly classified images", percent(mean_of(rollout_right), 1)));
  rows.push_back(row("rollout, misclassified images", percent(mean_of(rollout_wrong), 1)));
  table({"over the " + std::to_string(d.test.size()) + " test images (means)", "share"}, rows);
  say("A patch counts as the garment's when at least half of its pixels are brighter than 0.05. If the class "
      "token looked at random it would put ", percent(mean_of(area), 1), " of its attention there; the rollout puts ",
      percent(mean_of(rollout_all), 1), ": ",
      mean_of(rollout_all) > mean_of(area) ? text(fixed(mean_of(rollout_all) / mean_of(area), 2), " times the chance share.")
                                     : "no more than chance: this model does not favour the garment. The dark "
                                       "patches are not empty of information, though: where the garment is not "
                                       "draws its outline.",
      rollout_wrong.empty() ? std::string()
                            : text(" On the images it gets wrong the share is ", percent(mean_of(rollout_wrong), 1),
                                   ", against ", percent(mean_of(rollout_right), 1), " on the ones it gets right."));
  metric("garment_patch_share", mean_of(area));
  metric("rollout_on_garment", mean_of(rollout_all));
  for (std::size_t l = 0; l < L; ++l) metric(text("layer", l + 1, "_attention_on_garment"), mean_of(layer[l]));
  metric("rollout_on_garment_correct", mean_of(rollout_right));
  metric("rollout_on_garment_wrong", mean_of(rollout_wrong));
  return mean_of(rollout_all) / mean_of(area);
}

// The k-th test image of class c that the ViT gets right, if there is one.
std::optional<std::size_t> right_answer(const Data& d, const IndexArray& predicted, std::size_t c, std::size_t k = 0) {
  for (std::size_t i = 0; i < d.test.size(); ++i)
    if (std::size_t(d.test.labels(i)) == c && predicted(i) == d.test.labels(i) && k-- == 0) return i;
  return std::nullopt;
}

// The first test image of each class that the ViT gets right (classes it never gets right are left out).
std::vector<std::size_t> one_right_per_class(const Data& d, const IndexArray& predicted) {
  std::vector<std::size_t> pick;
  for (std::size_t c = 0; c < kClasses; ++c)
    if (const auto i = right_answer(d, predicted, c)) pick.push_back(*i);
  return pick;
}

Array<F> images_at(const Data& d, const std::vector<std::size_t>& rows) { return data::take_rows(d.test.images, rows); }
xt::xarray<double> image_of(const Array<F>& images, std::size_t b) { return xt::cast<double>(xt::view(images, b)); }

// The panels of an image grid, in reading order: each an image, its caption and (or not) an
// attention map laid over it.
struct Pictures {
  std::vector<xt::xarray<double>> images, overlays;
  std::vector<std::string> captions;
  void add(xt::xarray<double> image, std::string caption, xt::xarray<double> overlay = {}) {
    images.push_back(std::move(image));
    captions.push_back(std::move(caption));
    overlays.push_back(std::move(overlay));
  }
  void append(const Pictures& more) {
    for (std::size_t i = 0; i < more.images.size(); ++i) add(more.images[i], more.captions[i], more.overlays[i]);
  }
  plots::Figure grid(const plots::ImageGridOptions& g) const;
};

plots::ImageOptions overlay_style() {
  plots::ImageOptions o;
  o.overlay_alpha = 0.6;  // viridis: dark blue where it does not look, yellow where it does
  return o;
}

plots::Figure Pictures::grid(const plots::ImageGridOptions& g) const {
  return plots::image_grid(images, captions, overlays, overlay_style(), g);
}

// Returns what attention_on_the_garment returns.
double where_it_looks(nn::ViT<F>& vit, const Data& d, const TestResult& r) {
  const std::vector<std::size_t> picks = one_right_per_class(d, r.vit_predicted);
  const Array<F> picked = images_at(d, picks);
  const Looks looks = class_token_looks(vit, picked);
  {  // one image of every class, and its rollout
    Pictures top, bottom;
    for (std::size_t b = 0; b < picks.size(); ++b) {
      top.add(image_of(picked, b), class_name(std::size_t(d.test.labels(picks[b]))));
      bottom.add(image_of(picked, b), "rollout", looks.rollout[b]);
    }
    top.append(bottom);
    plots::ImageGridOptions g;
    g.cols = int(picks.size());
    g.title = "Where the class token looks: one test image of every class, and its attention rollout";
    g.width_px = 3400;
    g.height_px = 1000;
    save_figure(top.grid(g), "where_it_looks",
                "Top: the first correctly classified test image of every class. Bottom: the attention rollout of the "
                "class token over the patches (yellow: more; each map on its own scale).");
  }
  {  // layer by layer, for four of them
    Pictures rows;
    const std::size_t L = vit.config().num_layers;
    for (std::size_t b : {std::size_t(1), std::size_t(7), std::size_t(8), std::size_t(6)}) {
      if (b >= picks.size()) continue;
      rows.add(image_of(picked, b), class_name(std::size_t(d.test.labels(picks[b]))));
      for (std::size_t l = 0; l < L; ++l) rows.add(image_of(picked, b), text("layer ", l + 1), looks.layers[b][l]);
      rows.add(image_of(picked, b), "rollout", looks.rollout[b]);
    }
    plots::ImageGridOptions g;
    g.cols = int(L + 2);
    g.title = "The class token's attention to the patches, layer by layer (mean over heads)";
    g.width_px = 2600;
    g.height_px = 2000;
    save_figure(rows.grid(g), "attention_by_layer",
                "Each row one test image: the class token's attention to the patches in each layer (mean of the "
                "heads), then the rollout through all layers.");
  }
  return attention_on_the_garment(vit, d, r.vit_predicted);
}

// The most frequent confusions: a wrong image beside a right one of its true class and one of the
// class it was taken for, each with its rollout.
void right_and_wrong(nn::ViT<F>& vit, const Data& d, const TestResult& r) {
  std::vector<std::vector<std::size_t>> wrong(kClasses * kClasses);
  for (std::size_t i = 0; i < d.test.size(); ++i)
    if (r.vit_predicted(i) != d.test.labels(i))
      wrong[std::size_t(d.test.labels(i)) * kClasses + std::size_t(r.vit_predicted(i))].push_back(i);
  std::vector<std::size_t> pairs(wrong.size());
  std::iota(pairs.begin(), pairs.end(), 0);
  std::stable_sort(pairs.begin(), pairs.end(), [&](std::size_t a, std::size_t b) { return wrong[a].size() > wrong[b].size(); });
  std::vector<std::size_t> shown;
  std::vector<std::string> captions;
  std::vector<std::vector<std::string>> rows;
  for (std::size_t k = 0; k < 4 && k < pairs.size() && !wrong[pairs[k]].empty(); ++k) {
    const std::size_t truth = pairs[k] / kClasses, said = pairs[k] % kClasses, i = wrong[pairs[k]].front();
    rows.push_back(row(class_name(truth), class_name(said), wrong[pairs[k]].size()));
    // A different right answer in each row (the k-th of its class), the wrong image itself when
    // the class has none.
    auto right_of = [&](std::size_t c) { return right_answer(d, r.vit_predicted, c, k).value_or(i); };
    shown.insert(shown.end(), {i, right_of(truth), right_of(said)});
    captions.push_back(text(class_name(truth), ", taken for ", class_name(said), " (", fixed(r.vit(i, said), 2), ")"));
    captions.push_back(text("a ", class_name(truth), ", right (", fixed(r.vit(shown[shown.size() - 2], truth), 2), ")"));
    captions.push_back(text("a ", class_name(said), ", right (", fixed(r.vit(shown.back(), said), 2), ")"));
  }
  if (shown.empty()) {
    say("The ViT made no mistake on these test images: nothing to compare.");
    return;
  }
  table({"true class", "taken for", "test images"}, rows);
  const Array<F> images = images_at(d, shown);
  const Looks looks = class_token_looks(vit, images);
  std::vector<xt::xarray<double>> pictures;
  for (std::size_t b = 0; b < shown.size(); ++b) pictures.push_back(image_of(images, b));
  plots::ImageGridOptions g;
  g.cols = 3;
  g.title = "The most frequent mistakes, beside right answers of both classes";
  g.width_px = 2200;
  g.height_px = int(700 * (shown.size() / 3) + 200);
  save_figure(plots::image_grid(pictures, captions, looks.rollout, overlay_style(), g), "right_and_wrong",
              "Each row one of the most frequent confusions: a misclassified test image (the probability it gave the "
              "wrong class), a correctly classified image of its true class and one of the class it was taken for, "
              "each with the class token's attention rollout.");
}

// How much of the 4 x 4 grid the positions hold, from the neighbours' mean cosine minus the far
// patches': a clean grid (above 0.3), a faint trace (0.1 to 0.3), or little of it.
enum class GridTrace { clear, faint, little };
GridTrace grid_trace(double gap) { return gap > 0.3 ? GridTrace::clear : gap > 0.1 ? GridTrace::faint : GridTrace::little; }

// The learned positions, compared with each other: the cosine similarity of position (r, c)'s
// vector to every other patch position's, one small map per position. Returns the mean cosine of
// neighbours minus that of positions three or more steps apart.
double learned_positions(nn::ViT<F>& vit) {
  const std::size_t side = kSide / vit.config().patch, n = side * side;
  const Array<F>& table = vit.pos_embed.weight().value();  // (N + 1, d); row 0 is the class token's
  xt::xarray<double> sims = xt::zeros<double>({n, side, side});
  double near = 0, far = 0;
  std::size_t n_near = 0, n_far = 0;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b) {
      const auto u = xt::cast<double>(xt::view(table, a + 1)), v = xt::cast<double>(xt::view(table, b + 1));
      const double cos = xt::sum(u * v)() / std::sqrt(xt::sum(u * u)() * xt::sum(v * v)());
      sims(a, b / side, b % side) = cos;
      const std::size_t dist = std::size_t(std::abs(long(a / side) - long(b / side)) + std::abs(long(a % side) - long(b % side)));
      if (dist == 1) near += cos, ++n_near;
      if (dist >= 3) far += cos, ++n_far;
    }
  plots::HeatmapGridOptions o;
  o.heatmap.cmap = plots::Colormap::rdbu();
  o.heatmap.vmin = -1.0;
  o.heatmap.vmax = 1.0;
  o.heatmap.colorbar_label = "cosine similarity";
  o.cols = int(side);
  o.title = "Learned positions: each patch position's similarity to every other";
  o.panel_title = "Position";
  o.xlabel = "column";
  o.ylabel = "row";
  o.width_px = 2000;
  o.height_px = 2000;
  save_figure(plots::heatmap_grid(sims, o), "positions",
              "Panel (r, c) shows the cosine similarity of the learned position vector of the patch in row r, column c "
              "to those of all 16 patch positions, laid out as the image.");
  const double gap = near / double(n_near) - far / double(n_far);
  const GridTrace trace = grid_trace(gap);
  say("Nothing told the model that the 16 positions form a 4 x 4 grid: they are 16 free vectors. Trained, the "
      "vectors of neighbouring patches (one step apart in the grid) have a mean cosine similarity of ",
      fixed(near / double(n_near), 3), ", those three or more steps apart ", fixed(far / double(n_far), 3),
      trace == GridTrace::clear ? ": the model has found the image's two dimensions in a one-dimensional sequence."
      : trace == GridTrace::faint
          ? ": a faint trace of the grid, neighbours a little more alike than distant patches, far from the clean "
            "rows and columns that larger ViTs trained longer show."
          : ": at this budget the positions show little of the grid.");
  metric("position_cosine_neighbours", near / double(n_near));
  metric("position_cosine_far", far / double(n_far));
  return gap;
}

// ---------------------------------------------------------------------------------------------
// 6. What to take away: said from this run's measurements.

void takeaway(const TestResult& r, double garment_lift, double position_gap) {
  const GridTrace trace = grid_trace(position_gap);
  say("A ViT turns an image into a sequence and lets attention do the rest: the class token gathers what the "
      "classifier needs from the patches",
      garment_lift > 1.0 ? text(", and in this run it gathers from the garment ", fixed(garment_lift, 2),
                                " times as much as chance would")
                         : "; in this run it shows no preference for the garment over the background",
      ". The model is given no notion of two dimensions",
      trace == GridTrace::clear   ? " and learns one in its positions."
      : trace == GridTrace::faint ? " and learns a faint trace of one in its positions."
                                                     : ", and at this budget its positions learn little of one.",
      " What it is not given is the local structure a convolution builds in, so it has to learn that from data: "
      "on the test set it scores ", percent(r.vit_accuracy, 2), " against ", percent(r.mlp_accuracy, 2),
      " for an MLP that sees the pixels with no structure at all.");
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"14_vit", "A Vision Transformer trained on Fashion-MNIST, and where it looks",
                     "Images as sequences of patches, a ViT trained for real, its choices measured, and its attention on the image",
                     "test_acc_vit"},
                    argc, argv, [] {
                      const Data d = load_data();
                      section("1. Images as sequences");
                      images_as_sequences(d);
                      section("2. Training a ViT");
                      Trained t = train_vit(d);
                      section("3. Choices, measured");
                      patch_sizes(d);
                      Baseline b = mlp_baseline(d, t.history);
                      section("4. The test set, once");
                      const TestResult r = the_test_set(d, *t.vit, t.history, *b.mlp);
                      section("5. Where it looks");
                      const double garment_lift = where_it_looks(*t.vit, d, r);
                      right_and_wrong(*t.vit, d, r);
                      const double position_gap = learned_positions(*t.vit);
                      section("6. What to take away");
                      takeaway(r, garment_lift, position_gap);
                    });
}
