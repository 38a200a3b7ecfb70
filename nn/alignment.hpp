// Word alignments scored the way machine translation scores them. An alignment is a link matrix
// (target words, source words), true where target word j translates source word i; a model's
// attention map becomes one by taking each row's peak.
//
// Alignment error rate (Och & Ney 2003), pooled over a corpus: hypothesis links A against sure
// links S and possible links P (S inside P; with one kind of gold link, P = S):
//   AER = 1 - (|A & S| + |A & P|) / (|A| + |S|)
// 0 when A = S, 1 when no link is right. With P = S it is 1 - F1 of the links: a missing link and
// a wrong one cost alike, so a map that links nothing scores 1, not 0.
#pragma once

#include <cstddef>
#include <vector>

#include "core/array.hpp"

namespace attnlab::nn {

// Link counts of a corpus; add sentences with +=.
struct AlignmentCounts {
  std::size_t hypothesis = 0;     // |A|
  std::size_t sure = 0;           // |S|
  std::size_t hit_sure = 0;       // |A & S|
  std::size_t hit_possible = 0;   // |A & P|
  AlignmentCounts& operator+=(const AlignmentCounts& o);
  // 1 - (hit_sure + hit_possible) / (hypothesis + sure); ShapeError when both are empty.
  double error_rate() const;
};

// One sentence's counts. Masks (T, S) of one shape; possible must hold every sure link (pass
// sure again when there is only one kind). ShapeError naming the shapes otherwise.
AlignmentCounts count_links(const Mask& hypothesis, const Mask& sure, const Mask& possible);

// AER of a corpus of sentences, P = S.
double alignment_error_rate(const std::vector<Mask>& hypotheses, const std::vector<Mask>& sure);

// The hard alignment of an attention map (T, K), rows = target positions (queries), columns =
// source positions (keys): each row links to its largest weight (the first on ties). Only the
// first `words` columns are source words: a row whose peak lies past them (on an <eos> key) links
// to nothing. Returns (T, words).
template <class T>
Mask peak_links(const Array<T>& attention, std::size_t words);

}  // namespace attnlab::nn
