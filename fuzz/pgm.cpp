// libFuzzer harness of the PGM reader (io/pgm.hpp, pgm_decode). Any bytes either decode to a
// non-empty (height, width) image of grey levels in [0, 1], or throw IoError naming the input.
#include "fuzz/fuzz.hpp"
#include "io/files.hpp"
#include "io/pgm.hpp"

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const Array<double> img = pgm_decode(fuzz::bytes_of(data, size), fuzz::kSource);
    fuzz::require(img.dimension() == 2 && img.size() > 0, "pgm image shape");
    for (double v : img) fuzz::require(v >= 0.0 && v <= 1.0, "pgm grey level in [0, 1]");
  } catch (const IoError& e) {
    fuzz::require_named(e.what());
  }
  return 0;
}
