#include "nn/data/translation_task.hpp"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <unordered_set>

#include "nn/data/vocab.hpp"

namespace attnlab::nn::data {

TranslationTask make_translation_task(const TranslationTaskOptions& o) {
  if (o.sentences == 0) throw std::invalid_argument("make_translation_task: sentences must be positive, got 0");
  if (o.max_train_words == 0)
    throw std::invalid_argument("make_translation_task: max_train_words must be positive, got 0");
  const ToyTranslation language;  // one language (lexicon seed) for every run
  Generator gen(o.sample_seed);
  GrammarConfig grammar;
  grammar.words_per_class = o.words_per_class;
  std::vector<TranslationPair> in_range;
  std::map<std::size_t, std::size_t> kept;
  TranslationTask t;
  for (const auto& p : make_translation(language, o.sentences, gen, grammar)) {
    if (word_count(p) <= o.max_train_words) in_range.push_back(p);
    else if (kept[word_count(p)]++ < o.per_long_length) t.longer.push_back(p);
  }
  if (in_range.empty())
    throw std::invalid_argument("make_translation_task: none of the " + std::to_string(o.sentences) +
                                " sentences has at most max_train_words = " + std::to_string(o.max_train_words) +
                                " words");
  t.pairs = split_examples(in_range, o.fractions, o.split_seed);
  static_cast<EncodedSplits&>(t) = encode_splits(t.pairs, Tokenizer::words, Tokenizer::words);
  t.longer_ids = encode_pairs(t.longer, t.source_vocab, Tokenizer::words, t.target_vocab, Tokenizer::words);
  return t;
}

std::pair<std::size_t, std::size_t> word_range(const std::vector<TranslationPair>& pairs) {
  if (pairs.empty()) return {0, 0};
  std::size_t lo = word_count(pairs.front()), hi = lo;
  for (const TranslationPair& p : pairs) lo = std::min(lo, word_count(p)), hi = std::max(hi, word_count(p));
  return {lo, hi};
}

std::size_t held_out_in_training(const TranslationTask& t) {
  std::unordered_set<std::string> seen;
  for (const TranslationPair& p : t.pairs.train) seen.insert(p.source);
  std::size_t overlap = 0;
  for (const auto* split : {&t.pairs.validation, &t.pairs.test, &t.longer})
    for (const TranslationPair& p : *split) overlap += seen.count(p.source);
  return overlap;
}

std::size_t unknown_held_out_words(const TranslationTask& t) {
  std::size_t unknown = 0;
  for (const auto* e : {&t.test, &t.longer_ids})
    for (const Sequence& s : e->source) unknown += std::size_t(std::count(s.begin(), s.end(), Vocab::unk));
  return unknown;
}

std::string gloss(const TranslationPair& p) {
  const std::vector<std::string> s = word_tokens(p.source), t = word_tokens(p.target);
  if (t.size() != p.alignment.size())
    throw std::invalid_argument("gloss: the target has " + std::to_string(t.size()) + " words but the alignment " +
                                std::to_string(p.alignment.size()));
  std::string out;
  for (std::size_t j = 0; j < t.size(); ++j) {
    const std::size_t i = std::size_t(p.alignment[j]);
    if (i >= s.size())
      throw std::invalid_argument("gloss: target word " + std::to_string(j) + " aligns to source word " +
                                  std::to_string(i) + " of " + std::to_string(s.size()));
    out += (j ? " " : "") + t[j] + "=" + s[i];
  }
  return out;
}

}  // namespace attnlab::nn::data
