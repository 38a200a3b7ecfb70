// Generated tasks: copy / reverse / sort, date normalization (calendar arithmetic, weekdays,
// formats), and the toy translation with its word alignments.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "nn/data/dates.hpp"
#include "nn/data/split.hpp"
#include <xtensor/xview.hpp>

#include "nn/data/tagged.hpp"
#include "nn/data/tasks.hpp"
#include "nn/data/translation.hpp"
#include "nn/data/vocab.hpp"

using namespace attnlab;
using namespace attnlab::nn::data;

TEST_CASE("copy, reverse, sort: targets, lengths, alphabet, determinism") {
  CHECK(seq_task_target({SeqTask::copy}, "3141") == "3141");
  CHECK(seq_task_target({SeqTask::reverse}, "3141") == "1413");
  CHECK(seq_task_target({SeqTask::sort}, "3141") == "1134");
  // Sort follows the alphabet's order, not ASCII.
  CHECK(seq_task_target({SeqTask::sort, "zyx"}, "xzyz") == "zzyx");
  CHECK_THROWS_AS(seq_task_target({SeqTask::sort, "abc"}, "abd"), ShapeError);

  for (SeqTask task : {SeqTask::copy, SeqTask::reverse, SeqTask::sort}) {
    const SeqTaskConfig cfg{task, "abcdef#", 3, 7};
    Generator g1(11), g2(11);
    const auto a = make_seq_task(cfg, 300, g1);
    CHECK(a == make_seq_task(cfg, 300, g2));  // same seed, same data
    std::set<std::string> sources;
    std::set<std::size_t> lengths;
    for (const auto& p : a) {
      sources.insert(p.source);
      lengths.insert(p.source.size());
      CHECK(p.target == seq_task_target(cfg, p.source));
      CHECK(p.source.find_first_not_of(cfg.alphabet) == std::string::npos);
    }
    CHECK(sources.size() == 300);  // distinct sources
    CHECK(*lengths.begin() == 3);
    CHECK(*lengths.rbegin() == 7);
  }
  Generator g3(12);
  CHECK(make_seq_task({SeqTask::copy}, 10, g3) != make_seq_task({SeqTask::copy}, 10, g3));  // the stream moves on
}

