// The fortune-cookie corpus of the Debian package `fortunes` (with `fortunes-min`, which it
// depends on): about 15,000 English quotations, jokes and verses, 2.5 MB, in some 40 files named
// by topic ("computers", "cookie", "songs-poems", ...) in /usr/share/games/fortunes. Entries are
// separated by lines holding a single '%' (the strfile(1) format); the '.dat' files are strfile's
// indexes and the '.u8' files symbolic links to the same texts, so both are skipped.
//
// What the reader cleans, as fortune(6) would display it on a terminal:
//   - overstrike: "_\bX" (underlined X) and "X\bX" (bold X) read as "X"; "*___\b\b\band*" -> "*and*";
//   - other control characters (bells "\a", stray "\r") are dropped; tabs and newlines are kept;
//   - trailing blanks of each line and blank lines around an entry are dropped; an entry left
//     empty (a file starting with '%', two '%' lines in a row) is no entry;
//   - bytes that are not UTF-8 are read as Latin-1, so the text is always valid UTF-8.
// The text is otherwise as written (case, punctuation, the "-- Author" lines).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/array.hpp"
#include "nn/data/vocab.hpp"

namespace attnlab::nn::data {

struct Fortune {
  std::string text;   // the entry, lines joined with '\n', no trailing newline
  std::string topic;  // the file it came from: "computers"
};

struct FortuneSplits {
  std::vector<Fortune> train, validation, test;
};

// $ATTNLAB_FORTUNES_DIR when set and not empty, else /usr/share/games/fortunes.
std::string fortunes_dir();

// Every entry of every topic file in `dir` (not recursing into folders such as off/), files in
// name order, entries in file order. Throws DataError naming the folder and the Debian package
// `fortunes` when the folder is missing or holds no topic file, and naming the file when one
// cannot be read.
std::vector<Fortune> read_fortunes(const std::string& dir = fortunes_dir());

// One file's text -> its entries (the parsing and cleaning above; `topic` is copied into each).
std::vector<Fortune> parse_fortunes(const std::string& file_text, const std::string& topic);

// One entry's raw lines -> its cleaned text.
std::string clean_fortune_text(const std::string& raw);

// Entries that are the same text up to case, spacing and punctuation share this key (their
// letters and digits, lower-cased; an entry with none keys on its whitespace-collapsed text).
// The corpus holds 15,217 entries of which 226 repeat an earlier one this way, most of them from
// another topic file (218 texts appear under two topics).
std::string fortune_key(const std::string& text);

// Splits by entry: the first of each group of entries with the same fortune_key is kept and
// later ones dropped (so no text is scored that was trained on, not even a reformatted copy, and
// no text carries two topics), the kept ones are shuffled with `seed`, and round(f * n) go to
// validation and to test, the rest to train. Same entries and seed, same splits. ShapeError
// when a fraction is negative or they sum to more than 1.
FortuneSplits split_fortunes(const std::vector<Fortune>& entries, double validation_fraction, double test_fraction,
                             std::uint64_t seed);

// One token per character, a UTF-8 code point ("é" is one token, not two bytes).
std::vector<std::string> fortune_chars(const std::string& text);

// The character vocabulary of `entries` (build it from the training split): the fixed specials
// <pad> = 0, <bos> = 1, <eos> = 2, <unk> = 3, then every character seen at least min_freq times,
// most frequent first, ties in code order. A model that needs more specials (BERT's <mask> and
// <cls>) adds them after this with Vocab::add, so the four fixed ids never move.
Vocab fortune_vocab(const std::vector<Fortune>& entries, std::size_t min_freq = 1);

// The ids of text's characters; characters the vocabulary lacks become <unk>. No <bos>/<eos>.
std::vector<Index> encode_fortune(const Vocab& vocab, const std::string& text);

// The topics present, in name order.
std::vector<std::string> fortune_topics(const std::vector<Fortune>& entries);

}  // namespace attnlab::nn::data
