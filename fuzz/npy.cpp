// libFuzzer harness of the .npy decoder (io/npz.hpp, npy_decode). Any bytes either decode to an
// array that writes back and reads again to the same bytes, or throw IoError naming the input.
#include "fuzz/fuzz.hpp"
#include "io/npz.hpp"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const NpyArray a = npy_decode(fuzz::bytes_of(data, size), fuzz::kSource);
    const std::string again = npy_encode(a);
    const NpyArray b = npy_decode(again, fuzz::kSource);
    fuzz::require(b.dtype() == a.dtype() && b.shape() == a.shape() && npy_encode(b) == again,
                  "npy round trip");
  } catch (const IoError& e) {
    fuzz::require_named(e.what());
  }
  return 0;
}
