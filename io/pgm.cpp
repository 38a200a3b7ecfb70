#include "io/pgm.hpp"

#include <cctype>

#include <xtensor/xbuilder.hpp>

#include "io/files.hpp"

namespace attnlab {

namespace {

// A cursor over the header and, for P2, the samples: numbers between whitespace and comments.
class Reader {
 public:
  Reader(const std::string& bytes, const std::string& what) : b_(bytes), what_(what) {}

  [[noreturn]] void fail(const std::string& why) const { throw IoError(what_ + ": " + why); }

  void skip_space_and_comments() {
    while (i_ < b_.size()) {
      if (std::isspace(static_cast<unsigned char>(b_[i_]))) {
        ++i_;
      } else if (b_[i_] == '#') {
        while (i_ < b_.size() && b_[i_] != '\n' && b_[i_] != '\r') ++i_;
      } else {
        break;
      }
    }
  }

  // The next decimal number, at most `max`; `name` says which field in messages.
  std::size_t number(const char* name, std::size_t max) {
    skip_space_and_comments();
    if (i_ >= b_.size()) fail(std::string("ends before its ") + name);
    if (!std::isdigit(static_cast<unsigned char>(b_[i_])))
      fail(std::string("its ") + name + " is not a number (byte " + std::to_string(i_) + ")");
    std::size_t v = 0;
    while (i_ < b_.size() && std::isdigit(static_cast<unsigned char>(b_[i_]))) {
      v = v * 10 + std::size_t(b_[i_++] - '0');
      if (v > max) fail(std::string("its ") + name + " is above " + std::to_string(max));
    }
    return v;
  }

  std::size_t pos() const { return i_; }
  void advance(std::size_t n) { i_ += n; }
  bool at_end() const { return i_ >= b_.size(); }
  const std::string& bytes() const { return b_; }

 private:
  const std::string& b_;
  std::string what_;
  std::size_t i_ = 0;
};

}  // namespace

Array<double> pgm_decode(const std::string& bytes, const std::string& what) {
  Reader r(bytes, what);
  if (bytes.size() < 2 || bytes[0] != 'P' || (bytes[1] != '5' && bytes[1] != '2')) {
    if (bytes.size() >= 2 && bytes[0] == 'P' && bytes[1] >= '1' && bytes[1] <= '7')
      r.fail(std::string("is a Netpbm P") + bytes[1] + " file, not a grey map (P5 or P2)");
    r.fail("is not a PGM grey map (it does not start with P5 or P2)");
  }
  const bool binary = bytes[1] == '5';
  r.advance(2);
  const std::size_t width = r.number("width", kPgmMaxSide), height = r.number("height", kPgmMaxSide);
  const std::size_t maxval = r.number("maxval", 65535);
  if (width == 0 || height == 0) r.fail("has no pixels (" + std::to_string(width) + " x " + std::to_string(height) + ")");
  if (maxval == 0) r.fail("has maxval 0");
  const std::size_t n = width * height;
  // Enough bytes for every sample before the image is allocated: a header alone cannot make this
  // reader ask for gigabytes. P2 samples take at least a digit and a separator each.
  const std::size_t per = maxval < 256 ? 1 : 2, left = bytes.size() - r.pos();
  if (!binary && left < 2 * n - 1)
    r.fail("is truncated: " + std::to_string(width) + " x " + std::to_string(height) + " samples need at least " +
           std::to_string(2 * n - 1) + " bytes, it has " + std::to_string(left));
  if (binary && left < n * per + 1)
    r.fail("is truncated: " + std::to_string(width) + " x " + std::to_string(height) + " samples need " +
           std::to_string(n * per) + " bytes after the header, it has " + std::to_string(left == 0 ? 0 : left - 1));
  Array<double> img = xt::zeros<double>({height, width});
  const double scale = 1.0 / double(maxval);
  auto check = [&](std::size_t v, std::size_t k) {
    if (v > maxval)
      r.fail("sample " + std::to_string(k) + " (row " + std::to_string(k / width) + ", column " +
             std::to_string(k % width) + ") is " + std::to_string(v) + ", above maxval " + std::to_string(maxval));
    return double(v) * scale;
  };
  if (binary) {
    if (r.at_end() || !std::isspace(static_cast<unsigned char>(bytes[r.pos()])))
      r.fail("has no whitespace after maxval");
    r.advance(1);
    const std::size_t need = n * per, have = bytes.size() - r.pos();
    if (have > need) r.fail("has " + std::to_string(have - need) + " bytes after its samples");
    const auto* p = reinterpret_cast<const unsigned char*>(bytes.data() + r.pos());
    for (std::size_t k = 0; k < n; ++k)
      img.data()[k] = check(per == 1 ? p[k] : (std::size_t(p[2 * k]) << 8 | p[2 * k + 1]), k);
  } else {
    for (std::size_t k = 0; k < n; ++k) {
      r.skip_space_and_comments();
      if (r.at_end())
        r.fail("is truncated: it has " + std::to_string(k) + " of its " + std::to_string(n) + " samples");
      img.data()[k] = check(r.number("sample", 1u << 20), k);
    }
    r.skip_space_and_comments();
    if (!r.at_end()) r.fail("has data after its " + std::to_string(n) + " samples (byte " + std::to_string(r.pos()) + ")");
  }
  return img;
}

Array<double> read_pgm(const std::string& path) {
  return pgm_decode(read_file(path, "read_pgm"), "read_pgm: '" + path + "'");
}

}  // namespace attnlab
