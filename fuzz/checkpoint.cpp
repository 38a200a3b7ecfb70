// libFuzzer harness of the checkpoint loader (nn/checkpoint.hpp): a checkpoint's arrays are loaded
// into a Linear(3, 2) with its Adam state, then as weights only. Each load either succeeds (the
// parameters keep their shapes: a checkpoint never reshapes a model) or throws IoError or
// ShapeError naming the input.
//
// The arrays come in a plain container rather than a ZIP: a ZIP's CRC-32 turns away nearly every
// mutation of an array's bytes before the loader sees it (fuzz_npz covers the ZIP layer, and
// load_checkpoint(path) is load_npz followed by this load). The input is records of
//   key '\0' <length: 4 bytes, little-endian> <the array as .npy, length bytes>
#include "fuzz/fuzz.hpp"
#include "nn/checkpoint.hpp"
#include "nn/layers.hpp"

using namespace attnlab;
using namespace attnlab::nn;

namespace {

struct Target {
  Generator gen{1};
  Linear<float> model{3, 2, gen};
  Adam<float> adam{model.parameters()};
  NamedParameters<float> named = model.named_parameters();
};

// The records as an Npz; false when the container itself is malformed (not the loader's input).
bool parse(const std::string& in, Npz& out) {
  std::size_t p = 0;
  while (p < in.size()) {
    const std::size_t end = in.find('\0', p);
    if (end == std::string::npos || in.size() - end < 5) return false;
    const std::string key = in.substr(p, end - p);
    std::uint32_t n = 0;
    for (int i = 3; i >= 0; --i) n = n << 8 | static_cast<unsigned char>(in[end + 1 + i]);
    if (key.empty() || out.contains(key) || in.size() - end - 5 < n) return false;
    try {
      out.add(key, npy_decode(in.substr(end + 5, n), fuzz::kSource + " array '" + key + "'"));
    } catch (const IoError& e) {
      fuzz::require_named(e.what());
      return false;
    }
    p = end + 5 + n;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static Target* t = new Target;  // built once: the loader replaces everything it accepts
  Npz file;
  if (!parse(fuzz::bytes_of(data, size), file)) return 0;
  Optimizer<float>* const optimizers[] = {&t->adam, nullptr};
  for (Optimizer<float>* opt : optimizers) {
    try {
      load_checkpoint(file, fuzz::kSource, t->named, opt);
    } catch (const ShapeError& e) {
      fuzz::require_named(e.what());
    } catch (const IoError& e) {
      fuzz::require_named(e.what());
    }
    fuzz::require(t->model.weight.shape() == Shape{2, 3} && t->model.bias.shape() == Shape{2},
                  "the parameters keep their shapes");
  }
  return 0;
}
