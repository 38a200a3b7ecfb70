// A causal language model read position by position: the held-out loss at each position of a
// window (teacher forcing made visible: one forward pass scores every position, each from its own
// past), the same for a counted n-gram model on the same characters, and how far a change to the
// input moves the logits at each position (the causal mask checked: nothing at or before t may move
// when only tokens after t change).
#pragma once

#include <cstddef>
#include <vector>

#include "core/array.hpp"
#include "nn/lm/kneser_ney.hpp"
#include "nn/transformer/causal_lm.hpp"

namespace attnlab::nn::lm {

// The first `length` tokens of every sequence at least that long, in order: the openings below.
std::vector<std::vector<Index>> openings(const std::vector<std::vector<Index>>& sequences, std::size_t length);

// Rows first .. first + count - 1 of `openings` (each L tokens long), read after <bos>: row r is
// <bos> o_r[0] .. o_r[L - 2], a (count, L) array whose position t predicts o_r[t]. ShapeError naming
// after_bos when the rows are out of range, empty or of different lengths.
IndexArray after_bos(const std::vector<std::vector<Index>>& openings, std::size_t first, std::size_t count, Index bos);

// The mean -log P (nats) of o[t] given <bos> o[0 .. t), at each position t of L, over every opening
// (each L tokens long, at least one), `batch` openings a forward pass (eval mode, no tape).
// ShapeError naming causal_lm_nats_by_position for no openings, openings of different lengths, a
// length past the model's max_length, a batch of 0, or a model in training mode.
template <class T>
std::vector<double> causal_lm_nats_by_position(CausalLM<T>& model, const std::vector<std::vector<Index>>& openings,
                                               Index bos, std::size_t batch = 100);

// The same under the counted model of `order` (1 .. kn.max_order()), from the same contexts: each
// opening read as a (cut) sequence, its <eos> not counted. ShapeError naming
// kneser_ney_nats_by_position as above, or for an order out of range.
std::vector<double> kneser_ney_nats_by_position(const KneserNey& kn, const std::vector<std::vector<Index>>& openings,
                                                std::size_t order);

// For two inputs a and b of the same length n: at each position t, the largest |logit_a - logit_b|
// over the vocabulary (eval mode, no tape). With a causal mask, positions before the first token
// where a and b differ give exactly 0. ShapeError naming logit_change_by_position for inputs empty
// or of different lengths.
template <class T>
std::vector<double> logit_change_by_position(CausalLM<T>& model, const std::vector<Index>& a, const std::vector<Index>& b);

// Fed through the KV cache one token at a time (forward_cached), against one forward over all of
// `ids`: the largest difference of any logit. Float rounding only, when the cache is right.
// ShapeError naming cache_max_diff for empty ids or a model in training mode.
template <class T>
double cache_max_diff(CausalLM<T>& model, const std::vector<Index>& ids);

}  // namespace attnlab::nn::lm
