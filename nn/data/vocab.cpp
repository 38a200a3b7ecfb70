#include "nn/data/vocab.hpp"

#include <algorithm>
#include <cctype>
#include <map>

#include "core/error.hpp"

namespace attnlab::nn::data {

std::vector<std::string> char_tokens(const std::string& text) {
  std::vector<std::string> out;
  out.reserve(text.size());
  for (char c : text) out.emplace_back(1, c);
  return out;
}

std::vector<std::string> word_tokens(const std::string& text) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!cur.empty()) out.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(std::move(cur));
  return out;
}

std::vector<std::string> tokenize(const std::string& text, Tokenizer how) {
  return how == Tokenizer::chars ? char_tokens(text) : word_tokens(text);
}

std::string detokenize(const std::vector<std::string>& tokens, Tokenizer how) {
  std::string out;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (how == Tokenizer::words && i) out += ' ';
    out += tokens[i];
  }
  return out;
}

Vocab::Vocab() {
  for (const char* s : {"<pad>", "<bos>", "<eos>", "<unk>"}) add(s);
}

Vocab Vocab::build(const std::vector<std::vector<std::string>>& token_lists, std::size_t min_freq) {
  check(min_freq >= 1, "Vocab::build", "min_freq must be >= 1, got ", min_freq);
  std::map<std::string, std::size_t> counts;  // ordered: ties break alphabetically below
  for (const auto& list : token_lists)
    for (const auto& t : list) ++counts[t];
  std::vector<std::pair<std::string, std::size_t>> kept;
  for (const auto& [tok, n] : counts)
    if (n >= min_freq) kept.emplace_back(tok, n);
  std::stable_sort(kept.begin(), kept.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  Vocab v;
  for (const auto& [tok, n] : kept) v.add(tok);
  return v;
}

Index Vocab::add(const std::string& token) {
  auto it = ids_.find(token);
  if (it != ids_.end()) return it->second;
  const Index id = static_cast<Index>(tokens_.size());
  tokens_.push_back(token);
  ids_.emplace(token, id);
  return id;
}

Index Vocab::id(const std::string& token) const {
  auto it = ids_.find(token);
  return it == ids_.end() ? unk : it->second;
}

const std::string& Vocab::token(Index id) const {
  check(id >= 0 && static_cast<std::size_t>(id) < tokens_.size(), "Vocab::token", "id ", id,
        " out of range for a vocabulary of size ", tokens_.size());
  return tokens_[static_cast<std::size_t>(id)];
}

std::vector<Index> Vocab::encode(const std::vector<std::string>& tokens) const {
  std::vector<Index> out;
  out.reserve(tokens.size());
  for (const auto& t : tokens) out.push_back(id(t));
  return out;
}

std::vector<Index> Vocab::encode(const std::string& text, Tokenizer how) const {
  return encode(tokenize(text, how));
}

std::vector<std::string> Vocab::decode(const std::vector<Index>& ids) const {
  std::vector<std::string> out;
  for (Index i : ids) {
    if (i == eos) break;
    if (i == pad || i == bos) continue;
    out.push_back(token(i));
  }
  return out;
}

std::string Vocab::decode(const std::vector<Index>& ids, Tokenizer how) const {
  return detokenize(decode(ids), how);
}

std::vector<std::string> Vocab::decode_rows(const IndexArray& ids, Tokenizer how) const {
  check(ids.dimension() == 2, "Vocab::decode_rows", "expected a (B, L) id array, got shape ",
        shape_str(ids.shape()));
  const std::size_t B = ids.shape()[0], L = ids.shape()[1];
  std::vector<std::string> out;
  out.reserve(B);
  const Index* p = ids.data();
  for (std::size_t b = 0; b < B; ++b) out.push_back(decode(std::vector<Index>(p + b * L, p + (b + 1) * L), how));
  return out;
}

}  // namespace attnlab::nn::data
