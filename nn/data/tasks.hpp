// The algorithmic tasks: copy, reverse, sort or shift a random string over an alphabet. Shift keeps
// the length (target[i] = source[i - shift], the filler before that): a tagging task.
// Character-level: tokenize both sides with Tokenizer::chars.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/random.hpp"
#include "nn/data/pair.hpp"

namespace attnlab::nn::data {

enum class SeqTask { copy, reverse, sort, shift };
const char* seq_task_name(SeqTask task);  // "copy", "reverse", "sort", "shift"

struct SeqTaskConfig {
  SeqTask task = SeqTask::copy;
  std::string alphabet = "0123456789";  // distinct characters; sort follows this order
  std::size_t min_len = 1, max_len = 10;
  std::size_t shift = 1;                // shift: how many places to the right
  char filler = '_';                    // shift: the target's first `shift` characters (not in the alphabet)
};

// Apply the task to one source string (sort ranks characters by their place in the alphabet).
std::string seq_task_target(const SeqTaskConfig& cfg, const std::string& source);

// n examples with distinct sources (lengths uniform in [min_len, max_len], characters uniform).
// Throws ShapeError when fewer than n distinct strings exist, or the config is malformed.
std::vector<Pair> make_seq_task(const SeqTaskConfig& cfg, std::size_t n, Generator& gen);

}  // namespace attnlab::nn::data
