// The IDX format of (Fashion-)MNIST, gzip-compressed: a big-endian 32-bit magic number
// 0x0000 08 nd (08 = unsigned bytes, nd = number of dimensions), nd big-endian 32-bit sizes,
// then the bytes in row-major order. A file without the gzip magic is read as is (uncompressed),
// and a gzip file may hold several members one after the other, read as one stream, as gzip(1)
// reads them; anything else after the last member is an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace attnlab::nn::data {

struct IdxFile {
  std::vector<std::size_t> dims;   // as stored in the header
  std::size_t count = 0;           // items read along dims[0] (<= dims[0] when limited)
  std::vector<std::uint8_t> data;  // count * prod(dims[1:]) bytes
};

// Validates the magic (expected_magic, e.g. 2051 for images, 2049 for labels) and reads at most
// `limit` items along the first axis (0 = all; then trailing bytes are an error too).
// Throws DataError naming the path for a missing, short, corrupt or malformed file, a shape of
// more than 2^48 entries (core/array.hpp's limit), or a path that is not a regular file.
IdxFile read_idx_gz(const std::string& path, std::uint32_t expected_magic, std::size_t limit = 0);

// The same from the file's bytes in memory; `name` stands for the path in error messages.
IdxFile decode_idx_gz(const std::string& bytes, const std::string& name, std::uint32_t expected_magic,
                      std::size_t limit = 0);

}  // namespace attnlab::nn::data
