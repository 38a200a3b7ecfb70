// The character GPT of lessons 11 and 12 on the fortunes corpus: the corpus split both read (the
// same held-out entries in every run) and the model they train, so that lesson 12's GPTs differ
// from lesson 11's only in the sizes a lesson chooses and in their key/value heads.
#pragma once

#include <cstddef>
#include <cstdint>

#include "nn/data/char_corpus.hpp"
#include "nn/transformer/causal_lm.hpp"

namespace attnlab::lessons {

constexpr std::uint64_t kFortunesSplitSeed = 1729;  // the held-out entries are the same in every run
constexpr double kFortunesHeldOutShare = 0.05;      // of the entries, for validation and again for test

// The installed fortunes corpus, split by entry with the seed and share above; train_entries and
// held_out_entries keep the first so many of each split (0: all; quick runs take a slice).
// nn::data::load_char_corpus's DataError when the corpus is not installed.
nn::data::CharCorpus load_fortunes_corpus(std::size_t train_entries = 0, std::size_t held_out_entries = 0);

// The sizes a lesson chooses: d_model, query heads, key/value heads (0: as many as heads), layers,
// and the context, which is also the longest input.
struct FortunesGptSize {
  std::size_t d_model = 128, heads = 4, layers = 4, context = 64, kv_heads = 0;
};

// The GPT over a vocabulary of `vocab` ids: pre-norm layers (GPT-2's placement: an identity path
// from output to input), GELU, a feed-forward 4 d_model wide, no dropout (lesson 12's runs read the
// training text little more than once, lesson 11's full run about 8 times with its held-out loss
// still falling at the end: short of steps more than of data), rotary positions
// (a score sees only how far apart two characters are, from the first step; learned absolute
// positions start far smaller than the token embeddings and take hundreds of steps to find the
// previous character) and the output tied to the token embedding. std::invalid_argument naming
// fortunes_gpt_config and the sizes at fault for no vocabulary, layers, heads or context, a
// d_model not split into heads of even width (rotary turns pairs of dimensions), or kv_heads that
// do not divide the heads.
nn::CausalLMConfig fortunes_gpt_config(std::size_t vocab, const FortunesGptSize& size);

}  // namespace attnlab::lessons
