// `inspect vit`: the picture readers (io/pgm.hpp, plots/read_png.hpp), how a picture becomes the
// ViT's 28 x 28 input (nn::data::area_resize, lessons/kit/vit_model's prepare_image), the model
// card and reference checkpoint of lesson 16 (lessons/checkpoints/16_vit), and the program's
// answers to good and bad input.
#include <doctest/doctest.h>

#include <cairo.h>

#include <filesystem>

#include <nlohmann/json.hpp>
#include <xtensor/xview.hpp>

#include "io/files.hpp"
#include "io/pgm.hpp"
#include "lessons/kit/vit_model.hpp"
#include "nn/data/fashion_mnist.hpp"
#include "nn/data/images.hpp"
#include "nn/metrics.hpp"
#include "plots/read_png.hpp"
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
const std::string kReference = kSource + "/lessons/checkpoints/16_vit";
const bool kHaveFashionTest =
    std::filesystem::exists(data::fashion_mnist_path(data::kFashionMnistDir, data::FashionSplit::test, true));

std::string pgm_error(const std::string& bytes) {
  try {
    pgm_decode(bytes, "read_pgm: 'x.pgm'");
  } catch (const IoError& e) {
    return e.what();
  }
  return "(no exception)";
}

// A (h, w) RGBA PNG written with cairo: pixel (y, x) has the colour of `paint(y, x)`.
void write_png(const std::string& path, int w, int h, const std::function<std::array<double, 4>(int, int)>& paint) {
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, w, h);
  cairo_t* cr = cairo_create(s);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      const auto c = paint(y, x);
      cairo_set_source_rgba(cr, c[0], c[1], c[2], c[3]);
      cairo_rectangle(cr, x, y, 1, 1);
      cairo_fill(cr);
    }
  cairo_destroy(cr);
  REQUIRE(cairo_surface_write_to_png(s, path.c_str()) == CAIRO_STATUS_SUCCESS);
  cairo_surface_destroy(s);
}

}  // namespace

TEST_CASE("read_pgm: binary and plain grey maps, 8 and 16 bits, with comments") {
  const Array<double> a = pgm_decode(std::string("P5\n# a comment\n3 2\n255\n") + std::string("\x00\x80\xff\x01\x02\x03", 6), "x");
  REQUIRE(a.shape() == std::vector<std::size_t>{2, 3});
  CHECK(a(0, 0) == 0.0);
  CHECK(a(0, 1) == doctest::Approx(128.0 / 255));
  CHECK(a(0, 2) == 1.0);
  CHECK(a(1, 2) == doctest::Approx(3.0 / 255));
  const Array<double> b = pgm_decode("P2 2 2 # width, height\n 10\n0 5\n10 # last row\n 2\n", "x");
  CHECK(b(0, 1) == doctest::Approx(0.5));
  CHECK(b(1, 0) == 1.0);
  CHECK(b(1, 1) == doctest::Approx(0.2));
  const Array<double> c = pgm_decode(std::string("P5 2 1 65535 ") + std::string("\x80\x00\xff\xff", 4), "x");
  CHECK(c(0, 0) == doctest::Approx(32768.0 / 65535));
  CHECK(c(0, 1) == 1.0);
}

