// A vocabulary: tokens <-> ids, with the four special tokens every seq2seq lesson needs at
// fixed ids, plus the two tokenizers the lessons use (characters, whitespace-separated words).
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/array.hpp"

namespace attnlab::nn::data {

enum class Tokenizer { chars, words };

// One token per byte (the generated tasks are ASCII). Spaces are tokens too.
std::vector<std::string> char_tokens(const std::string& text);
// Split on runs of whitespace; leading/trailing whitespace yields no empty tokens.
std::vector<std::string> word_tokens(const std::string& text);
std::vector<std::string> tokenize(const std::string& text, Tokenizer how);
// Inverse of tokenize for display: chars concatenate, words join with one space.
std::string detokenize(const std::vector<std::string>& tokens, Tokenizer how);

class Vocab {
 public:
  // Fixed ids, so a padded batch built with one vocabulary means the same to every module:
  // the embedding of <pad> and the key-padding mask both rely on pad == 0.
  static constexpr Index pad = 0, bos = 1, eos = 2, unk = 3;
  static constexpr std::size_t num_specials = 4;

  Vocab();  // the four special tokens only

  // Every token seen at least min_freq times, most frequent first, ties alphabetical: the
  // same corpus always gives the same ids. Special-token spellings in the data map to the
  // specials rather than becoming new entries.
  static Vocab build(const std::vector<std::vector<std::string>>& token_lists, std::size_t min_freq = 1);

  Index add(const std::string& token);  // id of token, appending it if new
  std::size_t size() const { return tokens_.size(); }
  bool contains(const std::string& token) const { return ids_.count(token) != 0; }
  Index id(const std::string& token) const;           // <unk> for unknown tokens
  const std::string& token(Index id) const;           // throws ShapeError when out of range
  const std::vector<std::string>& tokens() const { return tokens_; }

  std::vector<Index> encode(const std::vector<std::string>& tokens) const;
  std::vector<Index> encode(const std::string& text, Tokenizer how) const;
  // Stops at the first <eos>, drops <pad> and <bos>; keeps <unk> visible as "<unk>".
  std::vector<std::string> decode(const std::vector<Index>& ids) const;
  std::string decode(const std::vector<Index>& ids, Tokenizer how) const;
  // Each row of a (B, L) id array, decoded as above.
  std::vector<std::string> decode_rows(const IndexArray& ids, Tokenizer how) const;

 private:
  std::vector<std::string> tokens_;
  std::unordered_map<std::string, Index> ids_;
};

}  // namespace attnlab::nn::data
