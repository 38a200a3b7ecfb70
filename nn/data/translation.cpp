#include "nn/data/translation.hpp"

#include <algorithm>
#include <unordered_set>

#include "core/error.hpp"
#include "nn/data/vocab.hpp"

namespace attnlab::nn::data {

namespace {

// Regular nouns and verbs only, so plurals and third-person forms follow the spelling rules below.
const char* const kNouns[] = {
    "cat", "dog", "bird", "horse", "cow", "pig", "fox", "goat", "duck", "frog", "bear", "lion", "tiger", "rabbit",
    "snake", "monkey", "donkey", "turtle", "whale", "shark", "eagle", "owl", "spider", "bee", "ant", "camel",
    "zebra", "parrot", "chicken", "farmer", "teacher", "doctor", "baker", "singer", "painter", "soldier", "sailor",
    "king", "queen", "prince", "girl", "boy", "friend", "student", "driver", "writer", "pilot", "nurse", "cook",
    "hunter", "judge", "artist", "dancer", "house", "car", "boat", "tree", "river", "mountain", "garden", "city",
    "village", "road", "bridge", "window", "door", "table", "chair", "book", "letter", "song", "cake", "apple",
    "bottle", "cup", "box", "ball", "hat", "coat", "shoe", "key", "lamp", "clock", "bell", "stone", "flower",
    "forest", "field", "island", "castle", "tower", "ship", "train", "bicycle", "basket", "church", "dish", "lake",
    "hill", "star", "cloud", "robot", "wizard", "dragon", "pirate", "knight"};
const char* const kAdjectives[] = {
    "big", "small", "old", "young", "red", "blue", "green", "yellow", "black", "white", "happy", "sad",
    "tall", "short", "quiet", "loud", "fast", "slow", "brave", "shy", "clever", "lazy", "rich", "poor",
    "strong", "weak", "hungry", "angry", "kind", "cruel", "warm", "cold", "bright", "dark", "heavy", "light",
    "clean", "dirty", "famous", "strange", "gentle", "proud", "busy", "tired", "soft", "hard", "sweet", "bitter",
    "round", "square", "empty", "full", "wild", "calm", "noisy", "honest", "polite", "rude", "wise", "silly",
    "tiny", "huge", "pretty", "ugly"};
const char* const kVerbs[] = {
    "see", "like", "love", "hate", "find", "follow", "chase", "watch", "help", "visit", "carry", "push",
    "pull", "paint", "draw", "build", "open", "close", "wake", "wash", "grab", "eat", "read", "sell",
    "buy", "take", "bring", "hold", "catch", "kick", "throw", "climb", "cross", "feed", "hide", "meet",
    "know", "call", "teach", "touch", "fix", "guard", "greet", "hug", "kiss", "miss", "need", "want",
    "remember", "forget", "admire", "fear", "save", "study", "copy", "borrow", "notice", "describe", "protect", "reach"};
const char* const kAdverbs[] = {"quickly", "slowly",  "often",  "rarely",    "always",  "sometimes", "quietly",
                                "loudly",  "happily", "sadly",  "gladly",    "carefully", "gently", "suddenly",
                                "secretly", "proudly", "calmly", "bravely",  "politely", "eagerly"};
const char* const kPrepositions[] = {"near", "behind", "under", "beside", "above", "below", "with", "without", "inside", "outside"};
const char* const kDeterminers[] = {"the", "my", "your", "his", "her", "our", "their"};
const char* const kSingularDeterminers[] = {"this", "that", "every", "one"};
const char* const kPluralDeterminers[] = {"these", "those", "some", "many", "two", "three", "four",
                                          "five", "six", "seven", "eight", "nine", "ten"};

bool ends_with(const std::string& s, const char* suffix) {
  const std::string t(suffix);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}
bool is_vowel(char c) { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u'; }

// English spelling for both the plural noun and the 3rd-person singular verb:
// box -> boxes, watch -> watches, city -> cities, carry -> carries, key -> keys, see -> sees.
std::string add_s(const std::string& w) {
  if (ends_with(w, "s") || ends_with(w, "x") || ends_with(w, "z") || ends_with(w, "ch") || ends_with(w, "sh"))
    return w + "es";
  if (w.size() >= 2 && w.back() == 'y' && !is_vowel(w[w.size() - 2])) return w.substr(0, w.size() - 1) + "ies";
  return w + "s";
}

// An invented word of `syllables` consonant-vowel syllables, some closed with n/r/s/l.
std::string invent_word(Generator& gen, int syllables) {
  static const char kOnsets[] = "bdfgklmnprstvz";
  static const char kVowels[] = "aeiou";
  static const char kCodas[] = "nrsl";
  std::string w;
  for (int i = 0; i < syllables; ++i) {
    w += kOnsets[gen.below(sizeof kOnsets - 1)];
    w += kVowels[gen.below(sizeof kVowels - 1)];
    if (gen.uniform() < 0.2) w += kCodas[gen.below(sizeof kCodas - 1)];
  }
  return w;
}

}  // namespace

ToyTranslation::ToyTranslation(std::uint64_t lexicon_seed) : by_class_(8) {
  auto add = [&](WordClass cls, const char* word) {
    LexEntry e{cls, word, "", "", ""};
    if (cls == WordClass::noun || cls == WordClass::verb) e.source_marked = add_s(e.source);
    lexicon_.push_back(std::move(e));
  };
  for (auto w : kDeterminers) add(WordClass::determiner, w);
  for (auto w : kSingularDeterminers) add(WordClass::singular_determiner, w);
  for (auto w : kPluralDeterminers) add(WordClass::plural_determiner, w);
  for (auto w : kNouns) add(WordClass::noun, w);
  for (auto w : kAdjectives) add(WordClass::adjective, w);
  for (auto w : kVerbs) add(WordClass::verb, w);
  for (auto w : kAdverbs) add(WordClass::adverb, w);
  for (auto w : kPrepositions) add(WordClass::preposition, w);

  // Invent the target words. Every surface form on either side must be unique, or the
  // word-level dictionary (and the alignment it implies) would be ambiguous.
  Generator gen(lexicon_seed);
  std::unordered_set<std::string> target_forms;
  const std::string plural_suffix = invent_word(gen, 1);
  for (auto& e : lexicon_) {
    const bool function_word = e.cls != WordClass::noun && e.cls != WordClass::adjective &&
                               e.cls != WordClass::verb && e.cls != WordClass::adverb;
    for (;;) {
      const int syllables = function_word ? 1 + int(gen.below(2)) : 2 + int(gen.below(2));
      std::string t = invent_word(gen, syllables);
      std::string marked = e.cls == WordClass::noun ? t + plural_suffix : "";
      if (target_forms.count(t) || (!marked.empty() && (target_forms.count(marked) || marked == t))) continue;
      target_forms.insert(t);
      if (!marked.empty()) target_forms.insert(marked);
      e.target = std::move(t);
      e.target_marked = std::move(marked);
      break;
    }
  }
  for (std::size_t i = 0; i < lexicon_.size(); ++i) {
    const auto& e = lexicon_[i];
    by_class_[static_cast<std::size_t>(e.cls)].push_back(i);
    check(dictionary_.emplace(e.source, e.target).second, "ToyTranslation", "duplicate source word \"", e.source, "\"");
    if (!e.source_marked.empty()) {
      const std::string& t = e.cls == WordClass::noun ? e.target_marked : e.target;
      check(dictionary_.emplace(e.source_marked, t).second, "ToyTranslation", "duplicate source word \"",
            e.source_marked, "\"");
    }
  }
}

const std::string& ToyTranslation::translate_word(const std::string& w) const {
  auto it = dictionary_.find(w);
  check(it != dictionary_.end(), "ToyTranslation::translate_word", "unknown source word \"", w, "\"");
  return it->second;
}

TranslationPair ToyTranslation::sample(Generator& gen, const GrammarConfig& cfg) const {
  check(cfg.p_adjective >= 0 && cfg.p_adjective <= 1 && cfg.p_plural >= 0 && cfg.p_plural <= 1 &&
            cfg.p_adverb >= 0 && cfg.p_adverb <= 1 && cfg.p_prepositional >= 0 && cfg.p_prepositional <= 1,
        "ToyTranslation::sample", "probabilities must lie in [0, 1]");
  std::vector<std::string> src, tgt;
  std::vector<Index> align;  // filled in target order
  auto pick = [&](WordClass c) -> const LexEntry& {
    const auto& ids = by_class_[static_cast<std::size_t>(c)];
    const std::size_t n = cfg.words_per_class > 0 ? std::min(cfg.words_per_class, ids.size()) : ids.size();
    return lexicon_[ids[static_cast<std::size_t>(gen.below(n))]];
  };
  auto push_src = [&](const std::string& s, const std::string& t) {
    src.push_back(s);
    return std::make_pair(static_cast<Index>(src.size() - 1), t);
  };
  using Slot = std::pair<Index, std::string>;  // (source position, target word)

  // A noun phrase in source order: det adj* noun. Its target is the mirror image: noun adj* det.
  auto noun_phrase = [&](bool plural) {
    std::vector<Slot> np;
    const bool either = gen.uniform() < 0.5;
    const LexEntry& det =
        pick(either ? WordClass::determiner : plural ? WordClass::plural_determiner : WordClass::singular_determiner);
    np.push_back(push_src(det.source, det.target));
    std::vector<const LexEntry*> adjs;
    while (adjs.size() < cfg.max_adjectives && gen.uniform() < cfg.p_adjective) {
      const LexEntry* a = &pick(WordClass::adjective);
      if (std::find(adjs.begin(), adjs.end(), a) == adjs.end()) adjs.push_back(a);
    }
    for (const LexEntry* a : adjs) np.push_back(push_src(a->source, a->target));
    const LexEntry& noun = pick(WordClass::noun);
    np.push_back(plural ? push_src(noun.source_marked, noun.target_marked) : push_src(noun.source, noun.target));
    std::reverse(np.begin(), np.end());
    return np;
  };

  // Source: S [Adv] V O [P NP]    Target: S [NP P] O [Adv] V
  const bool subj_plural = gen.uniform() < cfg.p_plural;
  const std::vector<Slot> subject = noun_phrase(subj_plural);
  std::vector<Slot> adverb;
  if (gen.uniform() < cfg.p_adverb) {
    const LexEntry& a = pick(WordClass::adverb);
    adverb.push_back(push_src(a.source, a.target));
  }
  const LexEntry& v = pick(WordClass::verb);
  const Slot verb = push_src(subj_plural ? v.source : v.source_marked, v.target);
  const std::vector<Slot> object = noun_phrase(gen.uniform() < cfg.p_plural);
  std::vector<Slot> pp;
  if (gen.uniform() < cfg.p_prepositional) {
    const LexEntry& p = pick(WordClass::preposition);
    const Slot prep = push_src(p.source, p.target);
    pp = noun_phrase(gen.uniform() < cfg.p_plural);
    pp.push_back(prep);
  }

  TranslationPair out;
  auto emit = [&](const std::vector<Slot>& slots) {
    for (const auto& [pos, word] : slots) {
      tgt.push_back(word);
      align.push_back(pos);
    }
  };
  emit(subject);
  emit(pp);
  emit(object);
  emit(adverb);
  emit({verb});
  for (std::size_t i = 0; i < src.size(); ++i) out.source += (i ? " " : "") + src[i];
  for (std::size_t j = 0; j < tgt.size(); ++j) out.target += (j ? " " : "") + tgt[j];
  out.alignment = std::move(align);
  return out;
}

std::vector<TranslationPair> make_translation(const ToyTranslation& lang, std::size_t n, Generator& gen,
                                              const GrammarConfig& cfg) {
  std::vector<TranslationPair> out;
  out.reserve(n);
  std::unordered_set<std::string> seen;
  const std::size_t max_attempts = 100 * n + 1000;
  for (std::size_t attempts = 0; out.size() < n; ++attempts) {
    check(attempts < max_attempts, "make_translation", "gave up after ", max_attempts, " draws with ", out.size(),
          " of ", n, " distinct sentences: loosen the grammar config");
    TranslationPair p = lang.sample(gen, cfg);
    if (seen.insert(p.source).second) out.push_back(std::move(p));
  }
  return out;
}

Mask alignment_matrix(const TranslationPair& p) {
  const std::size_t n_src = word_tokens(p.source).size();
  const std::size_t n_tgt = p.alignment.size();
  Mask m = Mask::from_shape({n_tgt, n_src});
  std::fill(m.begin(), m.end(), false);
  for (std::size_t j = 0; j < n_tgt; ++j) {
    const Index i = p.alignment[j];
    check(i >= 0 && static_cast<std::size_t>(i) < n_src, "alignment_matrix", "target word ", j,
          " aligned to source word ", i, " of ", n_src);
    m(j, static_cast<std::size_t>(i)) = true;
  }
  return m;
}

}  // namespace attnlab::nn::data