TEST_CASE("read_pgm: every fault is named, with the file") {
  CHECK(pgm_error("") == "read_pgm: 'x.pgm': is not a PGM grey map (it does not start with P5 or P2)");
  CHECK(pgm_error("GIF89a") == "read_pgm: 'x.pgm': is not a PGM grey map (it does not start with P5 or P2)");
  CHECK(pgm_error("P6 1 1 255 abc") == "read_pgm: 'x.pgm': is a Netpbm P6 file, not a grey map (P5 or P2)");
  CHECK(pgm_error("P5 2") == "read_pgm: 'x.pgm': ends before its height");
  CHECK(pgm_error("P5 2 x 255") == "read_pgm: 'x.pgm': its height is not a number (byte 5)");
  CHECK(pgm_error("P5 0 2 255\n") == "read_pgm: 'x.pgm': has no pixels (0 x 2)");
  CHECK(pgm_error("P5 2 2 0\n") == "read_pgm: 'x.pgm': has maxval 0");
  CHECK(pgm_error("P5 2 2 70000\n") == "read_pgm: 'x.pgm': its maxval is above 65535");
  CHECK(pgm_error("P5 99999 2 255\n") == "read_pgm: 'x.pgm': its width is above 16384");
  // A header that asks for a large image with no data behind it is refused before any allocation.
  CHECK(pgm_error("P5 16384 16384 65535\n") ==
        "read_pgm: 'x.pgm': is truncated: 16384 x 16384 samples need 536870912 bytes after the header, it has 0");
  CHECK(pgm_error("P5 2 2 255\nabc") == "read_pgm: 'x.pgm': is truncated: 2 x 2 samples need 4 bytes after the header, it has 3");
  CHECK(pgm_error("P5 2 1 255\nabc") == "read_pgm: 'x.pgm': has 1 bytes after its samples");
  CHECK(pgm_error("P5 2 1 255abc") == "read_pgm: 'x.pgm': has no whitespace after maxval");
  CHECK(pgm_error("P5 2 1 100\n\x10\x70") == "read_pgm: 'x.pgm': sample 1 (row 0, column 1) is 112, above maxval 100");
  CHECK(pgm_error("P2 2 1 9 3") == "read_pgm: 'x.pgm': is truncated: 2 x 1 samples need at least 3 bytes, it has 2");
  CHECK(pgm_error("P2 2 1 9 3 x 4") == "read_pgm: 'x.pgm': its sample is not a number (byte 11)");
  CHECK(pgm_error("P2 2 1 9 3 4 5") == "read_pgm: 'x.pgm': has data after its 2 samples (byte 13)");
  TempDir d;
  CHECK(any_error([&] { read_pgm(d / "none.pgm"); }) ==
        "read_pgm: cannot open '" + d.path + "/none.pgm': No such file or directory");
  write_file_atomic(d / "bad.pgm", "P5 1 1 255\n");
  CHECK(any_error([&] { read_pgm(d / "bad.pgm"); }) ==
        "read_pgm: '" + d.path + "/bad.pgm': is truncated: 1 x 1 samples need 1 bytes after the header, it has 0");
}

TEST_CASE("read_png_grey: the luma of every pixel, transparency over white; a file that is no PNG named") {
  TempDir d;
  write_png(d / "a.png", 3, 2, [](int y, int x) -> std::array<double, 4> {
    if (y == 1 && x == 2) return {0, 0, 0, 0};  // fully transparent: white
    return {x == 0 ? 1.0 : 0.0, x == 1 ? 1.0 : 0.0, y == 1 ? 1.0 : 0.0, 1.0};
  });
  const xt::xarray<double> g = plots::read_png_grey(d / "a.png");
  REQUIRE(g.shape() == std::vector<std::size_t>{2, 3});
  CHECK(g(0, 0) == doctest::Approx(0.299));          // red
  CHECK(g(0, 1) == doctest::Approx(0.587));          // green
  CHECK(g(0, 2) == doctest::Approx(0.0));            // black
  CHECK(g(1, 0) == doctest::Approx(0.299 + 0.114));  // magenta
  CHECK(g(1, 2) == doctest::Approx(1.0));            // transparent, over white
  write_file_atomic(d / "text.png", "not a png at all");
  CHECK(contains(any_error([&] { plots::read_png_grey(d / "text.png"); }),
                 "read_png_grey: '" + d.path + "/text.png' is not a PNG cairo can read"));
  CHECK(any_error([&] { plots::read_png_grey(d / "none.png"); }) ==
        "read_png_grey: cannot open '" + d.path + "/none.png': No such file or directory");
}

TEST_CASE("area_resize: each output pixel the area-weighted mean of what it covers") {
  const Array<double> img = {{1, 2, 3, 4}, {5, 6, 7, 8}};
  const Array<double> half = nn::data::area_resize(img, 1, 2);
  CHECK(half(0, 0) == doctest::Approx((1 + 2 + 5 + 6) / 4.0));
  CHECK(half(0, 1) == doctest::Approx((3 + 4 + 7 + 8) / 4.0));
  // Three columns into two: each output column covers one and a half source columns.
  const Array<double> row = {{3, 6, 9}};
  const Array<double> two = nn::data::area_resize(row, 1, 2);
  CHECK(two(0, 0) == doctest::Approx((3 + 0.5 * 6) / 1.5));
  CHECK(two(0, 1) == doctest::Approx((0.5 * 6 + 9) / 1.5));
  // Enlarging: every output pixel inside one source pixel takes its value.
  const Array<double> big = nn::data::area_resize(img, 4, 8);
  CHECK(big(3, 7) == 8.0);
  CHECK(big(0, 1) == 1.0);
  // The mean is kept at any ratio.
  Array<double> odd = xt::zeros<double>({std::size_t(37), std::size_t(53)});
  for (std::size_t i = 0; i < odd.size(); ++i) odd.data()[i] = double((i * 7919) % 101) / 100.0;
  CHECK(xt::mean(nn::data::area_resize(odd, 28, 28))() == doctest::Approx(xt::mean(odd)()));
  CHECK(contains(any_error([] { nn::data::area_resize(Array<double>::from_shape({3}), 2, 2); }), "area_resize"));
  CHECK(contains(any_error([] { nn::data::area_resize(xt::ones<double>({1, 1}), 0, 2); }), "cannot make an image of 0 x 2"));
}

