// Counted n-gram language models with interpolated Kneser-Ney smoothing (Kneser & Ney 1995;
// Chen & Goodman 1998, "interpolated KN" with one discount D for every order), the baseline a
// neural language model has to beat.
//
// Every sequence is read as  <bos> s_1 ... s_m <eos>  with ONE <bos> (as KenLM does): the tokens
// s_1 .. s_m and the <eos> are predicted, <bos> never is. The model of order n predicts a token w
// from the n - 1 tokens h before it (fewer at the start of a sequence):
//
//   P_k(w | h) = max(a(hw) - D, 0) / A(h)  +  D T(h) / A(h) * P_{k-1}(w | h')    when A(h) > 0
//   P_k(w | h) = P_{k-1}(w | h')                                                  when A(h) = 0
//   P_0(w)     = 1 / (V - 1)                                     (every id but <bos>, never predicted)
//
// with h' = h without its first token, A(h) = sum_w a(hw), T(h) = #{w : a(hw) > 0}. The counts
// a() are KenLM's adjusted counts: at the highest order n, and for n-grams that begin with <bos>
// (nothing can precede them), the raw count c(g); below the highest order, the continuation count
// N1+(. g) = the number of distinct tokens seen just before g. That is Kneser-Ney's idea: a lower
// order is only asked when the longer context is rare or unseen, so it should predict how many
// contexts a token completes ("Francisco" follows only "San"), not how often it occurs.
// Each P_k sums to 1 over the V - 1 ids other than <bos>: the discounted mass D T(h) / A(h) is exactly what the
// lower order hands out (a(hw) >= 1 > D wherever a(hw) > 0, so max(., 0) never clips).
//
// One object holds the counts of every order up to max_order, so the models of orders 1 .. n are
// all scored in one pass (the order-k model differs from the order-n model's level k only in
// using raw counts at its top level). Storage: per order, the sorted keys (prefix id, token) of
// the n-grams seen -- a trie laid flat, where the n-grams of one context are contiguous.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/array.hpp"

namespace attnlab::nn::lm {

class KneserNey {
 public:
  // Counts every n-gram of order <= max_order in the sequences (ids in [0, vocab), none equal to
  // bos; each sequence read as <bos> s <eos>). 0 < discount <= 1. ShapeError naming KneserNey and
  // the value at fault otherwise.
  KneserNey(const std::vector<std::vector<Index>>& sequences, std::size_t vocab, std::size_t max_order, Index bos,
            Index eos, double discount = 0.75);

  std::size_t max_order() const { return levels_.size(); }
  std::size_t vocab() const { return vocab_; }
  double discount() const { return discount_; }
  // Distinct n-grams of this order in the training sequences (order 1: the distinct tokens, <bos>
  // included).
  std::size_t distinct(std::size_t order) const;

  // P(next | context) under the model of `order` (1 .. max_order). `context` is what came before
  // `next` in its sequence: either the whole prefix starting with bos, or any number of tokens
  // from the middle of a sequence (no bos); only the last order - 1 are used.
  double probability(const std::vector<Index>& context, Index next, std::size_t order) const;
  // P(w | context) for every id w in [0, vocab): 0 for <bos>, and they sum to 1.
  std::vector<double> distribution(const std::vector<Index>& context, std::size_t order) const;

  // -log P (nats) of every predicted token of the sequences (each s_1 .. s_m and the <eos>), under
  // the models of orders 1 .. max_order at once: result[k - 1] holds the order-k model's values,
  // in sequence order. One pass over the text whatever max_order is.
  std::vector<std::vector<double>> token_nats(const std::vector<std::vector<Index>>& sequences) const;
  // Their means: nats per predicted token of each order's model.
  std::vector<double> mean_nats(const std::vector<std::vector<Index>>& sequences) const;
  // For orders 1 .. max_order, the share of the predicted tokens of the sequences whose full
  // context (the order - 1 tokens before, fewer only at a sequence's start) was followed by some
  // token in training: where the order-k model has counts of its own rather than backing off.
  std::vector<double> context_coverage(const std::vector<std::vector<Index>>& sequences) const;

 private:
  static constexpr std::uint32_t none = 0xffffffffu;
  // The n-grams of one order. Gram i is (prefix, token) with key = prefix * vocab + token, keys
  // sorted; prefix is the id of the (order - 1)-gram before the token (order 1: prefix 0).
  struct Level {
    std::vector<std::uint64_t> keys;
    std::vector<std::uint32_t> raw;         // c(g): times g was predicted (0 for the gram <bos>)
    std::vector<std::uint32_t> adjusted;    // N1+(. g), or c(g) when g begins with <bos>
    // Per context h (an id of the order below; order 1: the one empty context), for the raw and
    // for the adjusted counts of its continuations: A(h) and T(h).
    std::vector<std::uint64_t> raw_total, adjusted_total;
    std::vector<std::uint32_t> raw_types, adjusted_types;
  };

  // Id of the gram (prefix, token) at this order (1-based), or none.
  std::uint32_t find(std::size_t order, std::uint32_t prefix, Index token) const;
  // One interpolation step at `order`: from P_{order-1}(w | h') to P_order(w | h), h = context id
  // at order - 1 (none: unseen, and the step changes nothing), gram = id of hw (none: unseen).
  double step(std::size_t order, std::uint32_t context, std::uint32_t gram, double lower, bool top) const;
  // The ids of the grams ending at each position of a padded sequence, order by order: ids[k-1][p].
  std::vector<std::vector<std::uint32_t>> gram_ids(const std::vector<Index>& x) const;
  // <bos> s <eos>, s checked.
  std::vector<Index> padded(const std::vector<Index>& s) const;
  static std::uint32_t context_id(const std::vector<std::vector<std::uint32_t>>& ids, std::size_t order, std::size_t p);
  void check_token(Index t, const char* what) const;
  double uniform() const { return 1.0 / double(vocab_ - 1); }  // P_0: the V - 1 ids but <bos>

  std::size_t vocab_;
  Index bos_, eos_;
  double discount_;
  std::vector<Level> levels_;
};

}  // namespace attnlab::nn::lm
