// The fortunes corpus as characters, for language models (lesson 11): the entries split by entry
// (nn/data/fortunes.hpp), the training entries' character vocabulary, every entry encoded, and
// the training entries end to end as one stream <bos> text <eos> <bos> text <eos> ..., from which
// random windows are drawn for training.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/array.hpp"
#include "core/random.hpp"
#include "nn/data/fortunes.hpp"

namespace attnlab::nn::data {

using Sequences = std::vector<std::vector<Index>>;

struct CharCorpusOptions {
  double held_out_share = 0.05;     // of the entries, for validation and again for test
  std::uint64_t split_seed = 1729;  // the held-out entries are the same in every run
  std::size_t train_entries = 0;    // keep only the first so many of each split; 0: all
  std::size_t held_out_entries = 0;
};

struct CharCorpus {
  FortuneSplits split;
  Vocab vocab;                        // the training entries' characters, after the specials
  Sequences train, validation, test;  // each entry's character ids
  std::vector<Index> stream;          // the training entries as <bos> text <eos>, end to end
};

// The characters a model predicts in these entries: every character and each entry's <eos>.
std::size_t predicted_characters(const Sequences& entries);

// <bos> and the first n - 1 ids of an entry (all of it when shorter): the opening a model reads.
std::vector<Index> opening(const std::vector<Index>& entry, std::size_t n);

// The characters of ids as text: the special tokens dropped, but <unk> shown as '?'.
std::string char_text(const Vocab& vocab, const std::vector<Index>& ids);

// The corpus of these entries. std::invalid_argument naming char_corpus and the value for a
// held-out share outside [0, 0.5) or no training entry left.
CharCorpus char_corpus(const std::vector<Fortune>& entries, const CharCorpusOptions& o = {});

// The same over the installed corpus (read_fortunes(): a DataError when it is missing).
CharCorpus load_char_corpus(const CharCorpusOptions& o = {});

// `batch` windows of `length` ids at uniformly drawn starts s in the stream: inputs
// stream[s .. s + length) and targets stream[s + 1 .. s + length], each (batch, length).
// std::invalid_argument naming random_windows and both sizes when the stream is not longer than
// length + 1.
std::pair<IndexArray, IndexArray> random_windows(const std::vector<Index>& stream, std::size_t batch,
                                                 std::size_t length, Generator& gen);

}  // namespace attnlab::nn::data