TEST_CASE("prepare_image: padded to a square with the border's grey, averaged to 28 x 28, inverted when light") {
  // A dark bar on white, twice as wide as tall.
  xt::xarray<double> pic = xt::ones<double>({std::size_t(40), std::size_t(80)});
  xt::view(pic, xt::range(10, 30), xt::range(20, 60)) = 0.0;
  const PreparedImage p = prepare_image(pic, 28);
  CHECK(p.inverted);
  CHECK(p.border == 1.0);
  CHECK(p.padded_height == 80);
  CHECK(p.image.shape() == std::vector<std::size_t>{28, 28});
  CHECK(p.image(0, 0) == 0.0f);    // the white padding, inverted: black
  CHECK(p.image(14, 14) == 1.0f);  // the bar's middle: light
  CHECK(xt::sum(p.image)() == doctest::Approx(40.0 * 20 / (80 * 80) * 28 * 28).epsilon(1e-5));
  CHECK(!prepare_image(pic, 28, Invert::never).inverted);
  const PreparedImage light_on_dark = prepare_image(1.0 - pic, 28);  // kept as it is
  CHECK(!light_on_dark.inverted);
  CHECK(light_on_dark.image(14, 14) == 1.0f);
  CHECK(light_on_dark.image(0, 0) == 0.0f);
  CHECK(contains(any_error([] { prepare_image(xt::xarray<double>::from_shape({0, 3}), 28); }), "prepare_image"));
}

TEST_CASE("the reference ViT still scores what its lesson measured, on test images" * doctest::skip(!kHaveFashionTest)) {
  // lessons/checkpoints/16_vit: lesson 16's full run with seed 1. Its card holds the test accuracy
  // the run measured on all 10,000 test images; the first 1000, scored the same way (the image and
  // its mirror image averaged), must be within 0.03 of it (three binomial standard deviations at
  // 0.9 and 1000 images), and the card's value within the lesson's reference range (seeds 1-3).
  const LoadedViT m = load_vit(kReference, "vit");
  CHECK(m.lesson == "16_vit");
  CHECK(m.seed == 1);
  CHECK(m.held_out.metric == "test_acc_vit");
  CHECK(m.held_out.examples == 10000);
  const data::FashionMnist<float> test = data::load_fashion_mnist<float>(data::FashionSplit::test, 1000);
  nn::ViT<float>& vit = *m.model;
  const Array<float> probs =
      mirror_averaged_probabilities(vit, [&](const Tensor<float>& x) { return vit.forward(x); }, test.images);
  const double accuracy = nn::accuracy(nn::argmax_last(probs), test.labels);
  MESSAGE("reference ViT: accuracy ", accuracy, " on the first 1000 test images; card: ", m.held_out.value);
  CHECK(std::abs(accuracy - m.held_out.value) <= 0.03);
  const nlohmann::json ref = nlohmann::json::parse(read_file(kSource + "/lessons/reference/16_vit.json"));
  CHECK(m.held_out.value >= ref["metrics"]["test_acc_vit"]["min"].get<double>() - 0.01);
  CHECK(m.held_out.value <= ref["metrics"]["test_acc_vit"]["max"].get<double>() + 0.01);
}

TEST_CASE("load_vit refuses a card that does not describe the weights, naming what to run") {
  TempDir d;
  CHECK(contains(any_error([&] { load_vit(d.path, "vit"); }), "'" + d.path + "/vit.json'"));
  const auto with = testing::card_editor(d.path, kReference, "vit", [](const std::string& dir) { load_vit(dir, "vit"); });
  CHECK(with([](nlohmann::json&) {}) == "(no exception)");
  // Weights that no longer compute what the lesson recorded: refused, with the command that rebuilds them.
  const std::string probe = with([](nlohmann::json& c) { c["probe"]["outputs"][3] = c["probe"]["outputs"][3].get<double>() + 0.5; });
  CHECK(contains(probe, "the weights do not compute, with this code, what the lesson recorded on the card's probe (output 3"));
  CHECK(contains(probe, "build/bin/16_vit --seed 1 --out DIR"));
  CHECK(contains(with([](nlohmann::json& c) { c["positions"] = "sinusoidal"; }),
                 "was trained with positions \"sinusoidal\", this code builds \"learned"));
  CHECK(contains(with([](nlohmann::json& c) { c.erase("held_out"); }), "has no \"held_out\""));
  CHECK(contains(with([](nlohmann::json& c) { c["d_model"] = 32; }), "vit.npz"));  // the weights' shapes, listed
}

