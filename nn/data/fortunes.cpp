#include "nn/data/fortunes.hpp"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <set>

#include "core/error.hpp"
#include "io/files.hpp"
#include "nn/data/data_error.hpp"
#include "nn/data/split.hpp"

namespace attnlab::nn::data {

namespace {

const char* const kInstall = "install the Debian package fortunes (apt-get install fortunes)";

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Bytes of one UTF-8 code point starting at s[i], or 0 when s[i] does not start a valid one
// (stray continuation byte, overlong form, surrogate, beyond U+10FFFF, cut short).
std::size_t utf8_length(const std::string& s, std::size_t i) {
  const auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned c = b(i);
  std::size_t n = 0;
  unsigned lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) n = 2;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
  else return 0;
  if (i + n > s.size()) return 0;
  if (b(i + 1) < lo || b(i + 1) > hi) return 0;
  for (std::size_t k = 2; k < n; ++k)
    if (b(i + k) < 0x80 || b(i + k) > 0xBF) return 0;
  return n;
}

// The code points of s as strings; a byte that starts no valid sequence is read as Latin-1
// (the older fortune files were Latin-1), so the result is always valid UTF-8.
std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_length(s, i);
    if (n) {
      out.push_back(s.substr(i, n));
      i += n;
    } else {
      const auto c = static_cast<unsigned char>(s[i++]);
      out.push_back({static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))});
    }
  }
  return out;
}

// Non-printing: C0 controls but tab (newlines never reach here), DEL, and the C1 controls
// U+0080..U+009F (UTF-8 C2 80..C2 9F).
bool is_control(const std::string& cp) {
  const auto c = static_cast<unsigned char>(cp[0]);
  if (cp.size() == 1) return (c < 0x20 && c != '\t') || c == 0x7F;
  return cp.size() == 2 && c == 0xC2 && static_cast<unsigned char>(cp[1]) <= 0x9F;
}

// One line as a terminal shows it: a backspace moves back one cell and the next character
// overstrikes that cell; an underscore under a character leaves the character ("_\bX" and
// "X\b_" are both an underlined X), anything else replaces it ("X\bX" is a bold X).
std::string clean_line(const std::string& line) {
  std::vector<std::string> cells;
  std::size_t pos = 0;
  for (std::string& cp : code_points(line)) {
    if (cp == "\b") {
      if (pos > 0) --pos;
      continue;
    }
    if (is_control(cp)) continue;
    if (pos < cells.size()) {
      if (cp != "_") cells[pos] = std::move(cp);
    } else {
      cells.push_back(std::move(cp));
    }
    ++pos;
  }
  std::string out;
  for (const auto& c : cells) out += c;
  while (!out.empty() && (out.back() == ' ' || out.back() == '\t')) out.pop_back();
  return out;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool is_folder(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// Regular files (symbolic links followed) in dir that are topic files, in name order.
std::vector<std::string> topic_files(const std::string& dir) {
  std::vector<std::string> names;
  DIR* d = ::opendir(dir.c_str());
  if (!d) throw DataError("read_fortunes: cannot list the folder " + dir + "; " + kInstall);
  while (const dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.empty() || name[0] == '.' || ends_with(name, ".dat") || ends_with(name, ".u8")) continue;
    struct stat st;
    if (::stat((dir + "/" + name).c_str(), &st) == 0 && S_ISREG(st.st_mode)) names.push_back(name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

std::string fortunes_dir() {
  const char* env = std::getenv("ATTNLAB_FORTUNES_DIR");
  return env && *env ? env : "/usr/share/games/fortunes";
}

std::string clean_fortune_text(const std::string& raw) {
  std::vector<std::string> lines;
  for (const auto& line : split_lines(raw)) lines.push_back(clean_line(line));
  std::size_t first = 0, last = lines.size();
  while (first < last && lines[first].empty()) ++first;
  while (last > first && lines[last - 1].empty()) --last;
  std::string out;
  for (std::size_t i = first; i < last; ++i) {
    if (i > first) out += '\n';
    out += lines[i];
  }
  return out;
}

std::vector<Fortune> parse_fortunes(const std::string& file_text, const std::string& topic) {
  std::vector<Fortune> out;
  std::string raw;
  const auto finish = [&] {
    std::string text = clean_fortune_text(raw);
    if (!text.empty()) out.push_back({std::move(text), topic});
    raw.clear();
  };
  for (std::string line : split_lines(file_text)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line == "%") {
      finish();
    } else {
      raw += line;
      raw += '\n';
    }
  }
  finish();
  return out;
}

std::vector<Fortune> read_fortunes(const std::string& dir) {
  if (!is_folder(dir))
    throw DataError("read_fortunes: no folder " + dir + " (the fortune-cookie corpus); " + kInstall);
  const std::vector<std::string> files = topic_files(dir);
  if (files.empty())
    throw DataError("read_fortunes: the folder " + dir + " holds no fortune files (only '.dat' indexes, " +
                    "'.u8' links or nothing); " + kInstall);
  std::vector<Fortune> out;
  for (const auto& name : files) {
    std::string text;
    try {
      text = read_file(dir + "/" + name, "read_fortunes");
    } catch (const IoError& e) {
      throw DataError(std::string(e.what()) + "; " + kInstall);
    }
    for (auto& f : parse_fortunes(text, name)) out.push_back(std::move(f));
  }
  return out;
}

std::string fortune_key(const std::string& text) {
  std::string key;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) key += static_cast<char>(std::tolower(u));
    else if (u >= 0x80) key += c;  // non-ASCII letters count as letters
  }
  if (!key.empty()) return key;
  std::string collapsed;  // no letters at all (ASCII art): the text with whitespace collapsed
  bool space = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = !collapsed.empty();
    } else {
      if (space) collapsed += ' ';
      collapsed += c;
      space = false;
    }
  }
  return collapsed;
}

FortuneSplits split_fortunes(const std::vector<Fortune>& entries, double validation_fraction, double test_fraction,
                             std::uint64_t seed) {
  check(validation_fraction >= 0 && test_fraction >= 0 && validation_fraction + test_fraction <= 1.0,
        "split_fortunes", "fractions must be >= 0 and leave a non-negative training share, got validation ",
        validation_fraction, " and test ", test_fraction);
  std::vector<std::string> keys;
  keys.reserve(entries.size());
  for (const auto& e : entries) keys.push_back(fortune_key(e.text));
  const double train = std::max(0.0, 1.0 - validation_fraction - test_fraction);
  return take_splits<Fortune, FortuneSplits>(entries,
                                             split_indices(keys, {train, validation_fraction, test_fraction}, seed));
}

std::vector<std::string> fortune_chars(const std::string& text) { return code_points(text); }

Vocab fortune_vocab(const std::vector<Fortune>& entries, std::size_t min_freq) {
  std::vector<std::vector<std::string>> lists;
  lists.reserve(entries.size());
  for (const auto& e : entries) lists.push_back(fortune_chars(e.text));
  return Vocab::build(lists, min_freq);
}

std::vector<Index> encode_fortune(const Vocab& vocab, const std::string& text) {
  return vocab.encode(fortune_chars(text));
}

std::vector<std::string> fortune_topics(const std::vector<Fortune>& entries) {
  std::set<std::string> topics;
  for (const auto& e : entries) topics.insert(e.topic);
  return {topics.begin(), topics.end()};
}

}  // namespace attnlab::nn::data
