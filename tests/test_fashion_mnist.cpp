// Fashion-MNIST reader: the real files (first 100 images), and small good and bad .gz files
// written with zlib into a temporary directory: missing, truncated, corrupt, inconsistent.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>
#include <stdlib.h>
#include <unistd.h>
#include <zlib.h>

#include "core/error.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/data_error.hpp"
#include "nn/data/fashion_mnist.hpp"
#include "nn/data/idx.hpp"

using namespace attnlab;
using namespace attnlab::nn::data;
using Bytes = std::vector<std::uint8_t>;

namespace {

// A fresh directory under /tmp, removed with its files at scope exit.
struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/attnlab_fmnist_XXXXXX";
    REQUIRE(mkdtemp(tmpl) != nullptr);
    path = tmpl;
  }
  ~TempDir() {
    for (const char* f : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
                          "t10k-labels-idx1-ubyte.gz"})
      std::remove((path + "/" + f).c_str());
    rmdir(path.c_str());
  }
};

void put_u32(Bytes& b, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<std::uint8_t>(v >> s));
}

Bytes idx_bytes(std::uint32_t magic, const std::vector<std::uint32_t>& dims, const Bytes& payload) {
  Bytes b;
  put_u32(b, magic);
  for (auto d : dims) put_u32(b, d);
  b.insert(b.end(), payload.begin(), payload.end());
  return b;
}

void write_gz(const std::string& path, const Bytes& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  REQUIRE(f != nullptr);
  REQUIRE(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())) == static_cast<int>(bytes.size()));
  REQUIRE(gzclose(f) == Z_OK);
}

