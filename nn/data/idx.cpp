#include "nn/data/idx.hpp"

#include <zlib.h>

#include <algorithm>
#include <sstream>

#include "core/array.hpp"
#include "io/files.hpp"
#include "nn/data/data_error.hpp"

namespace attnlab::nn::data {

namespace {

template <class... Parts>
[[noreturn]] void data_fail(const std::string& name, const Parts&... parts) {
  std::ostringstream os;
  os << "read_idx_gz: " << name << ": ";
  (os << ... << parts);
  throw DataError(os.str());
}

bool gzip_magic(const std::string& b, std::size_t at) {
  return b.size() - at >= 2 && static_cast<unsigned char>(b[at]) == 0x1f &&
         static_cast<unsigned char>(b[at + 1]) == 0x8b;
}

// The file's content bytes, pulled on demand so that a header which lies about the size costs
// no memory: inflated when the file starts with the gzip magic, else the bytes as they are.
// Members follow one another as in gzip(1) (`cat a.gz b.gz` is one valid file); zlib's own
// gzread would also skip any other bytes after a member in silence, which hides a corrupt or
// doctored file, so this reader drives inflate itself and refuses them.
class Content {
 public:
  Content(const std::string& in, const std::string& name)
      : in_(in), name_(name), gzip_(gzip_magic(in, 0)) {
    if (gzip_ && inflateInit2(&zs_, 16 + MAX_WBITS) != Z_OK)  // 16 +: the gzip wrapper only
      data_fail(name_, "zlib cannot start (out of memory)");
  }
  ~Content() {
    if (gzip_) inflateEnd(&zs_);
  }
  Content(const Content&) = delete;
  Content& operator=(const Content&) = delete;

  // Up to n bytes into dst; fewer only where the content ends. Throws on corrupt gzip data.
  std::size_t read(unsigned char* dst, std::size_t n) {
    if (!gzip_) {
      const std::size_t got = std::min(n, in_.size() - pos_);
      std::copy_n(in_.data() + pos_, got, dst);
      pos_ += got;
      return got;
    }
    std::size_t done = 0;
    while (done < n && !ended_) {
      if (zs_.avail_in == 0 && pos_ < in_.size()) {  // zlib counts in 32 bits: feed 1 GiB at most
        zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in_.data() + pos_));
        zs_.avail_in = static_cast<uInt>(std::min<std::size_t>(in_.size() - pos_, 1u << 30));
        pos_ += zs_.avail_in;
      }
      zs_.next_out = dst + done;
      zs_.avail_out = static_cast<uInt>(std::min<std::size_t>(n - done, 1u << 30));
      const uInt room = zs_.avail_out;
      const int rc = inflate(&zs_, Z_NO_FLUSH);  // checks each member's CRC-32 and length too
      done += room - zs_.avail_out;
      if (rc == Z_STREAM_END) {
        const std::size_t rest = zs_.avail_in + (in_.size() - pos_), at = in_.size() - rest;
        if (rest == 0) ended_ = true;
        else if (gzip_magic(in_, at)) inflateReset(&zs_);  // the next member; keeps next_in
        else data_fail(name_, rest, " bytes after the end of the gzip data that are not another gzip member");
      } else if (rc == Z_BUF_ERROR && zs_.avail_in == 0 && pos_ == in_.size()) {
        data_fail(name_, "truncated gzip data: the file ends inside a compressed stream");
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        data_fail(name_, "corrupt gzip data (zlib: ", zs_.msg ? zs_.msg : "error " + std::to_string(rc), ")");
      }
    }
    return done;
  }

 private:
  const std::string& in_;
  const std::string& name_;
  const bool gzip_;
  std::size_t pos_ = 0;  // the next input byte not yet handed to zlib (or copied)
  bool ended_ = false;
  z_stream zs_{};
};

// Read exactly n bytes or throw. `offset` and `total` place this read within a larger one, for
// the message.
void read_exact(Content& in, const std::string& name, unsigned char* dst, std::size_t n, const char* what,
                std::size_t offset = 0, std::size_t total = 0) {
  const std::size_t got = in.read(dst, n);
  if (got < n)
    data_fail(name, "file is truncated: ", what, " needs ", total ? total : n, " bytes, found ", offset + got);
}

std::uint32_t big_endian(const unsigned char b[4]) {
  return (std::uint32_t(b[0]) << 24) | (std::uint32_t(b[1]) << 16) | (std::uint32_t(b[2]) << 8) | std::uint32_t(b[3]);
}

}  // namespace

IdxFile decode_idx_gz(const std::string& bytes, const std::string& name, std::uint32_t expected_magic,
                      std::size_t limit) {
  Content in(bytes, name);
  unsigned char head[4];
  read_exact(in, name, head, 4, "the magic number");
  const std::uint32_t magic = big_endian(head);
  if (magic != expected_magic)
    data_fail(name, "bad magic number ", magic, ", expected ", expected_magic, " (not an IDX file of this kind?)");
  const std::size_t nd = magic & 0xff;
  if (nd == 0 || nd > 4) data_fail(name, "bad number of dimensions ", nd);

  IdxFile out;
  for (std::size_t i = 0; i < nd; ++i) {
    read_exact(in, name, head, 4, "the header");
    out.dims.push_back(big_endian(head));
  }
  // The rule every array constructor applies (core/array.hpp): the nonzero sizes multiply to at
  // most 2^48, so no product below can wrap (the items of (5, 2^31, 2^9, 2^31) would wrap to 0
  // bytes: 5 items announced, none read), and a zero size cannot hide huge ones: (5, 0, 2^31, 2^31).
  std::size_t entries = 0;
  if (!size_within_limit(out.dims, entries))
    data_fail(name, "shape ", shape_str(out.dims), " has more than 2^48 entries (corrupt header?)");
  std::size_t item = 1;
  for (std::size_t i = 1; i < nd; ++i) item *= out.dims[i];
  out.count = limit ? std::min(limit, out.dims[0]) : out.dims[0];

  // Grow the buffer as data arrives rather than trusting the header with one allocation: a
  // corrupt count then ends in a "truncated" error, not in gigabytes of zeroed memory. The
  // pieces start small and double, so a short file that claims much costs little (a fixed 16 MB
  // first piece made each such file cost 5 ms of zeroing: 200 inputs a second under the fuzzer).
  const std::size_t total = out.count * item;
  std::size_t piece = std::size_t(1) << 16;
  while (out.data.size() < total) {
    const std::size_t start = out.data.size(), n = std::min(piece, total - start);
    out.data.resize(start + n);
    read_exact(in, name, out.data.data() + start, n, "the data", start, total);
    piece = std::min(2 * piece, std::size_t(1) << 24);
  }
  if (!limit || limit >= out.dims[0]) {
    // Reading past the end also makes zlib check the last gzip CRC and length trailer, and
    // refuses what follows the last member.
    unsigned char extra;
    if (in.read(&extra, 1) > 0)
      data_fail(name, "unexpected bytes after the ", out.dims[0], " items the header announces");
  }
  return out;
}

IdxFile read_idx_gz(const std::string& path, std::uint32_t expected_magic, std::size_t limit) {
  std::string bytes;
  try {
    bytes = read_file(path, "read_idx_gz");  // a regular file only: /dev/zero would never end
  } catch (const IoError& e) {
    throw DataError(e.what());
  }
  return decode_idx_gz(bytes, path, expected_magic, limit);
}

}  // namespace attnlab::nn::data
