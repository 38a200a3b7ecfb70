// The names of the positional methods.
#include "nn/positional/positional.hpp"

namespace attnlab::nn {

std::string positional_name(Positional p) {
  switch (p) {
    case Positional::None: return "none";
    case Positional::Sinusoidal: return "sinusoidal";
    case Positional::Learned: return "learned";
    case Positional::RelativeBias: return "relative";
    case Positional::Rotary: return "rope";
    case Positional::ALiBi: return "alibi";
    case Positional::ShawRelative: return "shaw";
  }
  return "?";
}

Positional parse_positional(const std::string& name) {
  for (Positional p : {Positional::None, Positional::Sinusoidal, Positional::Learned,
                       Positional::RelativeBias, Positional::Rotary, Positional::ALiBi,
                       Positional::ShawRelative})
    if (positional_name(p) == name) return p;
  fail("Positional", "unknown method '", name,
       "' (expected none, sinusoidal, learned, relative, rope, alibi or shaw)");
}

}  // namespace attnlab::nn
