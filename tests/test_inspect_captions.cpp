// `inspect captions`: lesson 20's captioners as files (lessons/kit/caption_model: the card, the
// test scenes made again from it), the reference checkpoints (lessons/checkpoints/20_captions), and
// the program's answers to good and bad input.
#include <doctest/doctest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "io/files.hpp"
#include "lessons/kit/caption_model.hpp"
#include "nn/caption/caption_scores.hpp"
#include "tests/card_editor.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::any_error;
using attnlab::testing::contains;
using attnlab::testing::kHaveCourse;
using attnlab::testing::TempDir;
namespace data = attnlab::nn::data;

namespace {

const std::string kSource = ATTNLAB_SOURCE_DIR, kBin = ATTNLAB_BIN_DIR;
const std::string kReference = kSource + "/lessons/checkpoints/20_captions";
const bool kHaveFashionTest =
    std::filesystem::exists(data::fashion_mnist_path(data::kFashionMnistDir, data::FashionSplit::test, true));


}  // namespace

TEST_CASE("the reference captioners still score what their lesson measured, on its test scenes" *
          doctest::skip(!kHaveFashionTest)) {
  // lessons/checkpoints/20_captions: lesson 20's full run with seed 1. Each card holds the exact
  // match its run measured on the 1000 test scenes and how they were made. Made again from the card
  // and captioned greedily (all of them: under a second), they must score it again, up to five
  // scenes whose likeliest word is a near tie that another summation order can flip; and the
  // card's value must lie within the lesson's reference range (seeds 1-3).
  const nlohmann::json ref = nlohmann::json::parse(read_file(kSource + "/lessons/reference/20_captions.json"));
  for (const std::string decoder : {"soft", "hard"}) {
    const LoadedCaptioner m = load_captioner(kReference, "captioner_" + decoder);
    CHECK(m.lesson == "20_captions");
    CHECK(m.seed == 1);
    CHECK(m.glimpse == (decoder == "soft" ? nn::Glimpse::soft : nn::Glimpse::hard));
    CHECK(m.held_out.metric == "exact_" + decoder);
    CHECK(m.held_out.examples == 1000);
    REQUIRE(m.test.count == 1000);
    const data::CaptionScenes test = recipe_scenes(m.test, recipe_garments(m.test));
    const nn::Caption<float> c = nn::greedy_in_batches(*m.model, test.images, m.length, data::kCaptionBos, m.glimpse);
    const nn::CaptionScores s = nn::score_captions(c.words, c.weights, test, m.model->config().encoder.patch);
    MESSAGE("reference ", decoder, " captioner: exact ", s.exact, " on the 1000 test scenes; card: ", m.held_out.value);
    CHECK(std::abs(s.exact - m.held_out.value) <= 0.005);
    const nlohmann::json& range = ref["metrics"]["exact_" + decoder];
    CHECK(m.held_out.value >= range["min"].get<double>() - 0.01);
    CHECK(m.held_out.value <= range["max"].get<double>() + 0.01);
  }
}

TEST_CASE("load_captioner refuses a card that does not describe the weights, naming what to run") {
  TempDir d;
  CHECK(contains(any_error([&] { load_captioner(d.path, "captioner_soft"); }), "'" + d.path + "/captioner_soft.json'"));
  const auto with = testing::card_editor(d.path, kReference, "captioner_soft", [](const std::string& dir) { load_captioner(dir, "captioner_soft"); });
  CHECK(with([](nlohmann::json&) {}) == "(no exception)");
  // Weights that no longer compute what the lesson recorded: refused, with the command that rebuilds them.
  const std::string probe = with([](nlohmann::json& c) { c["probe"]["outputs"][5] = c["probe"]["outputs"][5].get<double>() + 0.5; });
  CHECK(contains(probe, "the weights do not compute, with this code, what the lesson recorded on the card's probe (output 5"));
  CHECK(contains(probe, "build/bin/20_captions --seed 1 --out DIR"));
  // The hard decoder's weights read as soft compute another probe.
  CHECK(contains(with([](nlohmann::json& c) { c["glimpse"] = "hard"; }), "the weights do not compute"));
  CHECK(contains(with([](nlohmann::json& c) { c["glimpse"] = "sharp"; }), "glimpse \"sharp\" is neither soft nor hard"));
  CHECK(contains(with([](nlohmann::json& c) { c["model"] = "ViT"; }), "was trained with model \"ViT\", this code builds \"Captioner\""));
  CHECK(contains(with([](nlohmann::json& c) { c["words"][2] = "hat"; }), "was trained with words"));
  CHECK(contains(with([](nlohmann::json& c) { c.erase("held_out"); }), "has no \"held_out\""));
  CHECK(contains(with([](nlohmann::json& c) { c["test_scenes"].erase("seed"); }), "\"test_scenes\" is not a scene recipe"));
  CHECK(contains(with([](nlohmann::json& c) { c["hidden"] = 32; }), "captioner_soft.npz"));  // the weights' shapes, listed
}

