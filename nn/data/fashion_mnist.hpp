// Fashion-MNIST (Xiao, Rasul & Vollgraf 2017): 60,000 training and 10,000 test images of
// clothing, 28x28 grey levels, 10 classes. On Debian: apt-get install dataset-fashion-mnist.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/array.hpp"

namespace attnlab::nn::data {

inline constexpr const char* kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
inline constexpr std::size_t kFashionMnistSide = 28;

enum class FashionSplit { train, test };

template <class T>
struct FashionMnist {
  Array<T> images;    // (N, 28, 28), grey level / 255 in [0, 1]
  IndexArray labels;  // (N,), class ids 0..9
  std::size_t size() const { return labels.size(); }
  // These examples, in this order. ShapeError (from take_rows) for a row past the end.
  FashionMnist rows(const std::vector<std::size_t>& r) const;
};

// "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"
const std::array<const char*, 10>& fashion_mnist_classes();

// The image and label file paths of a split in `dir` ({train,t10k}-{images-idx3,labels-idx1}-ubyte.gz).
std::string fashion_mnist_path(const std::string& dir, FashionSplit split, bool images);

// Reads the first `limit` examples (0 = all). Throws DataError when a file is missing (naming
// the path and the Debian package dataset-fashion-mnist), truncated, corrupt, or disagrees
// with the format: magic 2051 / 2049, 28x28 images, as many labels as images, labels in 0..9.
template <class T>
FashionMnist<T> load_fashion_mnist(FashionSplit split, std::size_t limit = 0, const std::string& dir = kFashionMnistDir);

// The training file split in two by a fixed shuffle (epoch_order(n, split_seed, 0)): the first
// n_validation of the shuffled rows are the validation set, the rest the training set, in that
// order; and the test file. train_limit and test_limit read only the first examples of each file
// (0 = all). ShapeError naming the function when n_validation leaves no training example; the
// loader's DataError for missing or bad files.
template <class T>
struct FashionMnistSplits {
  FashionMnist<T> train, validation, test;
};

template <class T>
FashionMnistSplits<T> fashion_mnist_splits(std::size_t n_validation, std::uint64_t split_seed, std::size_t train_limit = 0,
                                           std::size_t test_limit = 0, const std::string& dir = kFashionMnistDir);

}  // namespace attnlab::nn::data
