// libFuzzer harness of the fortunes text reader (nn/data/fortunes.hpp): each input is one topic
// file's bytes. parse_fortunes must never throw on text (any bytes are a file someone could
// install) and must keep the promises the header makes of every entry, whatever the bytes:
// valid UTF-8, not empty, no control characters but tabs and newlines, no line ending in a blank,
// no blank line at either edge. Then the vocabulary built from the entries must encode each of
// them to known ids, one per code point.
#include "fuzz/fuzz.hpp"
#include "nn/data/fortunes.hpp"

using namespace attnlab;
using namespace attnlab::nn::data;

namespace {

// Strict UTF-8: no overlongs, no surrogates, nothing past U+10FFFF.
bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    std::size_t n = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xe ? 3 : (b >> 3) == 0x1e ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    std::uint32_t cp = n == 1 ? b : n == 2 ? (b & 0x1f) : n == 3 ? (b & 0x0f) : (b & 0x07);
    for (std::size_t k = 1; k < n; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c >> 6) != 0x2) return false;
      cp = (cp << 6) | (c & 0x3f);
    }
    const std::uint32_t least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n;
  }
  return true;
}

bool clean_lines(const std::string& t) {
  if (t.empty() || t.front() == '\n' || t.back() == '\n') return false;
  for (std::size_t i = 0; i < t.size(); ++i) {
    const auto c = static_cast<unsigned char>(t[i]);
    if ((c < 0x20 && c != '\t' && c != '\n') || c == 0x7f) return false;
    const bool line_end = i + 1 == t.size() || t[i + 1] == '\n';
    if (line_end && (c == ' ' || c == '\t')) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::vector<Fortune> entries = parse_fortunes(fuzz::bytes_of(data, size), "topic");
  for (const Fortune& f : entries) {
    fuzz::require(f.topic == "topic", "every entry carries its file's topic");
    fuzz::require(valid_utf8(f.text), "an entry is valid UTF-8:", f.text);
    fuzz::require(clean_lines(f.text), "an entry is trimmed and free of control characters:", f.text);
    fuzz::require(clean_fortune_text(f.text) == f.text, "cleaning a clean entry changes nothing:", f.text);
    fortune_key(f.text);
  }
  const Vocab vocab = fortune_vocab(entries);
  for (const Fortune& f : entries) {
    const std::vector<Index> ids = encode_fortune(vocab, f.text);
    fuzz::require(ids.size() == fortune_chars(f.text).size(), "one id per character");
    for (Index id : ids)
      fuzz::require(id >= Index(Vocab::num_specials) && std::size_t(id) < vocab.size(),
                    "every character of the entries is in their own vocabulary");
  }
  return 0;
}
