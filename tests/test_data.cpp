// Vocabulary, tokenizers, padding and teacher-forcing batches, per-epoch order, splits.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/split.hpp"
#include "nn/data/tasks.hpp"
#include "nn/data/vocab.hpp"

using namespace attnlab;
using namespace attnlab::nn::data;
using Words = std::vector<std::string>;

TEST_CASE("tokenizers") {
  CHECK(char_tokens("ab c") == Words{"a", "b", " ", "c"});
  CHECK(char_tokens("").empty());
  CHECK(word_tokens("  the  cat\tsat \n") == Words{"the", "cat", "sat"});
  CHECK(word_tokens("   ").empty());
  CHECK(detokenize(word_tokens("a  b"), Tokenizer::words) == "a b");
  CHECK(detokenize(char_tokens("a b"), Tokenizer::chars) == "a b");
}

TEST_CASE("Vocab: specials at fixed ids, frequency order, min_freq, unknowns") {
  Vocab empty;
  CHECK(empty.size() == 4);
  CHECK(empty.token(Vocab::pad) == "<pad>");
  CHECK(empty.token(Vocab::bos) == "<bos>");
  CHECK(empty.token(Vocab::eos) == "<eos>");
  CHECK(empty.token(Vocab::unk) == "<unk>");
  CHECK(empty.id("cat") == Vocab::unk);  // lookups in an empty vocabulary give <unk>
  CHECK_FALSE(empty.contains("cat"));
  CHECK_THROWS_AS(empty.token(4), ShapeError);
  CHECK_THROWS_AS(empty.token(-1), ShapeError);
  CHECK(Vocab::build({}).size() == 4);

  // b x3, a x2, c x2, d x1: frequency first, ties alphabetical; min_freq 2 drops d.
  const Vocab v = Vocab::build({{"b", "a", "c"}, {"b", "c", "a", "b", "d"}}, 2);
  CHECK(v.size() == 7);
  CHECK(v.id("b") == 4);
  CHECK(v.id("a") == 5);
  CHECK(v.id("c") == 6);
  CHECK(v.id("d") == Vocab::unk);
  CHECK(Vocab::build({{"b", "a", "c"}, {"b", "c", "a", "b", "d"}}, 1).id("d") == 7);
  CHECK_THROWS_AS(Vocab::build({{"a"}}, 0), ShapeError);
  // A special token's spelling in the data maps to the special, not to a new entry.
  CHECK(Vocab::build({{"<pad>", "x"}}).id("<pad>") == Vocab::pad);
  CHECK(Vocab::build({{"<pad>", "x"}}).size() == 5);
}

TEST_CASE("Vocab: encode and decode") {
  const Vocab v = Vocab::build({char_tokens("hello world")});
  const std::vector<Index> ids = v.encode("hello", Tokenizer::chars);
  CHECK(ids.size() == 5);
  CHECK(v.decode(ids, Tokenizer::chars) == "hello");
  CHECK(v.encode("hex", Tokenizer::chars)[2] == Vocab::unk);
  CHECK(v.decode(v.encode("hex", Tokenizer::chars)) == Words{"h", "e", "<unk>"});
  // decode drops <bos> and <pad> and stops at the first <eos>.
  std::vector<Index> framed = {Vocab::bos};
  for (Index i : ids) framed.push_back(i);
  framed.insert(framed.begin() + 3, Vocab::pad);
  framed.push_back(Vocab::eos);
  framed.push_back(ids[0]);  // after <eos>: ignored
  CHECK(v.decode(framed, Tokenizer::chars) == "hello");
  CHECK_THROWS_AS(v.decode(std::vector<Index>{99}), ShapeError);

  const Vocab words = Vocab::build({word_tokens("the cat sat")});
  CHECK(words.decode(words.encode("the dog sat", Tokenizer::words), Tokenizer::words) == "the <unk> sat");
  const IndexArray rows = {{words.id("the"), words.id("cat"), Vocab::eos, Vocab::pad}, {words.id("sat"), 0, 0, 0}};
  CHECK(words.decode_rows(rows, Tokenizer::words) == Words{"the cat", "sat"});
  CHECK_THROWS_AS(words.decode_rows(IndexArray{1, 2}, Tokenizer::words), ShapeError);
}

TEST_CASE("build_vocabs: one vocabulary per side, from the training pairs, with each side's tokenizer") {
  const std::vector<Pair> train = {{"the cat", "ab"}, {"the dog", "ba"}};
  const PairVocabs v = build_vocabs(train, Tokenizer::words, Tokenizer::chars);
  CHECK(v.source.size() == Vocab::num_specials + 3);  // the, cat, dog
  CHECK(v.source.token(Vocab::num_specials) == "the");  // most frequent first
  CHECK(v.target.size() == Vocab::num_specials + 2);  // a, b
  CHECK(v.target.contains("a"));
  CHECK_FALSE(v.target.contains("ab"));
}

