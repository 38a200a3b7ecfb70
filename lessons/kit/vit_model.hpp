// Lesson 16's Vision Transformer as files another program runs, and what the lesson and
// `inspect vit` both compute on it: the class probabilities the lesson scores (the image and its
// mirror image averaged) and where the class token looks (its attention per layer and the rollout).
//
// The files: <stem>.npz, the weights (the recipe's checkpoint), and <stem>.json, the model card
// (lessons/kit/model_card.hpp): the sizes, the class names, what the input must be, how a
// prediction is made, the lesson and seed, the held-out accuracy and the probe.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "lessons/kit/explorer.hpp"
#include "lessons/kit/model_card.hpp"
#include "nn/positional/grid_similarity.hpp"
#include "nn/vit.hpp"
#include "plots/image.hpp"

namespace attnlab::lessons {

using ImageLogits = std::function<Tensor<float>(const Tensor<float>&)>;  // images (B, H, W) -> logits (B, classes)

// Class probabilities (N, classes) of images (N, H, W), 500 at a time without the tape, the model
// in eval mode: the mean of the softmax for each image and for its mirror image (left to right),
// how lesson 16 trains (half its images mirrored) and scores every model.
Array<float> mirror_averaged_probabilities(nn::Module<float>& model, const ImageLogits& logits, const Array<float>& images);

// Class probabilities (N, classes) of images (N, H, W) from each image alone, 500 at a time
// without the tape, the model in eval mode: how lesson 16 scores its scenes, trained unmirrored.
Array<float> image_probabilities(nn::Module<float>& model, const ImageLogits& logits, const Array<float>& images);

// A picture of any size made into what the ViT reads (the card's "input"): grey levels (H, W) in
// [0, 1] padded to a square with the mean grey of their border (so that the garment keeps its
// shape), area-averaged to (side, side) (nn::data::area_resize), and inverted, v -> 1 - v, when
// `invert` says so or, by default, when that border is light (mean above 0.5): Fashion-MNIST's
// garments are light on black, a photograph's are mostly dark on white.
enum class Invert { automatic, always, never };
struct PreparedImage {
  Array<float> image;   // (side, side) in [0, 1]
  double border = 0;    // the mean grey of the picture's outermost rows and columns
  bool inverted = false;
  std::size_t padded_height = 0, padded_width = 0;  // the square before averaging
};
// ShapeError naming the function for a picture that is not 2-D and non-empty, or side 0.
PreparedImage prepare_image(const xt::xarray<double>& grey, std::size_t side, Invert invert = Invert::automatic);

// The fixed (28, 28) image the probe runs on: smooth stripes in [0, 1], no dataset needed.
Array<float> vit_probe_image();

// Writes <stem>.json into the lesson's output folder (atomically): vit's config, `classes`, the
// held-out score and the probe (vit's logits on vit_probe_image()). ShapeError naming the function
// for a ViT whose head reads the patches' mean: the card describes the class-token readout only.
void write_vit_card(const std::string& stem, nn::ViT<float>& vit, const std::vector<std::string>& classes,
                    const HeldOut& held_out);

struct LoadedViT {
  std::unique_ptr<nn::ViT<float>> model;  // in eval mode
  std::vector<std::string> classes;
  std::string lesson;
  long long seed = 0;
  HeldOut held_out;
};

// folder/<stem>.json and folder/<stem>.npz. IoError naming the file when one is missing or
// unreadable; std::runtime_error naming the card for a missing field, a card of another lesson's
// model, or weights that no longer compute the card's probe with this code; ShapeError listing the
// mismatches when the weights do not fit the card's sizes.
LoadedViT load_vit(const std::string& folder, const std::string& stem);

// Where the class token looks in each image of a batch (N, H, W): per image, its attention to the
// patches in each layer (mean of the heads) and the rollout (nn/attention/rollout.hpp), each a
// (H/p, W/p) map laid out as the image; and the class token's row of every head of every layer.
// For a ViT whose head reads the patches' mean (nn::Readout::patch_mean), layers and rollout are
// those of the mean of the patch rows (nn::patch_mean_attention): what reaches the head.
struct Looks {
  std::vector<std::vector<xt::xarray<double>>> layers;  // [image][layer] (H/p, W/p)
  std::vector<xt::xarray<double>> rollout;              // [image] (H/p, W/p)
  std::vector<std::vector<xt::xarray<double>>> heads;   // [image][layer] (heads, H/p, W/p)
  xt::xarray<double> logits;                            // (N, classes), the image alone
  std::vector<std::vector<xt::xarray<double>>> maps;    // [image][layer] (heads, T, T): every token's weights
  std::vector<nn::ScoreParts<float>> parts;             // [layer]: queries and keys of every image, when asked
};
// With score_parts, also every layer's queries and keys (Looks::parts, for the explorer's neuron
// view): for a few images, not a whole test set (the bias alone is B x heads x T x T per layer).
Looks class_token_looks(nn::ViT<float>& vit, const Array<float>& images, bool score_parts = false);

// How much of the class token's attention falls on an image's foreground: per image, the share
// of its patches at least half covered by pixels brighter than `threshold`
// (nn::data::foreground_patches), and the share of the class token's patch attention on those
// patches in each layer (mean of the heads) and in the rollout. Images (N, H, W), 500 at a time.
struct ForegroundAttention {
  std::vector<double> area, rollout;        // [image]
  std::vector<std::vector<double>> layers;  // [layer][image]
};
ForegroundAttention attention_on_foreground(nn::ViT<float>& vit, const Array<float>& images, float threshold);

// attention_on_foreground's means over the images (mean_of): the share of the patches the
// foreground covers, the share of the attention on them in each layer and in the rollout, and the
// rollout's share over the area's (above 1: the foreground draws more than its share; 0 when the
// area is 0). Every mean 0 for no images.
struct ForegroundShares {
  double area = 0, rollout = 0, lift = 0;
  std::vector<double> layers;  // [layer]
};
ForegroundShares foreground_shares(const ForegroundAttention& on);

// attention_on_foreground's means over the images as rows (what, percent with one decimal): the
// share of the patches `thing` covers ("share of the patches the garment covers"), the class
// token's attention on them in each layer ("layer 1: class token's attention on them", ...), and
// the rollout's ("rollout over all layers, on them"). std::invalid_argument naming the function
// for no images.
std::vector<std::vector<std::string>> foreground_rows(const ForegroundAttention& on, const std::string& thing);

// Image b of `looks` for the attention explorer: the tokens "cls", "r1c1", "r1c2", ... (the
// patches row by row, as the model reads them), every head of every layer, with each head's
// queries and keys for the neuron view.
AttentionInput vit_attention_input(const std::string& name, const Looks& looks, std::size_t b);

// Images with the class token's maps over them, as lesson 16 draws them: viridis at alpha 0.6,
// dark blue where it does not look, yellow where it does (each map on its own scale).
plots::Figure looks_grid(const std::vector<xt::xarray<double>>& images, const std::vector<std::string>& captions,
                         const std::vector<xt::xarray<double>>& overlays, int cols, const std::string& title, int height);

// The attention explorer's page for images whose looks (class_token_looks with score_parts) are
// given: one input per name, the tokens "cls", "r1c1", ... (vit_attention_input), queries and keys
// both "tokens". The caller writes the title and the note. ShapeError naming the function for more
// names than looks.
ExplorerPage vit_explorer_page(const Looks& looks, const std::vector<std::string>& names);

// One panel per patch size: a square image (H, H) with the grid of its p x p patches, titled
// `name` and captioned "p = 7: 16 patches of 49 pixels". ShapeError naming the function for an
// image that is not square, or a patch size that does not divide its side.
plots::Figure patch_grids(const xt::xarray<double>& image, const std::string& name, const std::vector<std::size_t>& patches);

// The p x p patches of one image (H, W) as the encoder's input: one row per patch (nn::patchify,
// row by row), its p^2 grey levels along the row, titled "The 16 patch vectors at p = 7", 1800 x
// 950 pixels. ShapeError naming the function for an image that is not 2-D, or a patch size that
// does not divide both its sides.
plots::Figure patch_vectors_figure(const Array<float>& image, std::size_t patch);

// The parameters of a ViT by part, as rows (part, count): the patch embedding ("patch embedding:
// Linear(49, 64)"), the class token with the positions, the encoder layers with the final norm,
// the head, and the total.
std::vector<std::vector<std::string>> vit_parameter_rows(const nn::ViT<float>& vit);

// Accuracy by class of several classifiers on the same examples: the diagonal of each one's
// nn::confusion_rates against the labels, as grouped bars, one group per class. The errors of
// confusion_rates for predictions that do not fit the labels.
plots::Figure accuracy_by_class(const IndexArray& labels, const std::vector<std::pair<std::string, IndexArray>>& predictions,
                                const std::vector<std::string>& classes, const std::string& title);

// The learned positions of a (side x side) grid of patches as a grid of maps: panel (r, c) the
// cosine similarity of position (r, c) to every position, laid out as the image, -1 (red) to 1
// (blue). cosine (side^2, side, side), as nn::grid_similarity's cosine reshaped. ShapeError naming
// the function for another shape.
plots::Figure position_similarity_grid(const Array<double>& cosine, const std::string& title);

// How alike the learned positions of the patches are (nn::grid_similarity over the rows of
// pos_embed after row 0, the class token's): the mean cosine of grid neighbours and of positions
// `far` or more steps apart, and cosine (N, rows, cols), position i's similarity to every position
// laid out as the patch grid (what position_similarity_grid draws for a square grid).
nn::GridSimilarity learned_position_similarity(const nn::ViT<float>& vit, std::size_t far = 3);

// Image b of (N, H, W) images as a (H, W) array of doubles, for the figures.
xt::xarray<double> image_of(const Array<float>& images, std::size_t b);

// Each image (N, H, W) with its caption, beside the rollout of `looks` (class_token_looks of the
// same images) captioned "rollout": two pairs a row. ShapeError naming the function when images,
// looks and captions do not count the same images.
plots::Figure rollout_pairs(const Array<float>& images, const Looks& looks, const std::vector<std::string>& captions,
                            const std::string& title);

// One row for each of the images `rows` picks from (N, H, W): the image with its caption, its map in
// every layer ("layer 1", ...), then the rollout. The same ShapeError as rollout_pairs, naming
// layer_rows, and one for a row past N.
plots::Figure layer_rows(const Array<float>& images, const Looks& looks, const std::vector<std::string>& captions,
                         const std::vector<std::size_t>& rows, const std::string& title);

}  // namespace attnlab::lessons
