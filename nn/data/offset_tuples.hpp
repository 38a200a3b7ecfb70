// The offset-tuple tagging task (lesson 07): at every position i of a random string, the ordered
// tuple of the tokens a few fixed places to the left, y_i = (x[i - o_1], x[i - o_2], ...), as one
// class read as a number in base `base` (x[i - o_1] the most significant digit). One attention head
// returns one mean of the values, so the task asks whether heads can fetch several tokens apart.
#pragma once

#include <cstddef>
#include <vector>

#include "core/array.hpp"
#include "core/random.hpp"
#include "nn/data/tagged.hpp"

namespace attnlab::nn::data {

// n distinct strings of `length` tokens drawn uniformly from 0..base-1, tagged as above; positions
// i below the largest offset, whose tuple would reach before the start, get `no_tag`. Slice it for
// splits that share no string. ShapeError (naming offset_tuples and the values at fault) for base
// outside 2..10, no offsets, an offset of 0 or not below length, or more strings than exist.
Tagged offset_tuples(std::size_t n, std::size_t length, std::size_t base, const std::vector<std::size_t>& offsets,
                     Index no_tag, Generator& gen);

// The number of classes of the task: base^offsets.
std::size_t offset_tuple_classes(std::size_t base, std::size_t offsets);

// Over the tagged positions (targets != no_tag), the share where digit r of the predicted tuple is
// right, r = 0 (the most significant, offset o_1) .. digits - 1: which tokens a tagger fetched.
// ShapeError when predictions and targets differ in shape or no position is tagged.
std::vector<double> tuple_digit_accuracy(const IndexArray& predictions, const IndexArray& targets, std::size_t base,
                                         std::size_t digits, Index no_tag);

}  // namespace attnlab::nn::data
