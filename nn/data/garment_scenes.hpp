// Scenes of two garments for a relational task (lesson 16): a dark (side, side) canvas with two
// small garments at random places, labelled 1 when the two are of one class and 0 when not.
//
//   shrink_images(images, s)                 every image (N, H, W) area-averaged to (s, s)
//   GarmentScenes g(images, labels, side)    draws scenes from those garments: half of one class
//   g.draw(n, gen)                           (two different images of it), half of two classes
//   garment_scene_splits(garments, ...)      training, validation and test scenes, each made of
//                                            the garments of its own split
//
// Nothing in a scene says where the garments are: each may sit anywhere, at any pixel offset, so a
// model must find both and compare what it finds, wherever they are.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "core/array.hpp"
#include "core/random.hpp"
#include "nn/data/fashion_mnist.hpp"

namespace attnlab::nn::data {

// (N, side, side): images (N, H, W) each made (side, side) by area averaging (area_resize).
// ShapeError naming the function for images that are not (N, H, W) or side 0.
Array<float> shrink_images(const Array<float>& images, std::size_t side);

struct Scenes {
  Array<float> images;  // (n, side, side), background 0
  IndexArray labels;    // (n,): 1 when the two garments are of one class
  // Per scene the two garments: their rows in the garment set and top-left corners (y, x).
  std::vector<std::array<std::size_t, 2>> garments;
  std::vector<std::array<std::size_t, 4>> corners;  // y1, x1, y2, x2
  std::size_t size() const { return labels.size(); }
};

class GarmentScenes {
 public:
  // garments (N, g, g) in [0, 1], labels (N,) in 0..classes-1. ShapeError naming the constructor
  // when the shapes disagree, the canvas cannot hold two garments side by side (side < 2 g), or
  // fewer than two classes have two garments each.
  GarmentScenes(Array<float> garments, IndexArray labels, std::size_t side);
  // n scenes. Per scene, in this order: same class or not (a fair coin), the class(es), the two
  // garments (different rows), then corners for each uniform over the canvas until the two
  // squares do not overlap. The same generator state gives the same scenes.
  Scenes draw(std::size_t n, Generator& gen) const;
  std::size_t side() const { return side_; }
  std::size_t garment_side() const { return garments_.shape()[1]; }

 private:
  Array<float> garments_;
  IndexArray labels_;
  std::size_t side_;
  std::vector<std::vector<std::size_t>> by_class_;  // rows of each class
  std::vector<std::size_t> usable_;                 // classes with at least two garments
};

// Scenes for training, validation and test, each made of its own split's garments (so that the
// test scenes hold garments no model has seen), every garment set shrunk to (garment_side,
// garment_side) first, drawn in that order from one generator seeded `seed`: the same sets for
// the same arguments. The errors of shrink_images and GarmentScenes for garments they refuse.
struct SceneSplits { Scenes train, validation, test; };
struct SceneCounts { std::size_t train = 0, validation = 0, test = 0; };
SceneSplits garment_scene_splits(const FashionMnistSplits<float>& garments, std::size_t garment_side, std::size_t canvas,
                                 const SceneCounts& counts, std::uint64_t seed);

}  // namespace attnlab::nn::data
