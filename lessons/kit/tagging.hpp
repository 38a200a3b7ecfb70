// Scoring a tagger (one prediction per token) on held-out sequences: the tag of every position,
// then per-token accuracy, exact match (every tag of a row right) and accuracy at each position.
#pragma once

#include <cstddef>
#include <functional>
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

}  // namespace attnlab::lessons
