// What a person typed, as the characters a character-level model reads (inspect/inspect.hpp).
#include <algorithm>

#include "inspect/inspect.hpp"

namespace attnlab::inspect {

std::vector<std::string> typed_characters(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
    n = std::min(n, text.size() - i);
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

std::vector<std::string> unknown_characters(const std::vector<std::string>& chars, const nn::data::Vocab& v) {
  std::vector<std::string> out;
  for (const std::string& c : chars)
    if (!v.contains(c) && std::find(out.begin(), out.end(), "'" + c + "'") == out.end()) out.push_back("'" + c + "'");
  return out;
}

}  // namespace attnlab::inspect
