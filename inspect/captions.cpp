// inspect captions "bag@top-left sneaker@bottom-right" --index 17 canvas.png
//
// Lesson 20's captioner (soft attention, or --decoder hard) captions scenes: one you compose from
// garment words at cells of the 2 x 2 grid (each a garment of that class from the test file, drawn
// with --seed and moved inside its cell as the lesson moves them: nn::data::compose_caption_scene),
// a test scene of the lesson's by its index (--index), or a picture (PNG or PGM, made into the
// 64 x 64 canvas by prepare_image, as inspect vit makes its 28 x 28). It prints the caption (and the
// true one where it is known), and per word the patch it read most and that weight; where the
// truth is known, whether the peak of each word that names a garment lies in that garment's box
// (the lesson's pointing). It writes caption_N.png (the scene under each word's attention,
// lessons/kit/caption_views) and explorer.html.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>

#include <xtensor/xview.hpp>

#include "inspect/inspect.hpp"
#include "io/program.hpp"
#include "lessons/kit/caption_model.hpp"
#include "lessons/kit/caption_views.hpp"
#include "lessons/story/text.hpp"
#include "nn/caption/caption_scores.hpp"

namespace attnlab::inspect {
namespace {

using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

// The cells as typed, in nn::data::Placement's order (row by row), and their short names.
const std::vector<std::pair<std::string, std::string>> kCells = {
    {"top-left", "tl"}, {"top-right", "tr"}, {"bottom-left", "bl"}, {"bottom-right", "br"}};

std::string cell_names() {
  std::vector<std::string> names;
  for (const auto& [name, brief] : kCells) names.push_back(name + " (" + brief + ")");
  return listing(names);
}

std::vector<std::string> garment_names() {
  return {data::caption_words().begin() + data::kFirstGarment, data::caption_words().begin() + data::kFirstRelation};
}

struct Scene {
  std::string name;         // "bag@tl sneaker@br", "test scene 17", "canvas.png"
  std::string how;          // what it was made of, in words
  data::CaptionScenes one;  // a single scene; without garments when its truth is unknown (a picture)
};

// One GARMENT@CELL of the scene `typed`, as a class (0 to 9) and a cell (0 to 3, row by row).
std::pair<std::size_t, std::size_t> garment_at(const std::string& part, const std::string& typed) {
  const std::size_t at = part.find('@');
  if (at == std::string::npos || at == 0 || at + 1 == part.size())
    throw UsageError("'" + part + "' in '" + typed + "': each garment needs its cell, GARMENT@CELL (e.g. bag@top-left)");
  const std::string garment = part.substr(0, at), cell = part.substr(at + 1);
  const std::vector<std::string> names = garment_names();
  const auto g = std::find(names.begin(), names.end(), garment);
  if (g == names.end())
    throw UsageError("unknown garment '" + garment + "' in '" + typed + "' (the garments: " + listing(names) + ")");
  const auto c = std::find_if(kCells.begin(), kCells.end(), [&](const auto& k) { return cell == k.first || cell == k.second; });
  if (c == kCells.end()) throw UsageError("unknown cell '" + cell + "' in '" + typed + "' (the cells: " + cell_names() + ")");
  return {std::size_t(g - names.begin()), std::size_t(c - kCells.begin())};
}

// "bag@top-left sneaker@br": garment words at their cells, in any order, apart by spaces or commas;
// each a garment of that class drawn from `garments` with `gen`, moved as the lesson moves them.
Scene compose(const std::string& typed, const data::FashionMnist<float>& garments, const SceneRecipe& recipe,
              Generator& gen) {
  std::string spaced = typed;
  std::replace(spaced.begin(), spaced.end(), ',', ' ');
  std::vector<std::string> parts;
  std::istringstream in(spaced);
  for (std::string part; in >> part;) parts.push_back(part);
  if (parts.empty()) throw UsageError("an empty scene: '" + typed + "' names no garment (e.g. bag@top-left)");
  const std::size_t most = recipe.options.max_garments;
  if (parts.size() > most)
    throw UsageError(text("too many garments in '", typed, "': a scene holds at most ", most, " (one per cell), got ",
                          parts.size()));
  std::vector<data::Placement> placed;
  std::vector<std::string> drawn;
  for (const std::string& part : parts) {
    const auto [garment, cell] = garment_at(part, typed);
    for (const data::Placement& q : placed)
      if (q.cell == cell) throw UsageError("two garments in the " + kCells[cell].first + " cell in '" + typed + "'");
    std::vector<std::size_t> of_class;
    for (std::size_t i = 0; i < garments.size(); ++i)
      if (std::size_t(garments.labels(i)) == garment) of_class.push_back(i);
    data::Placement q{of_class.at(gen.below(of_class.size())), cell, 0, 0};
    q.dy = gen.below(recipe.options.jitter + 1), q.dx = gen.below(recipe.options.jitter + 1);
    placed.push_back(q);
    drawn.push_back(text(garment_names()[garment], " test image ", q.source));
  }
  return {typed, listing(drawn), data::compose_caption_scene(garments, placed, recipe.options)};
}

// A picture as the canvas, with no garments: what it shows is not known.
Scene picture(const std::string& path, const SceneRecipe& recipe, Invert invert) {
  const xt::xarray<double> grey = read_picture(path, "inspect captions");
  const std::size_t side = recipe.options.side;
  const PreparedImage p = prepare_image(grey, side, invert);
  data::CaptionScenes one;
  one.images = xt::reshape_view(p.image, {std::size_t(1), side, side});
  one.captions = xt::full_like(IndexArray::from_shape({1, data::caption_length(recipe.options.max_garments)}),
                               Index(data::kCaptionPad));
  one.boxes = {{}}, one.cells = {{}}, one.sources = {{}};
  return {path, how_prepared(grey, p, side), one};
}

std::vector<Scene> scenes_of(const Request& r, const LoadedCaptioner& m) {
  const std::vector<std::size_t> indices = indices_option(r, m.test.count, "test scenes");
  const Invert invert = invert_option(r);
  Generator gen(std::uint64_t(integer_option(r, "--seed", 1, 0, 1000000000)));
  std::optional<data::FashionMnist<float>> garments;  // read only when a scene needs them
  auto test_garments = [&]() -> const data::FashionMnist<float>& {
    if (!garments) garments = recipe_garments(m.test);
    return *garments;
  };
  std::vector<Scene> out;
  for (const std::string& in : r.inputs) {
    if (in.find('@') != std::string::npos || in.find_first_not_of(" ,") == std::string::npos)
      out.push_back(compose(in, test_garments(), m.test, gen));
    else if (std::ifstream(in).good())
      out.push_back(picture(in, m.test, invert));
    else
      throw UsageError("'" + in + "' is neither a scene (GARMENT@CELL ..., e.g. bag@top-left) nor a picture file");
  }
  if (!indices.empty()) {
    const data::CaptionScenes test = recipe_scenes(m.test, test_garments());
    for (std::size_t i : indices)
      out.push_back({text("test scene ", i), text("scene ", i, " of the lesson's ", m.test.count, " test scenes"),
                     data::select_scenes(test, {i})});
  }
  return out;
}

// What the captioner wrote for one scene, word by word: the patch each read most and its weight;
// where the truth is known, whether the peak of each word naming a garment is in that one's box.
void report(const Scene& s, const nn::Caption<float>& c, const LoadedCaptioner& m, const std::string& decoder) {
  const std::size_t patch = m.model->config().encoder.patch, side = s.one.images.shape(2), grid = side / patch;
  const bool known = s.one.garments(0) > 0;
  std::cout << s.name << " (" << s.how << "):\n";
  if (known) std::cout << "  true caption: " << data::caption_text(s.one.captions, 0) << "\n";
  std::cout << "  " << decoder << " caption: " << data::caption_text(c.words, 0);
  const nn::CaptionScores scores = known ? nn::score_captions(c.words, c.weights, s.one, patch) : nn::CaptionScores{};
  if (known) std::cout << (scores.exact == 1.0 ? "  (exact)" : "  (not the true caption)");
  std::cout << "\n  " << std::left << std::setw(16) << "word" << std::setw(22) << "reads most" << "weight\n";
  const std::vector<std::string> keys = data::patch_names(s.one, 0, patch);
  std::size_t words = 0;
  while (words < m.length && c.words(0, words++) != data::kCaptionEos) {}
  for (std::size_t t = 0; t < words; ++t) {
    const auto row = xt::view(c.weights, 0, t);
    const std::size_t peak = std::size_t(std::max_element(row.begin(), row.end()) - row.begin());
    std::cout << "  " << std::setw(16) << text(t + 1, " ", data::caption_words()[std::size_t(c.words(0, t))])
              << std::setw(22) << keys[peak] << fixed(row(peak), 2);
    if (known && t % 2 == 0 && t / 2 < s.one.garments(0)) {
      const std::string named = data::caption_words()[std::size_t(s.one.captions(0, 1 + t))];
      const bool in = data::patches_in_box(s.one.boxes[0][t / 2], side, patch)(peak / grid, peak % grid);
      std::cout << (in ? "   in the " : "   outside the ") << named << "'s box";
    }
    std::cout << "\n";
  }
  if (known)
    std::cout << "  pointing: " << std::size_t(std::lround(scores.pointing * double(s.one.garments(0)))) << " of "
              << s.one.garments(0) << " garment words peak inside their garment's box\n";
}

int run_captions(const Request& r) {
  const auto given = r.options.find("--decoder");
  const std::string decoder = given == r.options.end() ? "soft" : given->second;
  if (decoder != "soft" && decoder != "hard") throw UsageError("--decoder takes soft or hard, got '" + decoder + "'");
  const LoadedCaptioner m =
      load_checkpoint_of("20_captions", "captions", [&] { return load_captioner(r.from, "captioner_" + decoder); });
  // Make and caption every scene first; write only when all went through.
  const std::vector<Scene> scenes = scenes_of(r, m);
  const CaptionReader reader{decoder, m.model.get(), m.glimpse};
  ExplorerPage page{"Lesson 20's captioner on your scenes", "caption words", "patches",
                    "The " + decoder + " captioner of " + m.lesson + " (seed " + std::to_string(m.seed) + ", from " +
                        r.from + "). Each word on the right is joined to the 16 patches (row r, column c) on the left by "
                        "lines as dark as its weight; a patch whose centre lies in a garment's box carries that garment's "
                        "word of the true caption, numbered.",
                    {}};
  std::vector<std::pair<std::string, plots::Figure>> figures;
  for (std::size_t b = 0; b < scenes.size(); ++b) {
    const Scene& s = scenes[b];
    const nn::Caption<float> c = m.model->greedy(Tensor<float>(s.one.images), m.length, data::kCaptionBos, m.glimpse);
    report(s, c, m, decoder);
    figures.push_back({text("caption_", b + 1), caption_words_grid({reader}, s.one, 0, m.length)});
    AttentionInput in = caption_attention_input(reader, s.one, 0, m.length);
    in.name = text(s.name, ", ", decoder, ": \"", data::caption_text(c.words, 0), "\"");
    page.inputs.push_back(in);
  }
  write_outputs(r.out, figures, page);
  return 0;
}

}  // namespace

InspectModel captions_model() {
  return {"captions",
          "  captions     lesson 20's captioner (scenes of 2 to 4 Fashion-MNIST garments on a 64 x 64 canvas cut\n"
          "               into a 2 x 2 grid of cells); each INPUT a scene, GARMENT@CELL ... (e.g. \"bag@top-left\n"
          "               sneaker@bottom-right\"; garments tshirt trouser pullover dress coat sandal shirt\n"
          "               sneaker bag boot, cells top-left top-right bottom-left bottom-right or tl tr bl br,\n"
          "               at most one garment a cell), each garment a test-file garment of its class drawn\n"
          "               with --seed N (default 1); or a PNG or PGM picture, made into the canvas as for vit\n"
          "               (--invert). --index N[,N...]: the lesson's test scenes (0 to 999 from a full run).\n"
          "               Scenes need the package dataset-fashion-mnist. --decoder soft|hard (default soft).\n"
          "               Prints the caption, the true one, the patch each word reads most and whether a\n"
          "               garment's word reads most inside its box; writes caption_N.png and explorer.html.\n"
          "               Reference checkpoints: lessons/checkpoints/20_captions (--from out/20_captions)\n",
          "lessons/checkpoints/20_captions",
          {"--index", "--decoder", "--seed", "--invert"},
          run_captions,
          "--index"};
}

}  // namespace attnlab::inspect