TEST_CASE("inspect captions: captions, words, pointing, figures and explorer; one-line errors and nothing written for bad" *
          doctest::skip(!kHaveCourse)) {
  TempDir d;
  const std::string inspect = kBin + "/inspect", out = d / "out", log = d / "log";
  auto run = [&](const std::string& args) { return std::system((inspect + " " + args + " > '" + log + "' 2>&1").c_str()) >> 8; };
  // A picture of the canvas's size: two light blocks on black, as PGM.
  std::string pgm = "P5 64 64 255\n";
  for (int y = 0; y < 64; ++y)
    for (int x = 0; x < 64; ++x) pgm += char(((y > 6 && y < 26 && x > 8 && x < 24) || (y > 38 && y < 60 && x > 40 && x < 56)) ? 220 : 0);
  write_file_atomic(d / "blocks.pgm", pgm);
  REQUIRE(run("captions '" + d / "blocks.pgm" + "' --out '" + out + "'") == 0);
  std::string said = read_file(log);
  CHECK(contains(said, d / "blocks.pgm (64 x 64 pixels, area-averaged to 64 x 64, not inverted (its border's grey: 0.00)):\n"
                           "  soft caption: "));
  CHECK(!contains(said, "true caption"));  // a picture's truth is not known
  CHECK(contains(said, "  word            reads most            weight\n  1 "));
  CHECK(contains(said, "Wrote 1 figure and explorer.html to " + out + "/."));
  CHECK(std::filesystem::exists(out + "/caption_1.png"));
  CHECK(contains(read_file(out + "/explorer.html"), "\"r4c4\""));
  if (kHaveFashionTest) {
    REQUIRE(run("captions 'bag@top-left sneaker@br' --index 0 --decoder hard --out '" + d / "scenes" + "'") == 0);
    said = read_file(log);
    CHECK(contains(said, "bag@top-left sneaker@br (bag test image "));
    CHECK(contains(said, "  true caption: bag up-left of sneaker\n  hard caption: "));
    CHECK(contains(said, "garment words peak inside their garment's box\n"));
    // Test scene 0 as the lesson made it, captioned by the reference here: the same caption.
    const LoadedCaptioner m = load_captioner(kReference, "captioner_hard");
    const data::CaptionScenes zero = data::select_scenes(recipe_scenes(m.test, recipe_garments(m.test)), {0});
    const nn::Caption<float> c = m.model->greedy(Tensor<float>(zero.images), m.length, data::kCaptionBos, m.glimpse);
    CHECK(contains(said, "test scene 0 (scene 0 of the lesson's 1000 test scenes):\n  true caption: " +
                             data::caption_text(zero.captions, 0) + "\n  hard caption: " + data::caption_text(c.words, 0)));
    for (const char* f : {"caption_1.png", "caption_2.png", "explorer.html"})
      CHECK(std::filesystem::exists(d / "scenes" + "/" + f));
    CHECK(contains(read_file(d / "scenes/explorer.html"), "(1 bag)"));
  }
  // Bad input: usage errors exit 2 with the usage, unreadable pictures and checkpoints 1, and nothing is written.
  const std::string none = " --out '" + d / "none" + "'";
  auto refused = [&](const std::string& args, int code, const std::string& message) {
    CHECK(run(args + none) == code);
    CHECK(contains(read_file(log), message));
  };
  CHECK(run("captions") == 2);
  CHECK(contains(read_file(log), "inspect: no input given for captions"));
  CHECK(contains(read_file(log), "usage: inspect MODEL"));
  refused("captions 'hat@tl'", 2,
          "inspect: unknown garment 'hat' in 'hat@tl' (the garments: tshirt, trouser, pullover, dress, coat, sandal, "
          "shirt, sneaker, bag and boot)");
  refused("captions 'bag@middle'", 2, "inspect: unknown cell 'middle' in 'bag@middle' (the cells: top-left (tl), "
                                      "top-right (tr), bottom-left (bl) and bottom-right (br))");
  refused("captions 'bag@ coat@tr'", 2, "'bag@' in 'bag@ coat@tr': each garment needs its cell, GARMENT@CELL");
  refused("captions 'bag coat'", 2, "'bag coat' is neither a scene (GARMENT@CELL ..., e.g. bag@top-left) nor a picture file");
  refused("captions ', ,'", 2, "an empty scene: ', ,' names no garment");
  refused("captions 'bag@tl coat@top-left'", 2, "two garments in the top-left cell in 'bag@tl coat@top-left'");
  refused("captions 'bag@tl coat@tr shirt@bl boot@br sandal@tl'", 2,
          "too many garments in 'bag@tl coat@tr shirt@bl boot@br sandal@tl': a scene holds at most 4 (one per cell), got 5");
  refused("captions --index 1000", 2, "--index takes test scenes from 0 to 999 (several: 3,17,42), got '1000'");
  refused("captions --index 3,,4", 2, "--index takes test scenes from 0 to 999");
  refused("captions 'bag@tl' --decoder medium", 2, "--decoder takes soft or hard, got 'medium'");
  refused("captions 'bag@tl' --seed -1", 2, "--seed");
  write_file_atomic(d / "notes.txt", "hello");
  refused("captions '" + d / "notes.txt" + "'", 1, "inspect captions: '" + d / "notes.txt" + "' is neither a PNG nor a PGM file");
  refused("captions 'bag@tl' --from '" + kSource + "/lessons/checkpoints/16_vit'", 1,
          "captioner_soft.json': No such file or directory (a run of lesson 20 writes both: build/bin/20_captions --out DIR, "
          "then inspect captions ... --from DIR)");
  refused("captions 'bag@tl' --from '" + d / "nothing" + "'", 1, "20_captions --out DIR");
  CHECK(!std::filesystem::exists(d / "none"));
}
