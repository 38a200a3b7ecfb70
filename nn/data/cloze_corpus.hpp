// The fortunes corpus as BERT's lessons read it (14 and 15): entries split by entry, a character
// vocabulary of the training entries with [MASK] and [CLS] appended, and each split as one stream
// of character ids (every entry followed by <eos>, BERT's [SEP]); plus the topic-balanced entry
// sets and padded batches of whole entries that fine-tuning classifies.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/allowed.hpp"
#include "core/array.hpp"
#include "core/random.hpp"
#include "nn/data/fortunes.hpp"
#include "nn/data/masked_windows.hpp"
#include "nn/data/vocab.hpp"

namespace attnlab::nn::data {

struct ClozeCorpus {
  FortuneSplits split;
  Vocab vocab;   // the characters of the training entries, then <mask> and <cls>
  ClozeIds ids;  // [CLS], [MASK] and the characters [first, end)
  std::vector<Index> train, validation, test;  // each entry's characters, then <eos>
};

// The splits' streams and the vocabulary of split.train. std::invalid_argument naming
// cloze_corpus when the training split is empty.
ClozeCorpus cloze_corpus(FortuneSplits split);

// [CLS], the text's characters (unknown ones as <unk>), <eos>.
std::vector<Index> entry_ids(const ClozeCorpus& c, const std::string& text);

// The first entry of `entries` on one line whose text has between lo and hi bytes; the first entry
// when none has (std::invalid_argument naming one_line_entry when there are no entries).
const Fortune& one_line_entry(const std::vector<Fortune>& entries, std::size_t lo, std::size_t hi);

// Entries with a topic label, [CLS] in front: the same number of every topic (the rarest topic's
// count, at most `cap` when cap > 0), the first ones of each in the split's order, interleaved
// topic by topic. Labels are the topics' places in `topics`.
struct TopicSet {
  std::vector<std::vector<Index>> entries;  // [CLS] characters <eos>, uncut
  IndexArray labels;
  std::size_t size() const { return entries.size(); }
};
// std::invalid_argument naming topic_set and the topic when a topic has no entry in the split.
TopicSet topic_set(const ClozeCorpus& c, const std::vector<Fortune>& split, const std::vector<std::string>& topics,
                   std::size_t cap = 0);

// `per_topic` entries of each of the `topics` labels of a set, drawn at random with `seed`,
// interleaved topic by topic as topic_set's are: fewer labels for the same task. The draws are
// nested: with one seed, the entries of a smaller subset are all in every larger one (each topic's
// entries are shuffled once and the first `per_topic` taken). std::invalid_argument naming
// topic_subset when per_topic is 0 or more than some topic has, or a label lies outside [0, topics).
TopicSet topic_subset(const TopicSet& s, std::size_t topics, std::size_t per_topic, std::uint64_t seed);

// A batch of entries cut to the context: [CLS], then `context` - 1 of the tokens after it (a random
// window when `crop` is given and the entry is longer, its beginning otherwise), padded to the
// longest row with id 0.
struct TopicBatch {
  IndexArray ids;
  Allowed real;
  IndexArray labels;
};
// std::invalid_argument naming topic_batch when a row is out of range or the context is below 2.
TopicBatch topic_batch(const TopicSet& s, const std::vector<std::size_t>& rows, std::size_t context, Generator* crop);

// Each entry's character frequencies over the tokens a model with this context reads from its
// beginning, between [CLS] and the last token read (an uncut entry's <eos>), one row per entry,
// `vocab_size` columns summing to 1 (0 for an entry with no such token).
Array<float> character_frequencies(const TopicSet& s, std::size_t vocab_size, std::size_t context);

}  // namespace attnlab::nn::data
