// A toy translation task whose word order differs from the source's, so attention alignments
// cross. The source is English-like (SVO, adjectives before nouns); the target is an invented
// SOV language with postpositions in which every noun phrase is mirrored:
//
//   source: the big red dog quickly chases two cats near my house
//   target: <dog> <red> <big> <the>  <house> <my> <near>  <cat+PL> <two>  <quickly> <chases>
//           subject NP                 postpositional phrase   object NP    adverb    verb last
//
// Each source word becomes exactly one target word, so the true alignment is a permutation;
// it is exposed with every pair so a lesson can score attention maps against it. Target words
// are invented from syllables with a seeded generator (same seed, same language).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/array.hpp"
#include "core/random.hpp"
#include "nn/data/pair.hpp"

namespace attnlab::nn::data {

// determiner: goes with either number ("the", "my"); singular_/plural_determiner: one only.
enum class WordClass { determiner, singular_determiner, plural_determiner, noun, adjective, verb, adverb, preposition };

struct LexEntry {
  WordClass cls;
  std::string source;         // lemma: "dog", "chase", "the"
  std::string source_marked;  // plural noun "dogs" / 3rd-person verb "chases"; empty otherwise
  std::string target;         // invented word
  std::string target_marked;  // plural noun (target + plural suffix); verbs do not agree; empty otherwise
};

struct TranslationPair : Pair {
  std::vector<Index> alignment;  // alignment[j] = position of the source word target word j translates
};

struct GrammarConfig {
  std::size_t max_adjectives = 2;  // per noun phrase, distinct
  double p_adjective = 0.4;        // chance of each further adjective, up to max_adjectives
  double p_plural = 0.3;
  double p_adverb = 0.3;
  double p_prepositional = 0.4;
  // > 0: only the first n words of each word class are drawn (a vocabulary small enough for a
  // model to learn in a few hundred steps); 0: the whole lexicon.
  std::size_t words_per_class = 0;
};

class ToyTranslation {
 public:
  explicit ToyTranslation(std::uint64_t lexicon_seed = 20240601);

  const std::vector<LexEntry>& lexicon() const { return lexicon_; }
  std::size_t num_source_forms() const { return dictionary_.size(); }  // distinct source word spellings
  // Word-by-word dictionary ("dogs" -> the plural target noun); ShapeError for unknown words.
  const std::string& translate_word(const std::string& source_word) const;

  TranslationPair sample(Generator& gen, const GrammarConfig& cfg = {}) const;

 private:
  std::vector<LexEntry> lexicon_;
  std::vector<std::vector<std::size_t>> by_class_;  // entry indices per WordClass
  std::unordered_map<std::string, std::string> dictionary_;
};

// n pairs with distinct sources.
std::vector<TranslationPair> make_translation(const ToyTranslation& lang, std::size_t n, Generator& gen,
                                              const GrammarConfig& cfg = {});

// (target words, source words), true where target word j translates source word i.
Mask alignment_matrix(const TranslationPair& p);

}  // namespace attnlab::nn::data
