// The fortunes corpus reader: the real files (entry counts against strfile's own '.dat' indexes),
// the cleaning of overstrike and control characters, empty entries, splits (by entry, disjoint,
// no duplicate text across them, seeded), the character vocabulary, and a missing package.
#include <doctest/doctest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "helpers.hpp"
#include "io/files.hpp"
#include "nn/data/data_error.hpp"
#include "nn/data/fortunes.hpp"

using namespace attnlab;
using namespace attnlab::nn::data;
using attnlab::testing::contains;
using attnlab::testing::error_of;
using attnlab::testing::TempDir;

namespace {

// strfile(1)'s index: big-endian version, number of strings, longest, shortest, flags, delimiter.
std::uint32_t dat_count(const std::string& path) {
  const std::string b = read_file(path);
  REQUIRE(b.size() >= 24);
  std::uint32_t n = 0;
  for (int k = 4; k < 8; ++k) n = (n << 8) | static_cast<unsigned char>(b[k]);
  return n;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
}

std::set<std::string> keys_of(const std::vector<Fortune>& v) {
  std::set<std::string> s;
  for (const auto& f : v) s.insert(fortune_key(f.text));
  return s;
}

const std::vector<Fortune>& corpus() {
  static const std::vector<Fortune> all = read_fortunes("/usr/share/games/fortunes");
  return all;
}

}  // namespace

TEST_CASE("fortunes: the real corpus, each file's entry count as strfile's index has it") {
  const auto& all = corpus();
  CHECK(all.size() > 15000);
  const auto topics = fortune_topics(all);
  CHECK(topics.size() >= 40);
  CHECK(std::count(topics.begin(), topics.end(), "computers") == 1);
  std::map<std::string, std::uint32_t> per_topic;
  std::size_t chars = 0;
  for (const auto& f : all) {
    ++per_topic[f.topic];
    chars += f.text.size();
    REQUIRE(!f.text.empty());
    CHECK(f.text.find('\b') == std::string::npos);
    CHECK(f.text.find('\a') == std::string::npos);
    CHECK(f.text.back() != '\n');
    CHECK(f.text.find("\n%\n") == std::string::npos);
  }
  CHECK(chars > 2'400'000);
  for (const auto& t : topics) {
    INFO("topic ", t);
    CHECK(per_topic[t] == dat_count("/usr/share/games/fortunes/" + t + ".dat"));
  }
  CHECK(topics.end() == std::find_if(topics.begin(), topics.end(), [](const std::string& t) {
          return t.size() > 4 && (t.substr(t.size() - 4) == ".dat" || t.substr(t.size() - 3) == ".u8");
        }));
  // The first entry of the file 'fortunes', and an underlined word in 'art' (line 165).
  const auto first = std::find_if(all.begin(), all.end(), [](const Fortune& f) { return f.topic == "fortunes"; });
  REQUIRE(first != all.end());
  CHECK(first->text == "A day for firm decisions!!!!!  Or is it?");
  CHECK(std::any_of(all.begin(), all.end(), [](const Fortune& f) {
    return contains(f.text, "whiter teeth *and* fresher breath.");
  }));
}

TEST_CASE("fortunes: overstrike, control characters, blanks and encodings are cleaned") {
  CHECK(clean_fortune_text("whiter teeth *___\b\b\band* fresher") == "whiter teeth *and* fresher");
  CHECK(clean_fortune_text("_\bI and B\bBold") == "I and Bold");  // underline, bold
  CHECK(clean_fortune_text("x\b_") == "x");                          // underscore after the letter
  CHECK(clean_fortune_text("\bstart") == "start");                   // backspace at column 0
  CHECK(clean_fortune_text("logout\a\a") == "logout");
  CHECK(clean_fortune_text("\n\n  a  \t\n\n\tb\n\n") == "  a\n\n\tb");  // blank lines around go, inside stay
  CHECK(clean_fortune_text("caf\xc3\xa9") == "caf\xc3\xa9");              // UTF-8 kept
  CHECK(clean_fortune_text("caf\xe9") == "caf\xc3\xa9");                  // Latin-1 read as Latin-1
  CHECK(clean_fortune_text("a\xc2\x80" "b") == "ab");                    // a C1 control
  CHECK(clean_fortune_text("\xed\xa0\x80") == "\xc3\xad\xc2\xa0");        // a surrogate is not UTF-8
}