TEST_CASE("encode_splits: vocabularies from the training split, every split encoded with them") {
  Splits<Pair> s;
  s.train = {{"the cat", "ab"}, {"the dog", "ba"}};
  s.validation = {{"the cow", "b"}};
  s.test = {{"dog", "aab"}};
  const EncodedSplits e = encode_splits(s, Tokenizer::words, Tokenizer::chars);
  CHECK(e.source_vocab.size() == Vocab::num_specials + 3);
  CHECK(e.train.size() == 2);
  CHECK(e.train.source[1] == std::vector<Index>{e.source_vocab.id("the"), e.source_vocab.id("dog")});
  CHECK(e.validation.source[0][1] == Vocab::unk);  // "cow" was never seen in training
  CHECK(e.test.target[0] == e.target_vocab.encode("aab", Tokenizer::chars));
}

TEST_CASE("pad_sequences: ids, lengths and key-padding mask") {
  const PaddedBatch b = pad_sequences({{5, 6, 7}, {8}, {}, {9, 10}});
  CHECK(b.ids == IndexArray{{5, 6, 7}, {8, 0, 0}, {0, 0, 0}, {9, 10, 0}});
  CHECK(b.lengths == IndexArray{3, 1, 0, 2});
  CHECK(b.real == Mask{{true, true, true}, {true, false, false}, {false, false, false}, {true, true, false}});
  CHECK(pad_sequences({{1, 2}}, -1).ids == IndexArray{{1, 2}});
  const PaddedBatch q = pad_sequences({{1}, {}}, -1);
  CHECK(shape_of(q.ids) == Shape{2, 1});
  CHECK(q.ids(0, 0) == 1);
  CHECK(q.ids(1, 0) == -1);
  CHECK_THROWS_AS(pad_sequences({}), ShapeError);  // a batch of zero sequences
}

TEST_CASE("make_seq2seq_batch: teacher forcing shifts the target by one") {
  EncodedPairs d;
  d.source = {{10, 11, 12}, {13}};
  d.target = {{20, 21}, {22, 23, 24}};
  const Seq2SeqBatch b = make_seq2seq_batch(d, {1, 0});
  CHECK(b.rows == std::vector<std::size_t>{1, 0});
  CHECK(b.source.ids == IndexArray{{13, Vocab::eos, 0, 0}, {10, 11, 12, Vocab::eos}});
  CHECK(b.source.lengths == IndexArray{2, 4});
  CHECK(b.decoder_input.ids == IndexArray{{Vocab::bos, 22, 23, 24}, {Vocab::bos, 20, 21, 0}});
  CHECK(b.decoder_target.ids == IndexArray{{22, 23, 24, Vocab::eos}, {20, 21, Vocab::eos, 0}});
  CHECK(b.decoder_input.real == b.decoder_target.real);
  CHECK(b.decoder_target.lengths == IndexArray{4, 3});
  // Without the source <eos>.
  CHECK(make_seq2seq_batch(d, {0}, false).source.ids == IndexArray{{10, 11, 12}});
  CHECK_THROWS_AS(make_seq2seq_batch(d, {}), ShapeError);
  CHECK_THROWS_AS(make_seq2seq_batch(d, {2}), ShapeError);
  d.target.pop_back();
  CHECK_THROWS_AS(make_seq2seq_batch(d, {0}), ShapeError);
}

TEST_CASE("first_pairs: the first n pairs in order, all of them when the set is smaller") {
  EncodedPairs set;
  set.source = {{1, 2}, {3}, {4, 5, 6}};
  set.target = {{7}, {8, 9}, {10}};
  const EncodedPairs two = first_pairs(set, 2);
  CHECK(two.source == std::vector<Sequence>{{1, 2}, {3}});
  CHECK(two.target == std::vector<Sequence>{{7}, {8, 9}});
  CHECK(first_pairs(set, 10).size() == 3);
  CHECK(first_pairs(set, 0).size() == 0);
}

TEST_CASE("first_rows, epoch_order and batch_slices") {
  CHECK(first_rows(3) == std::vector<std::size_t>{0, 1, 2});
  CHECK(first_rows(0).empty());
  CHECK(epoch_order(5, 7, 0, /*shuffle=*/false) == first_rows(5));
  const auto a = epoch_order(50, 7, 0), b = epoch_order(50, 7, 0), c = epoch_order(50, 7, 1);
  CHECK(a == b);  // same seed and epoch: same order
  CHECK(a != c);  // a new epoch reshuffles
  CHECK(a != epoch_order(50, 8, 0));
  auto sorted = a;
  std::sort(sorted.begin(), sorted.end());
  CHECK(sorted == epoch_order(50, 7, 0, false));  // a permutation of 0..49
  CHECK(epoch_order(3, 7, 4, false) == std::vector<std::size_t>{0, 1, 2});

  const auto s = batch_slices(a, 16);
  REQUIRE(s.size() == 4);
  CHECK(s[0].size() == 16);
  CHECK(s[3].size() == 2);  // the last partial batch is kept
  CHECK(s[3].back() == a.back());
  CHECK(batch_slices({}, 4).empty());
  CHECK_THROWS_AS(batch_slices(a, 0), ShapeError);
}

