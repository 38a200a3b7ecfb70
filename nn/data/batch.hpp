// Batching: ragged token-id sequences -> padded (B, Lmax) arrays with lengths and which tokens
// are real; source/target pairs shifted for teacher forcing; seeded per-epoch order; batch loops.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/allowed.hpp"
#include "core/array.hpp"
#include "nn/data/split.hpp"
#include "nn/data/vocab.hpp"

namespace attnlab::nn::data {

using Sequence = std::vector<Index>;

struct PaddedBatch {
  IndexArray ids;      // (B, Lmax), pad_id after each sequence's end
  IndexArray lengths;  // (B,)
  Mask real;           // (B, Lmax), true = a real token, false = padding
  // The real tokens as the keys an attention may use.
  Allowed allowed() const { return Allowed::where(real); }
};

// Throws ShapeError on zero sequences: a (0, L) batch has no Lmax and is always a caller bug.
PaddedBatch pad_sequences(const std::vector<Sequence>& seqs, Index pad_id = Vocab::pad);

// Teacher forcing. The decoder reads <bos> y_1 .. y_n and must predict y_1 .. y_n <eos>:
// input and target are the same sequence shifted by one, so they share lengths and mask.
struct Seq2SeqBatch {
  PaddedBatch source;          // x, followed by <eos> when source_eos
  PaddedBatch decoder_input;   // <bos> y
  PaddedBatch decoder_target;  // y <eos>
  std::vector<std::size_t> rows;  // which examples of the data set, in batch order
};

struct EncodedPairs {
  std::vector<Sequence> source, target;
  std::size_t size() const { return source.size(); }
};

// Encode any list of examples with .source and .target strings (Pair, TranslationPair).
template <class Examples>
EncodedPairs encode_pairs(const Examples& examples, const Vocab& source_vocab, Tokenizer source_tok,
                          const Vocab& target_vocab, Tokenizer target_tok) {
  EncodedPairs out;
  out.source.reserve(examples.size());
  out.target.reserve(examples.size());
  for (const auto& e : examples) {
    out.source.push_back(source_vocab.encode(e.source, source_tok));
    out.target.push_back(target_vocab.encode(e.target, target_tok));
  }
  return out;
}

// The source and target vocabularies of a training set (any examples with .source and .target).
struct PairVocabs {
  Vocab source, target;
};

template <class Examples>
PairVocabs build_vocabs(const Examples& train, Tokenizer source_tok, Tokenizer target_tok) {
  std::vector<std::vector<std::string>> src, tgt;
  for (const auto& e : train) {
    src.push_back(tokenize(e.source, source_tok));
    tgt.push_back(tokenize(e.target, target_tok));
  }
  return {Vocab::build(src), Vocab::build(tgt)};
}

// A data set ready for a sequence-to-sequence model: the vocabularies of its training pairs, and
// every split encoded with them (held-out words the training split lacks become <unk>).
struct EncodedSplits {
  Vocab source_vocab, target_vocab;
  EncodedPairs train, validation, test;
};

template <class E>
EncodedSplits encode_splits(const Splits<E>& splits, Tokenizer source_tok, Tokenizer target_tok) {
  PairVocabs v = build_vocabs(splits.train, source_tok, target_tok);
  EncodedSplits out{std::move(v.source), std::move(v.target), {}, {}, {}};
  auto encode = [&](const std::vector<E>& pairs) {
    return encode_pairs(pairs, out.source_vocab, source_tok, out.target_vocab, target_tok);
  };
  out.train = encode(splits.train);
  out.validation = encode(splits.validation);
  out.test = encode(splits.test);
  return out;
}

// d2l's convention: the source ends with <eos> too, so an RNN encoder sees where it ends.
Seq2SeqBatch make_seq2seq_batch(const EncodedPairs& data, const std::vector<std::size_t>& rows,
                                bool source_eos = true);

// Rows 0, 1, ..., n-1: the first n examples of a set, in order.
std::vector<std::size_t> first_rows(std::size_t n);
// The first n pairs of a set (all of them when it holds fewer), in order: a sample to score.
EncodedPairs first_pairs(const EncodedPairs& set, std::size_t n);

// The example order of one epoch, a function of (seed, epoch) alone: epoch 7 has the same
// order whether or not epochs 0..6 ran, so a resumed run sees the same data. Identity order
// when shuffle is false.
std::vector<std::size_t> epoch_order(std::size_t n, std::uint64_t seed, std::size_t epoch, bool shuffle = true);

// Consecutive slices of `order` of batch_size examples; the last, partial slice is kept.
std::vector<std::vector<std::size_t>> batch_slices(const std::vector<std::size_t>& order, std::size_t batch_size);

// Rows of an array along axis 0, e.g. a minibatch of images (N,28,28) -> (B,28,28).
template <class T>
Array<T> take_rows(const Array<T>& a, const std::vector<std::size_t>& rows);

// for (const Seq2SeqBatch& b : loader.epoch(e)) { ... }
class Seq2SeqLoader {
 public:
  Seq2SeqLoader(EncodedPairs data, std::size_t batch_size, std::uint64_t seed, bool shuffle = true,
                bool source_eos = true);

  std::size_t num_examples() const { return data_.size(); }
  std::size_t num_batches() const { return (data_.size() + batch_size_ - 1) / batch_size_; }
  const EncodedPairs& data() const { return data_; }

  class Epoch {
   public:
    struct iterator {
      const Epoch* epoch;
      std::size_t i;
      Seq2SeqBatch operator*() const { return make_seq2seq_batch(epoch->loader_->data_, epoch->slices_[i], epoch->loader_->source_eos_); }
      iterator& operator++() { ++i; return *this; }
      bool operator!=(const iterator& o) const { return i != o.i; }
      bool operator==(const iterator& o) const { return i == o.i; }
    };
    iterator begin() const { return {this, 0}; }
    iterator end() const { return {this, slices_.size()}; }
    std::size_t size() const { return slices_.size(); }
    const std::vector<std::vector<std::size_t>>& slices() const { return slices_; }

   private:
    friend class Seq2SeqLoader;
    Epoch(const Seq2SeqLoader* l, std::vector<std::vector<std::size_t>> s) : loader_(l), slices_(std::move(s)) {}
    const Seq2SeqLoader* loader_;
    std::vector<std::vector<std::size_t>> slices_;
  };

  Epoch epoch(std::size_t e) const;

 private:
  EncodedPairs data_;
  std::size_t batch_size_;
  std::uint64_t seed_;
  bool shuffle_, source_eos_;
};

}  // namespace attnlab::nn::data
