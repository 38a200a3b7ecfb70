// Scenes of two garments (nn/data/garment_scenes.hpp): each scene holds exactly its two garments at
// the corners it reports, without overlap, labelled by whether their classes agree; about half
// the scenes are of one class; the same seed gives the same scenes; bad shapes are refused by name.
#include <doctest/doctest.h>

#include <xtensor/xview.hpp>

#include "nn/data/garment_scenes.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::nn::data;
using doctest::Contains;

namespace {
// 12 garments of side 3 in 3 classes, each garment a distinct constant grey, so a pixel says which.
struct Garments {
  Array<float> images = xt::zeros<float>({12, 3, 3});
  IndexArray labels = xt::zeros<Index>({12});
  Garments() {
    for (std::size_t i = 0; i < 12; ++i) xt::view(images, i) = float(i + 1) / 16.0f, labels(i) = Index(i % 3);
  }
};
}  // namespace

TEST_CASE("every scene holds its two garments where it says, apart, labelled by their classes") {
  const Garments g;
  const GarmentScenes scenes(g.images, g.labels, 8);
  Generator gen(5);
  const Scenes s = scenes.draw(400, gen);
  REQUIRE(s.images.shape() == std::vector<std::size_t>{400, 8, 8});
  std::size_t same = 0;
  for (std::size_t b = 0; b < s.size(); ++b) {
    const auto [i1, i2] = s.garments[b];
    const auto [y1, x1, y2, x2] = s.corners[b];
    CHECK(i1 != i2);
    CHECK(!(y1 < y2 + 3 && y2 < y1 + 3 && x1 < x2 + 3 && x2 < x1 + 3));  // the squares do not overlap
    CHECK(y1 + 3 <= 8);
    CHECK(x2 + 3 <= 8);
    Array<float> expected = xt::zeros<float>({8, 8});
    xt::view(expected, xt::range(y1, y1 + 3), xt::range(x1, x1 + 3)) = xt::view(g.images, i1);
    xt::view(expected, xt::range(y2, y2 + 3), xt::range(x2, x2 + 3)) = xt::view(g.images, i2);
    CHECK(Array<float>(xt::view(s.images, b)) == expected);
    CHECK(s.labels(b) == Index(g.labels(i1) == g.labels(i2)));
    same += std::size_t(s.labels(b));
  }
  CHECK(same > 160);
  CHECK(same < 240);  // a fair coin: 200 expected, sd 10
  Generator again(5);
  CHECK(scenes.draw(400, again).images == s.images);
}

TEST_CASE("shrink_images averages areas; bad shapes are refused naming the function") {
  Array<float> two = xt::zeros<float>({1, 4, 4});
  xt::view(two, 0, xt::range(0, 2), xt::range(0, 2)) = 1.0f;  // the top-left quarter lit
  const Array<float> small = shrink_images(two, 2);
  CHECK(small(0, 0, 0) == doctest::Approx(1.0));
  CHECK(small(0, 1, 1) == doctest::Approx(0.0));
  CHECK_THROWS_WITH_AS(shrink_images(xt::zeros<float>({4, 4}), 2), Contains("shrink_images: needs images (N, H, W), got (4,4)"),
                       ShapeError);
  const Garments g;
  CHECK_THROWS_WITH_AS(GarmentScenes(g.images, g.labels, 5), Contains("GarmentScenes: a canvas of side 5 cannot hold two"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(GarmentScenes(g.images, xt::zeros<Index>({11}), 8), Contains("needs one label per garment"), ShapeError);
  CHECK_THROWS_WITH_AS(GarmentScenes(g.images, xt::zeros<Index>({12}), 8), Contains("needs two classes with two garments each"),
                       ShapeError);
}

TEST_CASE("garment_scene_splits: each split's scenes of its own garments, the same for the same seed") {
  // Three garment sets of side 6 told apart by their grey: 0.25 for training, 0.5 validation, 0.75 test.
  FashionMnistSplits<float> g;
  const auto split = [](float grey) {
    FashionMnist<float> s{xt::zeros<float>({8, 6, 6}) + grey, xt::zeros<Index>({8})};
    for (std::size_t i = 0; i < 8; ++i) s.labels(i) = Index(i % 2);
    return s;
  };
  g.train = split(0.25f), g.validation = split(0.5f), g.test = split(0.75f);
  const SceneSplits s = garment_scene_splits(g, 3, 8, {20, 5, 7}, 9);
  CHECK(s.train.size() == 20);
  CHECK(s.validation.size() == 5);
  CHECK(s.test.size() == 7);
  CHECK(s.train.images.shape() == std::vector<std::size_t>{20, 8, 8});
  CHECK(xt::amax(s.train.images)() == doctest::Approx(0.25));  // shrunk by area averaging: still one grey
  CHECK(xt::amax(s.validation.images)() == doctest::Approx(0.5));
  CHECK(xt::amax(s.test.images)() == doctest::Approx(0.75));
  // One generator in order: the training scenes are those of a GarmentScenes drawn first from it.
  Generator gen(9);
  CHECK(GarmentScenes(shrink_images(g.train.images, 3), g.train.labels, 8).draw(20, gen).images == s.train.images);
  CHECK(garment_scene_splits(g, 3, 8, {20, 5, 7}, 9).test.images == s.test.images);
  CHECK_THROWS_WITH_AS(garment_scene_splits(g, 5, 8, {1, 1, 1}, 9), Contains("GarmentScenes: a canvas of side 8 cannot hold two"),
                       ShapeError);
}
