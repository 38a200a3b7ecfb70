// Scoring a tagger (one prediction per token) on held-out sequences: the tag of every position,
// then per-token accuracy, exact match (every tag of a row right) and accuracy at each position.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "nn/data/tagged.hpp"
#include "nn/metrics.hpp"

namespace attnlab::lessons {

// logits_of: inputs (B, L) -> logits (B, L, classes). Runs in batches, without the tape.
using Tagger = std::function<Tensor<float>(const IndexArray& inputs)>;

// The most likely tag of every position, (N, L).
IndexArray predict_tags(const Tagger& logits_of, const IndexArray& inputs, std::size_t batch = 256);

struct TagScores {
  double token = 0.0, exact = 0.0;
  std::vector<double> by_position;
};
// Positions whose target is `ignore` (a position with no defined tag) are not scored.
TagScores score_tags(const IndexArray& predictions, const IndexArray& targets, Index ignore = nn::kNoIgnore);

// predict_tags, then score_tags, on a held-out set.
TagScores evaluate_tagger(const Tagger& logits_of, const nn::data::Tagged& held_out, std::size_t batch = 256,
                          Index ignore = nn::kNoIgnore);

// A tagger scored on held-out sets at the training length and at a longer one, where it may not
// run (a learned table of positions has no row past its last): then `long_failure` holds the
// ShapeError's message and at_long stays empty. Other errors propagate.
struct LengthScores {
  TagScores at_train, at_long;
  std::string long_failure;  // why the tagger cannot run at the long length (empty: it can)
  bool runs_long() const { return long_failure.empty(); }
};
LengthScores evaluate_at_two_lengths(const Tagger& logits_of, const nn::data::Tagged& held_out,
                                     const nn::data::Tagged& held_out_long, std::size_t batch = 256);

}  // namespace attnlab::lessons
