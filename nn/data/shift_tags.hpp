// The shift task as tagging (lesson 05): at every position of a string of random digits, the digit
// `shift` places to its left, or the filler '_' for the first `shift` positions:
//
//   input   3 1 4 1 5 9 2 6        (shift 3)
//   target  _ _ _ 3 1 4 1 5
//
// Only position solves it: a model that reads its input as a bag of tokens (attention without
// positions) can only guess among the other tokens, which the bag rule measures.
#pragma once

#include <cstddef>

#include "core/random.hpp"
#include "nn/data/pair.hpp"
#include "nn/data/tagged.hpp"
#include "nn/data/vocab.hpp"

namespace attnlab::nn::data {

struct ShiftTags {
  Vocab vocab;          // the specials, then '_' and the digits 0-9 (11 tags)
  Tagged train, test;   // distinct strings of the training length; none in both
  Tagged test_long;     // held-out strings of the long length, for extrapolation
  Pair example;         // the first test string and its target, as text
  double bag_rule = 0;  // per-token accuracy on `test` of most_frequent_other_tags (tagged.hpp)
};

// n_train + n_test distinct strings of `length` digits (shift_tags draws them first, in one call
// of make_seq_task), then n_test of `long_length`. ShapeError naming shift_tags for a shift of 0 or
// not below length, a long_length below length, or n_train or n_test of 0 (and make_seq_task's
// when fewer distinct strings exist than asked for).
ShiftTags shift_tags(std::size_t shift, std::size_t length, std::size_t long_length, std::size_t n_train,
                     std::size_t n_test, Generator& gen);

}  // namespace attnlab::nn::data