TEST_CASE("take_rows gathers along axis 0") {
  const Array<float> x = {{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}, {{9, 10}, {11, 12}}};
  CHECK(take_rows(x, {2, 0}) == Array<float>{{{9, 10}, {11, 12}}, {{1, 2}, {3, 4}}});
  CHECK(take_rows(IndexArray{4, 5, 6}, {1, 1}) == IndexArray{5, 5});
  CHECK_THROWS_AS(take_rows(x, {3}), ShapeError);
}

TEST_CASE("Seq2SeqLoader: every example once per epoch, seeded") {
  Generator gen(1);
  const auto pairs = make_seq_task({SeqTask::reverse, "0123456789", 2, 6}, 37, gen);
  const Vocab v = Vocab::build({char_tokens("0123456789")});
  const Seq2SeqLoader loader(encode_pairs(pairs, v, Tokenizer::chars, v, Tokenizer::chars), 8, 42);
  CHECK(loader.num_examples() == 37);
  CHECK(loader.num_batches() == 5);
  std::multiset<std::size_t> seen;
  std::size_t batches = 0;
  for (const Seq2SeqBatch& b : loader.epoch(0)) {
    ++batches;
    CHECK(b.source.ids.shape()[0] == b.rows.size());
    for (std::size_t i = 0; i < b.rows.size(); ++i) {
      seen.insert(b.rows[i]);
      // Row i really is example rows[i]: decode the source and compare.
      std::vector<Index> src(b.source.ids.data() + i * b.source.ids.shape()[1],
                             b.source.ids.data() + (i + 1) * b.source.ids.shape()[1]);
      CHECK(v.decode(src, Tokenizer::chars) == pairs[b.rows[i]].source);
    }
  }
  CHECK(batches == 5);
  CHECK(seen.size() == 37);
  CHECK(std::set<std::size_t>(seen.begin(), seen.end()).size() == 37);
  CHECK(loader.epoch(3).slices() == Seq2SeqLoader(loader.data(), 8, 42).epoch(3).slices());
  CHECK(loader.epoch(3).slices() != loader.epoch(4).slices());
  CHECK_THROWS_AS(Seq2SeqLoader(EncodedPairs{}, 8, 1), ShapeError);
  CHECK_THROWS_AS(Seq2SeqLoader(loader.data(), 0, 1), ShapeError);
}

TEST_CASE("split_indices: seeded, disjoint, sized by fraction") {
  std::vector<std::string> src;
  for (int i = 0; i < 100; ++i) src.push_back("s" + std::to_string(i));
  const SplitIndices s = split_indices(src, {0.7, 0.2, 0.1}, 5);
  CHECK(s.train.size() == 70);
  CHECK(s.validation.size() == 20);
  CHECK(s.test.size() == 10);
  std::set<std::size_t> all(s.train.begin(), s.train.end());
  all.insert(s.validation.begin(), s.validation.end());
  all.insert(s.test.begin(), s.test.end());
  CHECK(all.size() == 100);
  CHECK(split_indices(src, {0.7, 0.2, 0.1}, 5).train == s.train);
  CHECK(split_indices(src, {0.7, 0.2, 0.1}, 6).train != s.train);
  // A zero fraction means an empty split, whatever the rounding.
  const SplitIndices z = split_indices(std::vector<std::string>(src.begin(), src.begin() + 7), {0.5, 0.5, 0.0}, 1);
  CHECK(z.test.empty());
  CHECK(z.train.size() + z.validation.size() == 7);

  CHECK_THROWS_AS(split_indices(src, {0.7, 0.2, 0.2}, 1), ShapeError);   // sums to 1.1
  CHECK_THROWS_AS(split_indices(src, {0.5, 0.2, 0.2}, 1), ShapeError);   // sums to 0.9
  CHECK_THROWS_AS(split_indices(src, {1.2, -0.1, -0.1}, 1), ShapeError);  // negative
  const SplitIndices e = split_indices({}, {0.8, 0.1, 0.1}, 1);
  CHECK(e.train.empty());
  CHECK(e.test.empty());
}

TEST_CASE("split_examples: a source string never lands in two splits") {
  // Short sequences over a small alphabet repeat constantly if drawn independently; build such
  // a list by hand (with duplicates) and check deduplication.
  Generator gen(3);
  std::vector<Pair> ex;
  for (int i = 0; i < 400; ++i) {
    std::string s(1 + gen.below(2), 'a');
    for (auto& c : s) c = static_cast<char>('a' + gen.below(4));
    ex.push_back({s, std::string(s.rbegin(), s.rend())});
  }
  const Splits<Pair> sp = split_examples(ex, {0.6, 0.2, 0.2}, 9);
  std::set<std::string> tr, va, te;
  for (const auto& p : sp.train) tr.insert(p.source);
  for (const auto& p : sp.validation) va.insert(p.source);
  for (const auto& p : sp.test) te.insert(p.source);
  // 4 + 16 = 20 distinct strings exist; each appears once in total.
  CHECK(sp.train.size() + sp.validation.size() + sp.test.size() == 20);
  CHECK(tr.size() + va.size() + te.size() == 20);
  for (const auto& s : tr) {
    CHECK(va.count(s) == 0);
    CHECK(te.count(s) == 0);
  }
  for (const auto& s : va) CHECK(te.count(s) == 0);
}