TEST_CASE("shift: the token k places to the left, the filler before it; tagged as token ids") {
  SeqTaskConfig cfg{SeqTask::shift};
  cfg.shift = 3;
  CHECK(seq_task_target(cfg, "3141592") == "___3141");
  CHECK(seq_task_target(cfg, "31") == "__");
  cfg.min_len = cfg.max_len = 6;
  Generator g(4), same(4);
  const std::vector<Pair> pairs = make_seq_task(cfg, 20, g);
  SeqTaskConfig copy{SeqTask::copy};
  copy.min_len = copy.max_len = 6;
  const std::vector<Pair> sources = make_seq_task(copy, 20, same);  // the same strings as the copy task draws
  Vocab vocab;
  for (const char* c : {"_", "0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}) vocab.add(c);
  const Tagged t = tag_pairs(pairs, vocab);
  REQUIRE(t.inputs.shape() == std::vector<std::size_t>{20, 6});
  for (std::size_t r = 0; r < 20; ++r) {
    CHECK(pairs[r].source == sources[r].source);
    CHECK(pairs[r].target == "___" + pairs[r].source.substr(0, 3));
    CHECK(vocab.decode({t.inputs(r, 0), t.inputs(r, 5)}, Tokenizer::chars) == pairs[r].source.substr(0, 1) + pairs[r].source.substr(5, 1));
    CHECK(t.targets(r, 0) == vocab.id("_"));
  }
  const Tagged two = t.rows({3, 1});
  CHECK(xt::view(two.inputs, 1) == xt::view(t.inputs, 1));
  CHECK(t.slice(5, 8).size() == 3);
  CHECK_THROWS_AS(t.slice(5, 21), ShapeError);
  CHECK_THROWS_AS(tag_pairs({{"123", "12"}}, vocab), ShapeError);
  cfg.filler = '1';
  CHECK_THROWS_WITH_AS(make_seq_task(cfg, 1, g), doctest::Contains("filler '1'"), ShapeError);
}

TEST_CASE("make_seq_task rejects bad configs and impossible requests") {
  Generator gen(1);
  CHECK_THROWS_AS(make_seq_task({SeqTask::copy, ""}, 1, gen), ShapeError);
  CHECK_THROWS_AS(make_seq_task({SeqTask::copy, "aba"}, 1, gen), ShapeError);
  CHECK_THROWS_AS(make_seq_task({SeqTask::copy, "ab", 0, 2}, 1, gen), ShapeError);
  CHECK_THROWS_AS(make_seq_task({SeqTask::copy, "ab", 3, 2}, 1, gen), ShapeError);
  // Over "ab" with lengths 1..2 exactly 2 + 4 = 6 strings exist.
  CHECK(make_seq_task({SeqTask::copy, "ab", 1, 2}, 6, gen).size() == 6);
  CHECK_THROWS_AS(make_seq_task({SeqTask::copy, "ab", 1, 2}, 7, gen), ShapeError);
}

TEST_CASE("calendar: leap years, days, round trips, weekdays of known dates") {
  CHECK(is_leap_year(2000));
  CHECK_FALSE(is_leap_year(1900));
  CHECK(is_leap_year(1996));
  CHECK_FALSE(is_leap_year(1997));
  CHECK(days_in_month(2000, 2) == 29);
  CHECK(days_in_month(1999, 2) == 28);
  CHECK(days_in_month(1999, 4) == 30);
  CHECK_FALSE(is_valid_date({1999, 2, 29}));
  CHECK_FALSE(is_valid_date({1999, 13, 1}));
  CHECK_THROWS_AS(iso_date({1999, 2, 29}), ShapeError);

  // Days since 1970-01-01 and weekdays (0 = Monday), from Python's datetime.
  CHECK(days_from_civil({1970, 1, 1}) == 0);
  CHECK(days_from_civil({1997, 3, 3}) == 9923);
  CHECK(days_from_civil({1950, 1, 1}) == -7305);
  CHECK(days_from_civil({2049, 12, 31}) == 29219);
  CHECK(weekday({1997, 3, 3}) == 0);    // Monday
  CHECK(weekday({1997, 3, 4}) == 1);    // Tuesday
  CHECK(weekday({1970, 1, 1}) == 3);    // Thursday
  CHECK(weekday({2000, 1, 1}) == 5);    // Saturday
  CHECK(weekday({1969, 7, 20}) == 6);   // Sunday (Apollo 11 landing)
  CHECK(weekday({2001, 9, 11}) == 1);   // Tuesday
  CHECK(weekday({1950, 1, 1}) == 6);    // Sunday
  CHECK(weekday({2049, 12, 31}) == 4);  // Friday
  CHECK(weekday({2000, 2, 29}) == 1);   // Tuesday
  CHECK(std::string(weekday_name(weekday({1997, 3, 3}))) == "Monday");

  for (long d = days_from_civil({1950, 1, 1}); d <= days_from_civil({2049, 12, 31}); ++d) {
    const Date x = civil_from_days(d);
    REQUIRE(is_valid_date(x));
    REQUIRE(days_from_civil(x) == d);
    REQUIRE(weekday(x) == ((d % 7) + 7 + 3) % 7);
  }
}

TEST_CASE("date formats: every example from the brief, US month/day order") {
  const Date d{1997, 3, 3};
  CHECK(num_date_formats() >= 10);
  CHECK(date_format_names().size() == num_date_formats());
  // Each format's name is how it writes Monday 3 March 1997.
  for (std::size_t f = 0; f < num_date_formats(); ++f) CHECK(format_date(d, f) == date_format_names()[f]);
  std::set<std::string> names(date_format_names().begin(), date_format_names().end());
  for (const char* s : {"3rd of March 1997", "March 3, 1997", "3 March 1997", "1997.03.03", "03-Mar-97",
                        "Monday, March 3, 1997", "3/3/1997"})
    CHECK(names.count(s) == 1);
  // Month first: 03/04/97 is 4 March, a Tuesday.
  CHECK(format_date({1997, 3, 4}, 1) == "tue 03/04/97");
  CHECK(format_date({2012, 11, 21}, 0) == "21st of November 2012");
  CHECK(format_date({2012, 11, 22}, 14) == "November 22nd, 2012");
  CHECK(format_date({2012, 11, 13}, 9) == "the 13th of november, 2012");
  CHECK(format_date({2012, 11, 11}, 15) == "sunday 11th november 2012");
  CHECK(format_date({2003, 12, 25}, 5) == "25-Dec-03");
  CHECK(format_date({2003, 12, 25}, 7) == "12/25/2003");
  CHECK(format_date({2003, 12, 25}, 10) == "20031225");
  CHECK(format_date({2003, 12, 25}, 11) == "25 DEC 2003");
  CHECK(iso_date({2003, 12, 25}) == "2003-12-25");
  CHECK_THROWS_AS(format_date(d, num_date_formats()), ShapeError);
  CHECK_THROWS_AS(format_date({1997, 2, 30}, 0), ShapeError);
}

TEST_CASE("make_dates: ISO targets, distinct sources, range, every format, seeded") {
  Generator g1(5), g2(5);
  const auto ex = make_dates(3000, g1);
  CHECK(ex == make_dates(3000, g2));
  std::set<std::string> sources;
  std::set<int> years;
  std::vector<int> per_format(num_date_formats(), 0);
  for (const auto& p : ex) {
    sources.insert(p.source);
    REQUIRE(p.target.size() == 10);
    const Date d{std::stoi(p.target.substr(0, 4)), std::stoi(p.target.substr(5, 2)), std::stoi(p.target.substr(8, 2))};
    CHECK(iso_date(d) == p.target);
    years.insert(d.year);
    CHECK(d.year >= 1950);
    CHECK(d.year <= 2049);
    // The source is one of the formats of the target's date.
    bool found = false;
    for (std::size_t f = 0; f < num_date_formats(); ++f)
      if (format_date(d, f) == p.source) {
        found = true;
        ++per_format[f];
      }
    CHECK(found);
  }
  CHECK(sources.size() == 3000);
  CHECK(years.size() > 90);
  for (int c : per_format) CHECK(c > 100);

  Generator g3(1);
  const auto only = make_dates(50, g3, {1990, 1999, {4}});
  for (const auto& p : only) CHECK(p.source.substr(0, 3) == "199");
  CHECK_THROWS_AS(make_dates(5, g3, {1900, 1999, {}}), ShapeError);  // two-digit years would be ambiguous
  CHECK_THROWS_AS(make_dates(5, g3, {2000, 1999, {}}), ShapeError);
  CHECK_THROWS_AS(make_dates(5, g3, {1990, 1999, {99}}), ShapeError);
  CHECK_THROWS_AS(make_dates(400, g3, {2000, 2000, {4}}), ShapeError);  // 366 strings exist
}

TEST_CASE("splits of generated dates share no source string") {
  Generator gen(8);
  const auto ex = make_dates(2000, gen);
  const auto sp = split_examples(ex, {0.8, 0.1, 0.1}, 3);
  CHECK(sp.train.size() == 1600);
  CHECK(sp.validation.size() == 200);
  CHECK(sp.test.size() == 200);
  std::set<std::string> tr;
  for (const auto& p : sp.train) tr.insert(p.source);
  for (const auto& p : sp.validation) CHECK(tr.count(p.source) == 0);
  for (const auto& p : sp.test) CHECK(tr.count(p.source) == 0);
}

TEST_CASE("ToyTranslation: lexicon of a few hundred words, deterministic, invertible") {
  const ToyTranslation lang, same, other(99);
  CHECK(lang.lexicon().size() >= 250);
  CHECK(lang.num_source_forms() >= 400);  // lemmas plus plurals and third-person verbs
  std::set<std::string> targets;
  for (std::size_t i = 0; i < lang.lexicon().size(); ++i) {
    const LexEntry& e = lang.lexicon()[i];
    CHECK(e.target == same.lexicon()[i].target);
    CHECK(targets.insert(e.target).second);
    if (!e.target_marked.empty()) CHECK(targets.insert(e.target_marked).second);
    CHECK(lang.translate_word(e.source) == e.target);
  }
  std::size_t differ = 0;
  for (std::size_t i = 0; i < lang.lexicon().size(); ++i) differ += lang.lexicon()[i].target != other.lexicon()[i].target;
  CHECK(differ > lang.lexicon().size() / 2);  // another seed, another language
  CHECK(lang.translate_word("dogs") != lang.translate_word("dog"));
  CHECK(lang.translate_word("chases") == lang.translate_word("chase"));  // verbs do not agree in the target
  CHECK(lang.translate_word("cities") == lang.translate_word("city") + lang.translate_word("boxes").substr(lang.translate_word("box").size()));
  CHECK_THROWS_AS(lang.translate_word("xylophone"), ShapeError);
}

TEST_CASE("ToyTranslation: grammar, reordering, and the true alignment") {
  const ToyTranslation lang;
  std::map<std::string, WordClass> cls;
  for (const auto& e : lang.lexicon()) {
    cls[e.source] = e.cls;
    if (!e.source_marked.empty()) cls[e.source_marked] = e.cls;
  }
  Generator gen(21);
  const auto pairs = make_translation(lang, 500, gen);
  std::set<std::string> sources;
  std::size_t crossing = 0;
  for (const auto& p : pairs) {
    sources.insert(p.source);
    const auto src = word_tokens(p.source), tgt = word_tokens(p.target);
    REQUIRE(tgt.size() == src.size());
    REQUIRE(p.alignment.size() == tgt.size());
    // The alignment is a permutation and each target word translates its aligned source word.
    std::vector<Index> sorted = p.alignment;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t i = 0; i < sorted.size(); ++i) CHECK(sorted[i] == Index(i));
    for (std::size_t j = 0; j < tgt.size(); ++j) CHECK(lang.translate_word(src[p.alignment[j]]) == tgt[j]);
    // SOV: the target ends with the verb; the source starts with a determiner and ends with a noun.
    CHECK(cls.at(src[p.alignment.back()]) == WordClass::verb);
    CHECK(cls.at(src.back()) == WordClass::noun);
    CHECK(cls.at(src[p.alignment[0]]) == WordClass::noun);  // target starts with a noun
    // Crossing alignments: some pair j < k with alignment[j] > alignment[k].
    for (std::size_t j = 0; j + 1 < tgt.size(); ++j)
      if (p.alignment[j] > p.alignment[j + 1]) {
        ++crossing;
        break;
      }
    const Mask m = alignment_matrix(p);
    CHECK(m.shape()[0] == tgt.size());
    CHECK(m.shape()[1] == src.size());
    std::size_t ones = 0;
    for (bool b : m) ones += b;
    CHECK(ones == tgt.size());
    CHECK(m(0, static_cast<std::size_t>(p.alignment[0])));
  }
  CHECK(sources.size() == 500);
  CHECK(crossing == 500);  // every sentence reorders (its noun phrases are mirrored)

  // One known sentence, re-derived by hand from the dictionary.
  Generator g(4);
  const GrammarConfig plain{0, 0.0, 0.0, 0.0, 0.0};  // no adjectives, plurals, adverbs or PPs
  const TranslationPair p = lang.sample(g, plain);
  const auto s = word_tokens(p.source);
  REQUIRE(s.size() == 5);  // det noun verb det noun
  CHECK(p.alignment == std::vector<Index>{1, 0, 4, 3, 2});
  CHECK(p.target == lang.translate_word(s[1]) + " " + lang.translate_word(s[0]) + " " + lang.translate_word(s[4]) +
                        " " + lang.translate_word(s[3]) + " " + lang.translate_word(s[2]));
  CHECK(s[2].back() == 's');  // singular subject: third-person verb
  // A smaller vocabulary: only the first 3 words of each class occur.
  GrammarConfig small;
  small.words_per_class = 3;
  std::map<WordClass, std::set<std::string>> allowed;
  std::map<WordClass, std::size_t> taken;
  for (const auto& e : lang.lexicon())
    if (taken[e.cls]++ < 3) {
      allowed[e.cls].insert(e.source);
      if (!e.source_marked.empty()) allowed[e.cls].insert(e.source_marked);
    }
  std::set<std::string> seen;
  for (const auto& q : make_translation(lang, 300, gen, small))
    for (const auto& w : word_tokens(q.source)) {
      CHECK(allowed[cls.at(w)].count(w) == 1);
      seen.insert(w);
    }
  CHECK(seen.size() > 20);  // many of the 3 x 8 classes' words (and forms) do occur
  GrammarConfig bad;
  bad.p_plural = 1.5;
  CHECK_THROWS_AS(lang.sample(g, bad), ShapeError);
  TranslationPair broken = p;
  broken.alignment[0] = 7;
  CHECK_THROWS_AS(alignment_matrix(broken), ShapeError);
}