Bytes read_raw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
void write_raw(const std::string& path, const Bytes& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// n images whose byte k (over all images) is k mod 256, and labels i mod 10.
Bytes pixels(std::size_t n) {
  Bytes b(n * 28 * 28);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::uint8_t>(i % 256);
  return b;
}
Bytes labels(std::size_t n) {
  Bytes b(n);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(i % 10);
  return b;
}

// A well-formed synthetic training split of n examples in dir.
void write_good(const std::string& dir, std::size_t n) {
  write_gz(fashion_mnist_path(dir, FashionSplit::train, true), idx_bytes(2051, {std::uint32_t(n), 28, 28}, pixels(n)));
  write_gz(fashion_mnist_path(dir, FashionSplit::train, false), idx_bytes(2049, {std::uint32_t(n)}, labels(n)));
}

// The DataError message of loading the training split from dir ("" if it loads).
std::string load_error(const std::string& dir, std::size_t limit = 0) {
  try {
    load_fashion_mnist<float>(FashionSplit::train, limit, dir);
  } catch (const DataError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("Fashion-MNIST: the real training and test files") {
  const auto train = load_fashion_mnist<float>(FashionSplit::train, 100);
  REQUIRE(train.size() == 100);
  CHECK(shape_of(train.images) == Shape{100, 28, 28});
  CHECK(train.labels(0) == 9);
  CHECK(std::string(fashion_mnist_classes()[train.labels(0)]) == "Ankle boot");
  // First training labels 9 0 0 3 0 2 7 2 5 5 (read with Python's gzip for this test).
  const std::vector<Index> first = {9, 0, 0, 3, 0, 2, 7, 2, 5, 5};
  for (std::size_t i = 0; i < first.size(); ++i) CHECK(train.labels(i) == first[i]);
  float lo = 1, hi = 0, sum0 = 0;
  for (float v : train.images) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  for (std::size_t p = 0; p < 784; ++p) sum0 += train.images.data()[p];
  CHECK(lo == 0.0f);
  CHECK(hi == 1.0f);  // 255 maps to exactly 1
  CHECK(sum0 == doctest::Approx(76247.0 / 255.0));  // sum of the first image's bytes is 76247

  const auto test = load_fashion_mnist<double>(FashionSplit::test, 5);
  CHECK(test.labels == IndexArray{9, 2, 1, 1, 6});
  CHECK(fashion_mnist_classes().size() == 10);
  CHECK(std::string(fashion_mnist_classes()[0]) == "T-shirt/top");
}

TEST_CASE("Fashion-MNIST: the full test split") {
  const auto test = load_fashion_mnist<float>(FashionSplit::test);
  CHECK(test.size() == 10000);
  std::vector<int> per_class(10, 0);
  for (Index l : test.labels) ++per_class[static_cast<std::size_t>(l)];
  for (int c : per_class) CHECK(c == 1000);  // the test set is balanced
}

TEST_CASE("Fashion-MNIST: a small well-formed file, with and without a limit") {
  TempDir dir;
  write_good(dir.path, 3);
  const auto all = load_fashion_mnist<double>(FashionSplit::train, 0, dir.path);
  REQUIRE(all.size() == 3);
  CHECK(all.labels == IndexArray{0, 1, 2});
  CHECK(all.images(0, 0, 5) == doctest::Approx(5.0 / 255.0));
  CHECK(all.images(2, 27, 27) == doctest::Approx(((3 * 784 - 1) % 256) / 255.0));
  const auto two = load_fashion_mnist<float>(FashionSplit::train, 2, dir.path);
  CHECK(shape_of(two.images) == Shape{2, 28, 28});
  CHECK(load_fashion_mnist<float>(FashionSplit::train, 10, dir.path).size() == 3);  // limit beyond N: all
}

TEST_CASE("Fashion-MNIST: a missing file names the path and the Debian package") {
  TempDir dir;
  std::string msg = load_error(dir.path);
  CHECK(contains(msg, dir.path + "/train-images-idx3-ubyte.gz"));  // checked first
  CHECK(contains(msg, "apt-get install dataset-fashion-mnist"));
  write_gz(fashion_mnist_path(dir.path, FashionSplit::train, true), idx_bytes(2051, {1, 28, 28}, pixels(1)));
  msg = load_error(dir.path);
  CHECK(contains(msg, "train-labels-idx1-ubyte.gz"));
  CHECK(contains(msg, "dataset-fashion-mnist"));
  CHECK_THROWS_AS(load_fashion_mnist<float>(FashionSplit::test, 0, "/nonexistent/dir"), DataError);
}

TEST_CASE("Fashion-MNIST: bad magic numbers, shapes, counts and labels") {
  TempDir dir;
  const std::string img = fashion_mnist_path(dir.path, FashionSplit::train, true);
  const std::string lab = fashion_mnist_path(dir.path, FashionSplit::train, false);

  write_good(dir.path, 2);
  write_gz(lab, idx_bytes(2051, {2}, labels(2)));  // image magic on the label file
  CHECK(contains(load_error(dir.path), "magic"));

  write_good(dir.path, 2);
  write_gz(img, idx_bytes(2049, {2, 28, 28}, pixels(2)));  // label magic on the image file
  CHECK(contains(load_error(dir.path), "magic"));

  write_good(dir.path, 2);
  write_gz(img, idx_bytes(2051, {2, 27, 28}, Bytes(2 * 27 * 28, 7)));
  CHECK(contains(load_error(dir.path), "27x28"));

  write_good(dir.path, 2);
  write_gz(lab, idx_bytes(2049, {3}, labels(3)));  // 2 images, 3 labels
  CHECK(contains(load_error(dir.path), "2 images but"));

  write_good(dir.path, 2);
  write_gz(lab, idx_bytes(2049, {2}, Bytes{3, 10}));  // label 10
  CHECK(contains(load_error(dir.path), "label 10 at index 1"));

  write_good(dir.path, 2);
  write_gz(lab, Bytes{0, 0});  // shorter than a magic number
  CHECK(contains(load_error(dir.path), "truncated"));
}

TEST_CASE("Fashion-MNIST: truncated, corrupt and over-long files give clear errors") {
  TempDir dir;
  const std::string img = fashion_mnist_path(dir.path, FashionSplit::train, true);

  // The header announces 3 images; the data holds 2.
  write_good(dir.path, 3);
  write_gz(img, idx_bytes(2051, {3, 28, 28}, pixels(2)));
  std::string msg = load_error(dir.path);
  CHECK(contains(msg, "truncated"));
  CHECK(contains(msg, img));
  CHECK(load_error(dir.path, 2).empty());  // the first two are there

  // Extra bytes after the announced images.
  write_gz(img, idx_bytes(2051, {3, 28, 28}, pixels(4)));
  CHECK(contains(load_error(dir.path), "unexpected bytes"));

  // A gzip stream cut in the middle.
  write_good(dir.path, 3);
  Bytes gz = read_raw(img);
  REQUIRE(gz.size() > 100);
  write_raw(img, Bytes(gz.begin(), gz.begin() + static_cast<long>(gz.size() / 2)));
  msg = load_error(dir.path);
  CHECK_FALSE(msg.empty());
  CHECK(contains(msg, img));

  // A gzip stream cut just before its CRC/length trailer: every data byte decompresses, and
  // only the trailer check can tell.
  write_raw(img, Bytes(gz.begin(), gz.end() - 4));
  CHECK_FALSE(load_error(dir.path).empty());

  // Flipped bytes inside the deflate data.
  Bytes bad = gz;
  for (std::size_t i = 20; i < 60; ++i) bad[i] ^= 0x5a;
  write_raw(img, bad);
  CHECK_FALSE(load_error(dir.path).empty());

  // A corrupted CRC only: the data decompresses, the check at the end catches it.
  bad = gz;
  bad[bad.size() - 8] ^= 0xff;
  write_raw(img, bad);
  CHECK(contains(load_error(dir.path), "corrupt"));

  // Random bytes that are not gzip at all: zlib reads them as is, and the magic check fails.
  write_raw(img, Bytes{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  CHECK(contains(load_error(dir.path), "magic"));
}

TEST_CASE("read_idx_gz reads an IDX file of any shape") {
  TempDir dir;
  const std::string p = dir.path + "/train-images-idx3-ubyte.gz";
  write_gz(p, idx_bytes(2051, {4, 2, 3}, Bytes(24, 9)));
  const IdxFile f = read_idx_gz(p, 2051);
  CHECK(f.dims == std::vector<std::size_t>{4, 2, 3});
  CHECK(f.count == 4);
  CHECK(f.data == Bytes(24, 9));
  CHECK(read_idx_gz(p, 2051, 1).data.size() == 6);
  CHECK_THROWS_AS(read_idx_gz(p, 2049), DataError);
  // A header that lies about the count fails as truncated, without allocating what it claims.
  write_gz(p, idx_bytes(2051, {1000000, 28, 28}, Bytes(100, 1)));
  std::string msg;
  try {
    read_idx_gz(p, 2051);
  } catch (const DataError& e) {
    msg = e.what();
  }
  CHECK(contains(msg, "truncated: the data needs 784000000 bytes, found 100"));
  write_gz(p, idx_bytes(2051, {2000000000, 2000000000, 28}, Bytes(100, 1)));
  CHECK_THROWS_AS(read_idx_gz(p, 2051), DataError);
  CHECK_THROWS_AS(read_idx_gz(dir.path + "/none.gz", 2051), DataError);
}

TEST_CASE("read_idx_gz refuses a shape past 2^48 entries, also one whose product wraps (issue 19)") {
  TempDir dir;
  const std::string p = dir.path + "/train-images-idx3-ubyte.gz";
  const auto error = [&](std::uint32_t magic) {
    try {
      read_idx_gz(p, magic);
    } catch (const DataError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  // 2^31 * 2^9 * 2^31 bytes per item wraps to 0: the reader announced 5 items and read none.
  write_gz(p, idx_bytes(0x0804, {5, 1u << 31, 1u << 9, 1u << 31}, {}));
  CHECK(error(0x0804) == "read_idx_gz: " + p +
                             ": shape (5,2147483648,512,2147483648) has more than 2^48 entries (corrupt header?)");
  // A zero size beside huge ones: nothing to read, but past the limit all the same.
  write_gz(p, idx_bytes(0x0804, {5, 0, 1u << 31, 1u << 31}, {}));
  CHECK(contains(error(0x0804), "shape (5,0,2147483648,2147483648) has more than 2^48 entries"));
  // An honest empty shape still reads: 5 items of 0 bytes.
  write_gz(p, idx_bytes(0x0803, {5, 0, 28}, {}));
  const IdxFile empty = read_idx_gz(p, 0x0803);
  CHECK(empty.count == 5);
  CHECK(empty.data.empty());
}

TEST_CASE("read_idx_gz reads concatenated gzip members, and refuses other bytes after the data (issue 19)") {
  TempDir dir;
  const std::string p = dir.path + "/train-images-idx3-ubyte.gz";
  const Bytes whole = idx_bytes(2051, {2, 28, 28}, pixels(2));
  // Two members, as `cat a.gz b.gz` makes: one stream to gzip(1), and to this reader.
  write_gz(p, Bytes(whole.begin(), whole.begin() + 100));
  Bytes two = read_raw(p);
  write_gz(p, Bytes(whole.begin() + 100, whole.end()));
  const Bytes second = read_raw(p);
  two.insert(two.end(), second.begin(), second.end());
  write_raw(p, two);
  CHECK(read_idx_gz(p, 2051).data == pixels(2));
  // A last member that is empty changes nothing; one that holds more data is "unexpected bytes".
  write_gz(p, Bytes{});
  Bytes three = two;
  const Bytes empty_member = read_raw(p);
  three.insert(three.end(), empty_member.begin(), empty_member.end());
  write_raw(p, three);
  CHECK(read_idx_gz(p, 2051).data == pixels(2));
  write_gz(p, Bytes{1, 2, 3});
  const Bytes extra_member = read_raw(p);
  three.insert(three.end(), extra_member.begin(), extra_member.end());
  write_raw(p, three);
  CHECK_THROWS_WITH_AS(read_idx_gz(p, 2051),
                       ("read_idx_gz: " + p + ": unexpected bytes after the 2 items the header announces").c_str(),
                       DataError);

  // Garbage or zero padding after the last member was skipped in silence (zlib's gzread does).
  for (const Bytes& tail : {Bytes{'j', 'u', 'n', 'k'}, Bytes(8, 0), Bytes{0x1f}}) {
    Bytes bad = two;
    bad.insert(bad.end(), tail.begin(), tail.end());
    write_raw(p, bad);
    CHECK_THROWS_WITH_AS(read_idx_gz(p, 2051),
                         ("read_idx_gz: " + p + ": " + std::to_string(tail.size()) +
                          " bytes after the end of the gzip data that are not another gzip member").c_str(),
                         DataError);
  }
  // A second (empty) member cut before its CRC and length is truncated gzip data.
  Bytes cut = two;
  cut.insert(cut.end(), empty_member.begin(), empty_member.end() - 4);
  write_raw(p, cut);
  CHECK_THROWS_WITH_AS(read_idx_gz(p, 2051),
                       ("read_idx_gz: " + p + ": truncated gzip data: the file ends inside a compressed stream").c_str(),
                       DataError);
}

TEST_CASE("read_idx_gz refuses a folder or a device by name, and decodes from memory (issue 19)") {
  TempDir dir;
  CHECK_THROWS_WITH_AS(read_idx_gz(dir.path, 2051),
                       ("read_idx_gz: cannot read '" + dir.path + "': it is a directory").c_str(), DataError);
  CHECK_THROWS_WITH_AS(read_idx_gz("/dev/zero", 2051),
                       "read_idx_gz: cannot read '/dev/zero': not a regular file (a character device)", DataError);
  const Bytes raw = idx_bytes(2049, {3}, labels(3));
  const IdxFile f = decode_idx_gz(std::string(raw.begin(), raw.end()), "memory", 2049);
  CHECK(f.data == labels(3));
  CHECK_THROWS_WITH_AS(decode_idx_gz("", "memory", 2049),
                       "read_idx_gz: memory: file is truncated: the magic number needs 4 bytes, found 0", DataError);
}

TEST_CASE("fashion_mnist_splits: validation and training partition the training file by the seed's shuffle") {
  TempDir dir;
  write_good(dir.path, 10);
  write_gz(fashion_mnist_path(dir.path, FashionSplit::test, true), idx_bytes(2051, {10, 28, 28}, pixels(10)));
  write_gz(fashion_mnist_path(dir.path, FashionSplit::test, false), idx_bytes(2049, {10}, labels(10)));
  const auto s = fashion_mnist_splits<float>(4, 2017, 0, 0, dir.path);
  REQUIRE(s.validation.size() == 4);
  REQUIRE(s.train.size() == 6);
  CHECK(s.test.size() == 10);
  const std::vector<std::size_t> order = epoch_order(10, 2017, 0);
  for (std::size_t i = 0; i < 4; ++i) CHECK(s.validation.labels(i) == Index(order[i]));  // example i has label i
  for (std::size_t i = 0; i < 6; ++i) CHECK(s.train.labels(i) == Index(order[4 + i]));
  CHECK(s.train.images(0, 0, 0) == load_fashion_mnist<float>(FashionSplit::train, 0, dir.path).images(order[4], 0, 0));
  const auto limited = fashion_mnist_splits<float>(2, 2017, 5, 3, dir.path);
  CHECK(limited.train.size() == 3);
  CHECK(limited.test.size() == 3);
  CHECK_THROWS_WITH_AS(fashion_mnist_splits<float>(10, 1, 0, 0, dir.path),
                       doctest::Contains("fashion_mnist_splits: 10 validation images leave none of the 10 for training"), ShapeError);
}