TEST_CASE("inspect vit: classes, figures and explorer for pictures; one-line errors and nothing written for bad" *
          doctest::skip(!kHaveCourse)) {
  TempDir d;
  const std::string inspect = kBin + "/inspect", out = d / "out", log = d / "log";
  auto run = [&](const std::string& args) { return std::system((inspect + " " + args + " > '" + log + "' 2>&1").c_str()) >> 8; };
  // A light garment-like blob on black as PGM, and the same dark on white, larger, as PNG.
  std::string pgm = "P5 28 28 255\n";
  for (int y = 0; y < 28; ++y)
    for (int x = 0; x < 28; ++x) pgm += char((x > 6 && x < 21 && y > 3 && y < 25) ? 200 : 0);
  write_file_atomic(d / "blob.pgm", pgm);
  write_png(d / "blob.png", 84, 112, [](int y, int x) -> std::array<double, 4> {
    const double v = (x > 20 && x < 63 && y > 12 && y < 100) ? 0.2 : 1.0;
    return {v, v, v, 1.0};
  });
  REQUIRE(run("vit '" + d / "blob.pgm" + "' '" + d / "blob.png" + "' --out '" + out + "'") == 0);
  const std::string said = read_file(log);
  CHECK(contains(said, d / "blob.pgm (28 x 28 pixels, area-averaged to 28 x 28, not inverted (its border's grey: 0.00)):"));
  CHECK(contains(said, d / "blob.png (84 x 112 pixels, padded to 112 x 112 with its border's grey, area-averaged to 28 x 28, "
                           "inverted (its border's grey: 1.00)):"));
  CHECK(contains(said, "the class token reads most (rollout through 4 layers): r"));
  for (const char* f : {"vit_1.png", "heads_1.png", "vit_2.png", "heads_2.png", "explorer.html"})
    CHECK(std::filesystem::exists(out + "/" + f));
  CHECK(contains(read_file(out + "/explorer.html"), "\"r4c4\""));
  if (kHaveFashionTest) {
    REQUIRE(run("vit --index 0,2 --out '" + d / "idx" + "'") == 0);
    CHECK(contains(read_file(log), "test image 0 (Ankle boot) (Fashion-MNIST's test file, as the lesson reads it):\n  Ankle boot"));
    CHECK(contains(read_file(log), "test image 2 (Trouser) (Fashion-MNIST's test file, as the lesson reads it):\n  Trouser"));
  }
  // Bad input: usage errors exit 2 with the usage, unreadable pictures 1, and nothing is written.
  CHECK(run("vit") == 2);
  CHECK(contains(read_file(log), "inspect: no input given for vit"));
  CHECK(contains(read_file(log), "usage: inspect MODEL"));
  CHECK(run("vit --index 10000 --out '" + d / "none" + "'") == 2);
  CHECK(contains(read_file(log), "--index takes test-set indices from 0 to 9999 (several: 3,17,42), got '10000'"));
  CHECK(run("vit --index 1,,2") == 2);
  CHECK(run("vit '" + d / "blob.pgm" + "' --invert maybe") == 2);
  CHECK(contains(read_file(log), "--invert takes auto, yes or no, got 'maybe'"));
  CHECK(run("vit '" + d / "blob.pgm" + "' '" + d / "missing.png" + "' --out '" + d / "none" + "'") == 1);
  CHECK(contains(read_file(log), "cannot open '" + d / "missing.png" + "'"));
  write_file_atomic(d / "notes.txt", "hello");
  CHECK(run("vit '" + d / "notes.txt" + "' --out '" + d / "none" + "'") == 1);
  CHECK(contains(read_file(log), "'" + d / "notes.txt" + "' is neither a PNG nor a PGM file"));
  write_file_atomic(d / "short.pgm", "P5 28 28 255\nabc");
  CHECK(run("vit '" + d / "short.pgm" + "' --out '" + d / "none" + "'") == 1);
  CHECK(contains(read_file(log), "read_pgm: '" + d / "short.pgm" + "': is truncated"));
  CHECK(run("vit '" + d / "blob.pgm" + "' --from '" + d / "nothing" + "' --out '" + d / "none" + "'") == 1);
  CHECK(contains(read_file(log), "16_vit --out DIR"));
  CHECK(!std::filesystem::exists(d / "none"));
}