TEST_CASE("fortunes: empty entries are no entries; '%' lines only end entries") {
  const auto v = parse_fortunes("%\nfirst\n%\n%\n   \n\t\n%\nsecond\nline\r\n%\r\n50% off\n %\n", "t");
  REQUIRE(v.size() == 3);
  CHECK(v[0].text == "first");
  CHECK(v[1].text == "second\nline");
  CHECK(v[2].text == "50% off\n %");
  CHECK(v[0].topic == "t");
  const auto w = parse_fortunes("50% off\n %\nlast, no newline", "t");
  REQUIRE(w.size() == 1);
  CHECK(w[0].text == "50% off\n %\nlast, no newline");
  CHECK(parse_fortunes("", "t").empty());
  CHECK(parse_fortunes("%\n%\n", "t").empty());
}

TEST_CASE("fortunes: a folder of files; '.dat', '.u8', hidden files and subfolders are skipped") {
  TempDir dir;
  write_text(dir / "b", "one\n%\ntwo\n");
  write_text(dir / "a", "zero\n");
  write_text(dir / "a.dat", "not text");
  write_text(dir / ".hidden", "secret\n");
  REQUIRE(::symlink("a", (dir / "a.u8").c_str()) == 0);
  REQUIRE(::mkdir((dir / "off").c_str(), 0755) == 0);
  write_text(dir / "off/rude", "rude\n");
  const auto v = read_fortunes(dir.path);
  REQUIRE(v.size() == 3);
  CHECK(v[0].text == "zero");
  CHECK(v[0].topic == "a");
  CHECK(v[2].text == "two");
  CHECK(v[2].topic == "b");
  CHECK(fortune_topics(v) == std::vector<std::string>{"a", "b"});
}

TEST_CASE("fortunes: a missing or empty folder names the Debian package") {
  TempDir dir;
  std::string msg = error_of<DataError>([&] { read_fortunes(dir / "nowhere"); });
  CHECK(contains(msg, dir / "nowhere"));
  CHECK(contains(msg, "apt-get install fortunes"));
  write_text(dir / "x.dat", "index only");
  msg = error_of<DataError>([&] { read_fortunes(dir.path); });
  CHECK(contains(msg, "holds no fortune files"));
  CHECK(contains(msg, "fortunes"));
  write_text(dir / "plain", "");
  CHECK(read_fortunes(dir.path).empty());  // a topic file without entries is no error

  ::setenv("ATTNLAB_FORTUNES_DIR", (dir / "elsewhere").c_str(), 1);
  CHECK(fortunes_dir() == dir / "elsewhere");
  CHECK_THROWS_AS(read_fortunes(), DataError);
  ::setenv("ATTNLAB_FORTUNES_DIR", "", 1);
  CHECK(fortunes_dir() == "/usr/share/games/fortunes");
  ::unsetenv("ATTNLAB_FORTUNES_DIR");
  CHECK(fortunes_dir() == "/usr/share/games/fortunes");
}

TEST_CASE("fortunes: duplicate keys ignore case, spacing and punctuation") {
  CHECK(fortune_key("Hello,  World!\n\t-- Me") == fortune_key("hello world -- me"));
  CHECK(fortune_key("Hello world") != fortune_key("Hello word"));
  CHECK(fortune_key("caf\xc3\xa9") != fortune_key("cafe"));
  CHECK(fortune_key("  /\\_/\\\n ( - - )") == "/\\_/\\ ( - - )");  // no letters: collapsed text
  CHECK(fortune_key("-- --") != fortune_key("----"));
}

