// A tagging data set: sequences of one length, one target per token (the running maximum of a
// digit string, the token k places to the left, ...). No padding is needed: every row is full.
#pragma once

#include <cstddef>
#include <vector>

#include "core/array.hpp"
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

}  // namespace attnlab::nn::data
