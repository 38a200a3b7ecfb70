// A tagging data set: sequences of one length, one target per token (the running maximum of a
// digit string, the token k places to the left, ...). No padding is needed: every row is full.
#pragma once

#include <cstddef>
#include <vector>

#include "core/array.hpp"
#include "core/random.hpp"
#include "nn/data/pair.hpp"
#include "nn/data/vocab.hpp"

namespace attnlab::nn::data {

struct Tagged {
  IndexArray inputs, targets;  // (N, L) each

  std::size_t size() const { return inputs.shape()[0]; }
  std::size_t length() const { return inputs.shape()[1]; }
  // These rows, in this order: a batch. ShapeError on a row out of range.
  Tagged rows(const std::vector<std::size_t>& which) const;
  // Rows [from, to): a split.
  Tagged slice(std::size_t from, std::size_t to) const;
};

// Pairs whose source and target have one length, encoded character by character (Tokenizer::chars):
// the tagging form of the copy, sort and shift tasks. ShapeError on a ragged or mismatched pair.
Tagged tag_pairs(const std::vector<Pair>& pairs, const Vocab& vocab);

// n distinct strings of `length` random digits (ids 0..9), each tagged at every position with the
// largest digit so far: 3 1 4 1 5 9 2 6 -> 3 3 4 4 5 9 9 9. Slice it for a training and a held-out
// set that share no string. ShapeError when n is 0, length is 0, or fewer than n strings exist.
Tagged running_max_digits(std::size_t n, std::size_t length, Generator& gen);

// What a tagger that sees only the bag of the other tokens could answer with one simple rule: at
// every position of inputs (N, L), the most frequent token among the other L - 1 positions (the
// lowest id on ties). A baseline for tasks that need positions. ShapeError on a token outside
// [0, vocab_size) or a sequence shorter than 2.
IndexArray most_frequent_other_tags(const IndexArray& inputs, std::size_t vocab_size);

}  // namespace attnlab::nn::data
