#include "nn/data/garment_scenes.hpp"

#include <algorithm>
#include <utility>

#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "nn/data/images.hpp"

namespace attnlab::nn::data {

Array<float> shrink_images(const Array<float>& images, std::size_t side) {
  check(images.dimension() == 3, "shrink_images", "needs images (N, H, W), got ", shape_str(images.shape()));
  check(side > 0, "shrink_images", "side must be positive, got 0");
  const std::size_t n = images.shape()[0];
  Array<float> out = xt::zeros<float>({n, side, side});
  for (std::size_t b = 0; b < n; ++b)
    xt::view(out, b) = xt::cast<float>(area_resize(xt::cast<double>(xt::view(images, b)), side, side));
  return out;
}

GarmentScenes::GarmentScenes(Array<float> garments, IndexArray labels, std::size_t side)
    : garments_(std::move(garments)), labels_(std::move(labels)), side_(side) {
  check(garments_.dimension() == 3 && garments_.shape()[1] == garments_.shape()[2], "GarmentScenes",
        "needs square garments (N, g, g), got ", shape_str(garments_.shape()));
  check(labels_.dimension() == 1 && labels_.size() == garments_.shape()[0], "GarmentScenes", "needs one label per garment: ",
        shape_str(garments_.shape()), " garments, labels ", shape_str(labels_.shape()));
  const std::size_t g = garments_.shape()[1];
  check(g > 0 && side >= 2 * g, "GarmentScenes", "a canvas of side ", side, " cannot hold two garments of side ", g,
        " side by side (needs side >= ", 2 * g, ")");
  for (std::size_t i = 0; i < labels_.size(); ++i) {
    check(labels_(i) >= 0, "GarmentScenes", "label ", labels_(i), " of garment ", i, " is negative");
    const std::size_t c = std::size_t(labels_(i));
    if (c >= by_class_.size()) by_class_.resize(c + 1);
    by_class_[c].push_back(i);
  }
  for (std::size_t c = 0; c < by_class_.size(); ++c)
    if (by_class_[c].size() >= 2) usable_.push_back(c);
  check(usable_.size() >= 2, "GarmentScenes", "needs two classes with two garments each, has ", usable_.size());
}

Scenes GarmentScenes::draw(std::size_t n, Generator& gen) const {
  const std::size_t g = garment_side(), places = side_ - g + 1;
  Scenes s{xt::zeros<float>({n, side_, side_}), xt::zeros<Index>({n}), {}, {}};
  for (std::size_t b = 0; b < n; ++b) {
    const bool same = gen.below(2) == 1;
    const std::size_t c1 = usable_[gen.below(usable_.size())];
    std::size_t c2 = c1;
    while (!same && c2 == c1) c2 = usable_[gen.below(usable_.size())];
    const std::vector<std::size_t>&rows1 = by_class_[c1], &rows2 = by_class_[c2];
    const std::size_t i1 = rows1[gen.below(rows1.size())];
    std::size_t i2 = i1;
    while (i2 == i1) i2 = rows2[gen.below(rows2.size())];
    std::array<std::size_t, 4> at{};
    do {
      for (std::size_t& v : at) v = gen.below(places);
    } while (at[0] < at[2] + g && at[2] < at[0] + g && at[1] < at[3] + g && at[3] < at[1] + g);  // the squares overlap
    for (int k = 0; k < 2; ++k)
      xt::view(s.images, b, xt::range(at[2 * k], at[2 * k] + g), xt::range(at[2 * k + 1], at[2 * k + 1] + g)) =
          xt::view(garments_, k == 0 ? i1 : i2);
    s.labels(b) = same ? 1 : 0;
    s.garments.push_back({i1, i2}), s.corners.push_back(at);
  }
  return s;
}

SceneSplits garment_scene_splits(const FashionMnistSplits<float>& garments, std::size_t garment_side, std::size_t canvas,
                                 const SceneCounts& counts, std::uint64_t seed) {
  Generator gen(seed);
  const auto draw = [&](const FashionMnist<float>& split, std::size_t n) {
    return GarmentScenes(shrink_images(split.images, garment_side), split.labels, canvas).draw(n, gen);
  };
  SceneSplits s{draw(garments.train, counts.train), draw(garments.validation, counts.validation), {}};
  s.test = draw(garments.test, counts.test);
  return s;
}

}  // namespace attnlab::nn::data