TEST_CASE("fortunes: splits by entry, disjoint also by text, seeded") {
  const auto& all = corpus();
  const FortuneSplits s = split_fortunes(all, 0.1, 0.1, 7);
  const std::set<std::string> distinct = keys_of(all);
  CHECK(distinct.size() < all.size());  // the corpus does hold duplicates
  CHECK(s.train.size() + s.validation.size() + s.test.size() == distinct.size());
  CHECK(s.validation.size() == static_cast<std::size_t>(std::llround(0.1 * distinct.size())));
  CHECK(s.test.size() == s.validation.size());
  const auto tr = keys_of(s.train), va = keys_of(s.validation), te = keys_of(s.test);
  CHECK(tr.size() == s.train.size());  // no text twice within a split either
  for (const auto& k : va) CHECK(tr.count(k) == 0);
  for (const auto& k : te) CHECK(tr.count(k) == 0);
  for (const auto& k : te) CHECK(va.count(k) == 0);

  const FortuneSplits again = split_fortunes(all, 0.1, 0.1, 7);
  REQUIRE(again.test.size() == s.test.size());
  for (std::size_t i = 0; i < s.test.size(); ++i) CHECK(again.test[i].text == s.test[i].text);
  const FortuneSplits other = split_fortunes(all, 0.1, 0.1, 8);
  std::size_t same = 0;
  for (std::size_t i = 0; i < s.test.size(); ++i) same += other.test[i].text == s.test[i].text;
  CHECK(same < s.test.size() / 10);

  // A reformatted copy never crosses: three copies of one text land in the same split.
  std::vector<Fortune> small;
  for (int i = 0; i < 40; ++i) small.push_back({"entry number " + std::to_string(i), "t"});
  small.push_back({"Entry  number 3!", "u"});
  small.push_back({"entry number 3", "t"});
  const FortuneSplits t = split_fortunes(small, 0.25, 0.25, 1);
  CHECK(t.train.size() + t.validation.size() + t.test.size() == 40);
  std::size_t copies = 0;
  for (const auto* part : {&t.train, &t.validation, &t.test})
    for (const auto& f : *part) copies += fortune_key(f.text) == fortune_key("entry number 3");
  CHECK(copies == 1);
  CHECK(split_fortunes(small, 0, 0, 1).train.size() == 40);
  CHECK(split_fortunes({}, 0.1, 0.1, 1).train.empty());
}

TEST_CASE("fortunes: bad split fractions name split_fortunes") {
  const std::vector<Fortune> v = {{"a", "t"}, {"b", "t"}};
  CHECK(contains(error_of([&] { split_fortunes(v, -0.1, 0.1, 1); }), "split_fortunes"));
  CHECK(contains(error_of([&] { split_fortunes(v, 0.6, 0.5, 1); }), "split_fortunes"));
  CHECK(split_fortunes(v, 0.5, 0.5, 1).train.empty());
}

TEST_CASE("fortunes: the character vocabulary keeps the fixed specials and reads code points") {
  CHECK(fortune_chars("a\xc3\xa9z") == std::vector<std::string>{"a", "\xc3\xa9", "z"});
  const std::vector<Fortune> v = {{"abba", "t"}, {"b\xc3\xa9\tc", "t"}};
  const Vocab vocab = fortune_vocab(v);
  CHECK(vocab.id("<pad>") == Vocab::pad);
  CHECK(vocab.id("<unk>") == Vocab::unk);
  CHECK(vocab.size() == Vocab::num_specials + 5);  // a b c \t é
  CHECK(vocab.token(Vocab::num_specials) == "b");  // most frequent first
  const auto ids = encode_fortune(vocab, "b\xc3\xa9q");
  REQUIRE(ids.size() == 3);
  CHECK(ids[2] == Vocab::unk);
  CHECK(vocab.decode(encode_fortune(vocab, "cab\xc3\xa9"), Tokenizer::chars) == "cab\xc3\xa9");
  CHECK(fortune_vocab(v, 3).size() == Vocab::num_specials + 1);  // only 'b' is seen 3 times

  // The real training split: a few hundred characters at most, every held-out text encodes.
  const FortuneSplits s = split_fortunes(corpus(), 0.1, 0.1, 7);
  const Vocab real = fortune_vocab(s.train);
  CHECK(real.size() > 90);
  CHECK(real.size() < 200);
  CHECK(real.token(Vocab::num_specials) == " ");
  std::size_t unk = 0, total = 0;
  for (const auto& f : s.test)
    for (Index id : encode_fortune(real, f.text)) unk += id == Vocab::unk, ++total;
  CHECK(unk * 10000 < total);  // unseen characters are rare
}
