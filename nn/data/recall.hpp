// Multi-query associative recall (after Arora et al. 2023, "Zoology"), a long-sequence task that
// exact attention solves in one layer and that shows what each approximation of it loses.
//
// A sequence of `length` tokens. Each token shows a key id and a value id. The first half holds
// `pairs` facts "key k has value v" (distinct keys) at random positions; the second half asks for
// each of them once, at random positions and in random order: a query token shows the key and no
// value. Every other token is a filler (key id `keys`, value id `values`). The target of a query is
// the value of its key; nothing is asked elsewhere (kNotAsked). Answering needs a lookup by
// content across up to the whole sequence: the fact can be anywhere in the first half.
//
//   position:  0        ...   p     ...   L/2    ...    q      ...  L-1
//   key:       filler         k            filler        k
//   value:     none           v            none          none
//   target:    -              -            -             v
#pragma once

#include <cstddef>
#include <vector>

#include "core/array.hpp"
#include "core/random.hpp"

namespace attnlab::nn::data {

inline constexpr Index kNotAsked = -100;  // the targets' ignore index

struct RecallConfig {
  std::size_t length = 512;  // tokens per sequence
  std::size_t keys = 64;     // key vocabulary (id `keys` is the filler)
  std::size_t values = 16;   // value vocabulary (id `values` is "no value")
  std::size_t pairs = 32;    // facts per sequence, each asked once
};

struct Recall {
  IndexArray keys, values, targets;  // (N, length) each

  std::size_t size() const { return keys.shape()[0]; }
  std::size_t length() const { return keys.shape()[1]; }
  // These rows, in this order: a batch. ShapeError on a row out of range.
  Recall rows(const std::vector<std::size_t>& which) const;
};

// n sequences. ShapeError when the pairs do not fit (pairs > keys, or pairs > length / 2) or a
// size is zero.
Recall make_recall(const RecallConfig& config, std::size_t n, Generator& gen);

}  // namespace attnlab::nn::data
