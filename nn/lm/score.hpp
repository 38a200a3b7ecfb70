// Held-out scoring of a causal language model, token by token, on the same tokens a counted
// n-gram model scores (KneserNey::token_nats): each sequence read as <bos> s <eos>, every token
// after <bos> predicted, so the two models' numbers compare one to one.
#pragma once

#include <cstddef>
#include <vector>

#include "core/array.hpp"
#include "nn/transformer/causal_lm.hpp"

namespace attnlab::nn::lm {

// -log P (nats) of s_1 .. s_m and <eos> of every sequence, in order, under `model` (eval mode, no
// tape). A sequence whose <bos> s fits in `window` positions is one forward pass; a longer one is
// read in windows of `window` tokens starting every window / 2 tokens: the first scores all its
// positions, each later one only its second half, so every token is scored exactly once, with all
// the tokens before it or at least window / 2 of them as context. Windows of several sequences go
// through the model `batch` at a time, padded on the right (harmless: position t sees 0 .. t only).
// ShapeError naming causal_lm_token_nats for a window below 2 or past the model's max_length with
// learned positions, or a token outside the vocabulary.
template <class T>
std::vector<double> causal_lm_token_nats(CausalLM<T>& model, const std::vector<std::vector<Index>>& sequences, Index bos,
                                         Index eos, std::size_t window, std::size_t batch = 32);

// One sequence as a batch of one, (1, n): what a model's forward takes.
IndexArray as_row(const std::vector<Index>& ids);

// The mean of a list of per-token nats (0 for an empty list).
double mean_of(const std::vector<double>& nats);

}  // namespace attnlab::nn::lm
