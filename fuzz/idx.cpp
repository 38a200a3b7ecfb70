// libFuzzer harness of the IDX reader (nn/data/idx.hpp, decode_idx_gz: gzip members or raw bytes,
// then the IDX header and data). Each input is read as 1-, 3- and 4-dimensional IDX (the magic
// numbers 2049, 2051, 2052; only the one it carries gets past the magic check), whole and with a
// limit of one item. It either reads data whose size matches the header, or throws DataError
// naming the input.
#include "fuzz/fuzz.hpp"
#include "nn/data/data_error.hpp"
#include "nn/data/idx.hpp"

using namespace attnlab;
using namespace attnlab::nn::data;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes = fuzz::bytes_of(data, size);
  for (std::uint32_t magic : {0x0801u, 0x0803u, 0x0804u}) {
    for (std::size_t limit : {0, 1}) {
      try {
        const IdxFile f = decode_idx_gz(bytes, fuzz::kSource, magic, limit);
        // In 128 bits, so that a product which wraps in 64 (the bug of issue 19) cannot agree.
        unsigned __int128 want = f.count;
        for (std::size_t i = 1; i < f.dims.size(); ++i) want *= f.dims[i];
        fuzz::require(f.dims.size() == (magic & 0xff) && f.count <= f.dims[0] && f.data.size() == want,
                      "IDX data size matches the header");
      } catch (const DataError& e) {
        fuzz::require_named(e.what());
      }
    }
  }
  return 0;
}
