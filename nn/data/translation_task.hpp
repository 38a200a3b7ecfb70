// The toy translation of nn/data/translation.hpp made into a task for encoder-decoders (lessons
// 08 and 09): sentences of at most max_train_words words split into train, validation and test by
// distinct source sentence, every split encoded with the training split's word vocabularies, and a
// "longer" split of the sentences longer than any training sentence, for length generalization.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nn/data/batch.hpp"
#include "nn/data/split.hpp"
#include "nn/data/translation.hpp"

namespace attnlab::nn::data {

struct TranslationTaskOptions {
  std::size_t sentences = 30000;       // generated (distinct sources), before the length cut
  std::size_t max_train_words = 10;    // train, validation and test: at most this many source words
  std::size_t per_long_length = 150;   // the longer split keeps at most this many of each length
  std::size_t words_per_class = 0;     // GrammarConfig::words_per_class (0: the whole lexicon)
  SplitFractions fractions = {0.9, 0.05, 0.05};
  std::uint64_t sample_seed = 1, split_seed = 2;  // the sentences drawn; their split
};

struct TranslationTask : EncodedSplits {  // vocabularies; train, validation, test as word ids
  Splits<TranslationPair> pairs;         // the same sentences as text, with their alignments
  std::vector<TranslationPair> longer;   // longer than every training sentence
  EncodedPairs longer_ids;
};

// std::invalid_argument naming the function and the value for no sentences or max_train_words 0,
// and when no sentence is short enough for training.
TranslationTask make_translation_task(const TranslationTaskOptions& o);

// The number of words of a pair (one target word per source word).
inline std::size_t word_count(const TranslationPair& p) { return p.alignment.size(); }

// The words of the shortest and of the longest pair, {fewest, most}; {0, 0} for no pairs.
std::pair<std::size_t, std::size_t> word_range(const std::vector<TranslationPair>& pairs);

// Held-out sentences (validation, test, longer) whose source is also a training source: 0 for a
// task split right.
std::size_t held_out_in_training(const TranslationTask& t);

// Source words of the test and the longer split outside the training vocabulary (<unk> ids).
std::size_t unknown_held_out_words(const TranslationTask& t);

// "suszo=lake gati=every ...": each target word with the source word it translates.
std::string gloss(const TranslationPair& p);

}  // namespace attnlab::nn::data
