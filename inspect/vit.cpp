// inspect vit shirt.png photo.pgm --index 17
//
// Lesson 16's Vision Transformer classifies each picture: a PNG or PGM file of any size, made into
// what the model reads (lessons/kit/vit_model's prepare_image: padded to a square with its
// border's grey, area-averaged to 28 x 28, inverted when its border is light, since Fashion-MNIST
// shows light garments on black), or a Fashion-MNIST test image by its index. Prints the top
// classes with their probabilities (as the lesson scores: the image and its mirror image
// averaged) and the patches the class token reads most; writes per picture the class token's
// attention in each layer and the rollout over the 28 x 28 input (vit_N.png), every head's
// (heads_N.png), and explorer.html for all of them.
#include <algorithm>
#include <iostream>
#include <numeric>

#include <xtensor/xsort.hpp>
#include <xtensor/xview.hpp>

#include "inspect/inspect.hpp"
#include "io/files.hpp"
#include "io/program.hpp"
#include "lessons/kit/explorer.hpp"
#include "lessons/kit/vit_model.hpp"
#include "lessons/story/text.hpp"
#include "nn/data/fashion_mnist.hpp"

namespace attnlab::inspect {
namespace {

using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

constexpr std::size_t kTop = 3;  // classes printed per picture

struct Picture {
  std::string name;         // "shirt.png", "test image 17 (Trouser)"
  std::string how;          // how it became the model's input, in words
  Array<float> image;       // (28, 28)
};

std::vector<Picture> pictures_of(const Request& r, const std::vector<std::string>& classes) {
  const Invert invert = invert_option(r);
  const std::vector<std::size_t> indices = indices_option(r, 10000, "test-set indices");
  std::vector<Picture> out;
  for (const std::string& path : r.inputs) {
    const xt::xarray<double> grey = read_picture(path, "inspect vit");
    const PreparedImage p = prepare_image(grey, data::kFashionMnistSide, invert);
    out.push_back({path, how_prepared(grey, p, data::kFashionMnistSide), p.image});
  }
  if (!indices.empty()) {
    const std::size_t last = *std::max_element(indices.begin(), indices.end());
    const data::FashionMnist<float> test = data::load_fashion_mnist<float>(data::FashionSplit::test, last + 1);
    for (std::size_t i : indices)
      out.push_back({text("test image ", i, " (", classes.at(std::size_t(test.labels(i))), ")"),
                     "Fashion-MNIST's test file, as the lesson reads it", xt::view(test.images, i)});
  }
  return out;
}

// "r2c3" for patch k of a grid `cols` wide: row and column from 1, as the explorer names them.
std::string patch_name(std::size_t k, std::size_t cols) {
  return "r" + std::to_string(k / cols + 1) + "c" + std::to_string(k % cols + 1);
}

int run_vit(const Request& r) {
  const LoadedViT m = load_checkpoint_of("16_vit", "vit", [&] { return load_vit(r.from, "vit"); });
  // Read and classify every picture first; write only when all went through.
  const std::vector<Picture> pictures = pictures_of(r, m.classes);
  const std::size_t side = data::kFashionMnistSide, n = pictures.size();
  Array<float> batch = xt::zeros<float>({n, side, side});
  for (std::size_t b = 0; b < n; ++b) xt::view(batch, b) = pictures[b].image;
  nn::ViT<float>& vit = *m.model;
  const Array<float> probs = mirror_averaged_probabilities(vit, [&](const Tensor<float>& x) { return vit.forward(x); }, batch);
  const Looks looks = class_token_looks(vit, batch, /*score_parts=*/true);  // the explorer's neuron view too

  ExplorerPage page;
  page.title = "Lesson 16's ViT on your pictures";
  page.query_side = "tokens (queries)", page.key_side = "tokens (keys)";
  page.note = "The model of " + m.lesson + " (seed " + std::to_string(m.seed) + ", from " + r.from +
              "). Token cls is the class token, rRcC the 7 x 7 patch in row R, column C of the 28 x 28 input; hover "
              "cls to see where it reads in each layer and head.";
  std::vector<std::pair<std::string, plots::Figure>> figures;
  const std::size_t L = looks.layers.at(0).size(), H = looks.heads.at(0).at(0).shape()[0];
  for (std::size_t b = 0; b < n; ++b) {
    const Picture& p = pictures[b];
    std::vector<std::size_t> order(m.classes.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t i, std::size_t j) { return probs(b, i) > probs(b, j); });
    std::cout << p.name << " (" << p.how << "):\n";
    for (std::size_t k = 0; k < std::min(kTop, order.size()); ++k)
      std::cout << "  " << m.classes[order[k]] << std::string(13 - std::min<std::size_t>(12, m.classes[order[k]].size()), ' ')
                << percent(probs(b, order[k])) << "\n";
    const xt::xarray<double>& roll = looks.rollout[b];
    std::vector<std::size_t> patches(roll.size());
    std::iota(patches.begin(), patches.end(), 0);
    std::sort(patches.begin(), patches.end(), [&](std::size_t i, std::size_t j) { return roll.data()[i] > roll.data()[j]; });
    std::vector<std::string> most;
    for (std::size_t k = 0; k < 3; ++k) most.push_back(patch_name(patches[k], roll.shape()[1]) + " " + percent(roll.data()[patches[k]]));
    std::cout << "  the class token reads most (rollout through " << L << " layers): " << listing(most) << "\n";

    const std::string answer = m.classes[order[0]] + " " + percent(probs(b, order[0]));
    const xt::xarray<double> image = xt::cast<double>(p.image);
    std::vector<xt::xarray<double>> images(L + 2, image), overlays{{}};
    std::vector<std::string> captions{"input: " + answer};
    for (std::size_t l = 0; l < L; ++l) overlays.push_back(looks.layers[b][l]), captions.push_back(text("layer ", l + 1));
    overlays.push_back(roll), captions.push_back("rollout");
    figures.push_back({text("vit_", b + 1), looks_grid(images, captions, overlays, int(L + 2),
                                                      p.name + ": the class token's attention (mean of the heads)", 560)});
    std::vector<xt::xarray<double>> head_images(L * H, image), head_maps;
    std::vector<std::string> head_captions;
    for (std::size_t l = 0; l < L; ++l)
      for (std::size_t h = 0; h < H; ++h)
        head_maps.push_back(xt::view(looks.heads[b][l], h)), head_captions.push_back(text("layer ", l + 1, ", head ", h + 1));
    figures.push_back({text("heads_", b + 1), looks_grid(head_images, head_captions, head_maps, int(H),
                                                        p.name + ": the class token's attention in every head",
                                                        int(420 * L + 120))});
    page.inputs.push_back(vit_attention_input(p.name + " -> " + answer, looks, b));
  }
  const std::string html = explorer_html(page);
  const std::string why = make_dirs_or_why(r.out);
  if (!why.empty()) throw std::runtime_error("--out '" + r.out + "': " + why);
  for (const auto& [name, fig] : figures) fig.save(r.out + "/" + name + ".png");
  write_file_atomic(r.out + "/explorer.html", html, "inspect");
  std::cout << "Wrote vit_N.png and heads_N.png for " << counted(n, "picture") << " and explorer.html to " << r.out << "/.\n";
  return 0;
}

}  // namespace

InspectModel vit_model() {
  return {"vit",
          "  vit          lesson 16's Vision Transformer (Fashion-MNIST, 7 x 7 patches); each INPUT a PNG or PGM\n"
          "               picture of any size: padded to a square with its border's grey, area-averaged to\n"
          "               28 x 28 and, when its border is light, inverted (the garments it knows are light\n"
          "               on black); --invert yes|no|auto (default auto). --index N[,N...]: test-set images\n"
          "               instead of (or beside) files (needs the package dataset-fashion-mnist).\n"
          "               Prints the top classes; writes vit_N.png (the class token's attention per layer\n"
          "               and its rollout over the input), heads_N.png (every head) and explorer.html.\n"
          "               Reference checkpoint: lessons/checkpoints/16_vit (--from out/16_vit)\n",
          "lessons/checkpoints/16_vit",
          {"--index", "--invert"},
          run_vit,
          "--index"};
}

}  // namespace attnlab::inspect
