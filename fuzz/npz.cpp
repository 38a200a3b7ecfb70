// libFuzzer harness of the .npz reader (io/npz.hpp, npz_decode: the ZIP container, stored and
// deflated members, ZIP64 fields, then npy_decode per member). Any bytes either decode to arrays
// whose sizes match their shapes, or throw IoError naming the input.
#include "fuzz/fuzz.hpp"
#include "io/npz.hpp"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const Npz z = npz_decode(fuzz::bytes_of(data, size), fuzz::kSource);
    for (const auto& [key, array] : z.entries()) {
      fuzz::require(!key.empty() && z.contains(key), "npz key", key);
      std::size_t n = 1;
      for (std::size_t d : array.shape()) n *= d;
      fuzz::require(n == array.size(), "npz array size", key);
    }
  } catch (const IoError& e) {
    fuzz::require_named(e.what());
  }
  return 0;
}
