#include "nn/data/fashion_mnist.hpp"

#include <sys/stat.h>

#include "core/error.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/data_error.hpp"
#include "nn/data/idx.hpp"

namespace attnlab::nn::data {

namespace {
constexpr std::uint32_t kImageMagic = 0x0803;  // 2051: unsigned bytes, 3 dimensions
constexpr std::uint32_t kLabelMagic = 0x0801;  // 2049: unsigned bytes, 1 dimension

void require_file(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    throw DataError("load_fashion_mnist: missing file " + path +
                    "; install the Debian package dataset-fashion-mnist (apt-get install dataset-fashion-mnist)");
}
}  // namespace

const std::array<const char*, 10>& fashion_mnist_classes() {
  static const std::array<const char*, 10> names = {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
                                                    "Sandal",      "Shirt",   "Sneaker",  "Bag",   "Ankle boot"};
  return names;
}

std::string fashion_mnist_path(const std::string& dir, FashionSplit split, bool images) {
  return dir + "/" + (split == FashionSplit::train ? "train" : "t10k") +
         (images ? "-images-idx3-ubyte.gz" : "-labels-idx1-ubyte.gz");
}

template <class T>
FashionMnist<T> load_fashion_mnist(FashionSplit split, std::size_t limit, const std::string& dir) {
  const std::string image_path = fashion_mnist_path(dir, split, true);
  const std::string label_path = fashion_mnist_path(dir, split, false);
  require_file(image_path);
  require_file(label_path);

  const IdxFile labels = read_idx_gz(label_path, kLabelMagic, limit);
  const IdxFile images = read_idx_gz(image_path, kImageMagic, limit);
  const std::size_t side = kFashionMnistSide;
  if (images.dims[1] != side || images.dims[2] != side)
    throw DataError("load_fashion_mnist: " + image_path + ": images are " + std::to_string(images.dims[1]) + "x" +
                    std::to_string(images.dims[2]) + ", expected 28x28");
  if (images.dims[0] != labels.dims[0])
    throw DataError("load_fashion_mnist: " + image_path + " holds " + std::to_string(images.dims[0]) +
                    " images but " + label_path + " holds " + std::to_string(labels.dims[0]) + " labels");

  const std::size_t n = images.count;
  FashionMnist<T> out;
  out.labels = IndexArray::from_shape({n});
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned v = labels.data[i];
    if (v > 9)
      throw DataError("load_fashion_mnist: " + label_path + ": label " + std::to_string(v) + " at index " +
                      std::to_string(i) + " is outside 0..9");
    out.labels(i) = static_cast<Index>(v);
  }
  out.images = Array<T>::from_shape({n, side, side});
  T* dst = out.images.data();
  // A table of v / 255 (division, not multiplication by 1/255, so 255 maps to exactly 1).
  T level[256];
  for (int v = 0; v < 256; ++v) level[v] = static_cast<T>(v) / T(255);
  for (std::size_t i = 0; i < images.data.size(); ++i) dst[i] = level[images.data[i]];
  return out;
}

template <class T>
FashionMnist<T> FashionMnist<T>::rows(const std::vector<std::size_t>& r) const {
  return {take_rows(images, r), take_rows(labels, r)};
}

template <class T>
FashionMnistSplits<T> fashion_mnist_splits(std::size_t n_validation, std::uint64_t split_seed, std::size_t train_limit,
                                           std::size_t test_limit, const std::string& dir) {
  const FashionMnist<T> all = load_fashion_mnist<T>(FashionSplit::train, train_limit, dir);
  check(n_validation < all.size(), "fashion_mnist_splits", n_validation, " validation images leave none of the ",
        all.size(), " for training");
  const std::vector<std::size_t> order = epoch_order(all.size(), split_seed, 0);
  const auto cut = order.begin() + long(n_validation);
  return {all.rows({cut, order.end()}), all.rows({order.begin(), cut}),
          load_fashion_mnist<T>(FashionSplit::test, test_limit, dir)};
}

template struct FashionMnist<float>;
template struct FashionMnist<double>;
template FashionMnistSplits<float> fashion_mnist_splits<float>(std::size_t, std::uint64_t, std::size_t, std::size_t,
                                                               const std::string&);
template FashionMnistSplits<double> fashion_mnist_splits<double>(std::size_t, std::uint64_t, std::size_t, std::size_t,
                                                                 const std::string&);
template FashionMnist<float> load_fashion_mnist<float>(FashionSplit, std::size_t, const std::string&);
template FashionMnist<double> load_fashion_mnist<double>(FashionSplit, std::size_t, const std::string&);

}  // namespace attnlab::nn::data
