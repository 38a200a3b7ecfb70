#include "nn/data/idx.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <zlib.h>

#include "nn/data/data_error.hpp"

namespace attnlab::nn::data {

namespace {

template <class... Parts>
[[noreturn]] void data_fail(const std::string& path, const Parts&... parts) {
  std::ostringstream os;
  os << "read_idx_gz: " << path << ": ";
  (os << ... << parts);
  throw DataError(os.str());
}

// Closes the gzFile on every path out, including throws.
struct GzCloser {
  gzFile f;
  ~GzCloser() {
    if (f) gzclose(f);
  }
};

// Read exactly n bytes or throw: gzread returns < 0 on corrupt data and a short count at a
// truncated end (zlib reports "unexpected end of file" on the following call).
// `offset` and `total` place this read within a larger one, for the message.
void read_exact(gzFile f, const std::string& path, void* dst, std::size_t n, const char* what,
                std::size_t offset = 0, std::size_t total = 0) {
  if (total == 0) total = n;
  auto* p = static_cast<unsigned char*>(dst);
  std::size_t done = 0;
  while (done < n) {
    const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n - done, 1u << 30));
    const int got = gzread(f, p + done, chunk);
    if (got < 0) {
      int code = 0;
      const char* msg = gzerror(f, &code);
      data_fail(path, "corrupt gzip data while reading ", what, " (zlib: ", msg ? msg : "unknown error", ")");
    }
    if (got == 0) {
      int code = 0;
      const char* msg = gzerror(f, &code);
      data_fail(path, "file is truncated: ", what, " needs ", total, " bytes, found ", offset + done,
                code != Z_OK && msg ? std::string(" (zlib: ") + msg + ")" : std::string());
    }
    done += static_cast<std::size_t>(got);
  }
}

std::uint32_t big_endian(const unsigned char b[4]) {
  return (std::uint32_t(b[0]) << 24) | (std::uint32_t(b[1]) << 16) | (std::uint32_t(b[2]) << 8) | std::uint32_t(b[3]);
}

}  // namespace

IdxFile read_idx_gz(const std::string& path, std::uint32_t expected_magic, std::size_t limit) {
  errno = 0;
  GzCloser gz{gzopen(path.c_str(), "rb")};
  if (!gz.f) data_fail(path, "cannot open (", errno ? std::strerror(errno) : "out of memory", ")");

  unsigned char head[4];
  read_exact(gz.f, path, head, 4, "the magic number");
  const std::uint32_t magic = big_endian(head);
  if (magic != expected_magic)
    data_fail(path, "bad magic number ", magic, ", expected ", expected_magic, " (not an IDX file of this kind?)");
  const std::size_t nd = magic & 0xff;
  if (nd == 0 || nd > 4) data_fail(path, "bad number of dimensions ", nd);

  IdxFile out;
  std::size_t item = 1;
  for (std::size_t i = 0; i < nd; ++i) {
    read_exact(gz.f, path, head, 4, "the header");
    const std::size_t d = big_endian(head);
    out.dims.push_back(d);
    if (i > 0) item *= d;
    // No IDX file of this family comes near 2^40 bytes; beyond that the header is corrupt (and the
    // products below could overflow).
    if (d > (std::size_t(1) << 31) || item > (std::size_t(1) << 40))
      data_fail(path, "implausible dimension ", d, " on axis ", i, " (corrupt header?)");
  }
  out.count = limit ? std::min(limit, out.dims[0]) : out.dims[0];
  if (item && out.count > (std::size_t(1) << 40) / item)
    data_fail(path, "implausible size ", out.count, " x ", item, " bytes (corrupt header?)");
  // Grow the buffer as data arrives rather than trusting the header with one allocation: a
  // corrupt count then ends in a "truncated" error, not in gigabytes of zeroed memory.
  const std::size_t total = out.count * item, chunk = std::size_t(1) << 24;
  out.data.reserve(std::min(total, chunk));
  while (out.data.size() < total) {
    const std::size_t start = out.data.size(), n = std::min(chunk, total - start);
    out.data.resize(start + n);
    read_exact(gz.f, path, out.data.data() + start, n, "the data", start, total);
  }
  if (!limit || limit >= out.dims[0]) {
    // Reading past the end also makes zlib check the gzip CRC and length trailer.
    unsigned char extra;
    const int got = gzread(gz.f, &extra, 1);
    int code = Z_OK;
    const char* msg = gzerror(gz.f, &code);
    if (got < 0 || code != Z_OK)
      data_fail(path, "corrupt or truncated gzip data at the end of the file (zlib: ", msg ? msg : "unknown error", ")");
    if (got > 0) data_fail(path, "unexpected bytes after the ", out.dims[0], " items the header announces");
  }
  return out;
}

}  // namespace attnlab::nn::data
