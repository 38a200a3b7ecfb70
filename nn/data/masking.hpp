// BERT's masking rule (Devlin et al. 2018, section 3.1): of a sequence's tokens, 15 % are chosen
// as targets; a chosen token is replaced by [MASK] 80 % of the time, by a random token 10 % of
// the time and left as it is 10 % of the time; the model must predict the original at every
// chosen place. The [MASK] never occurs when the model is used later, so the 10 % random and 10 %
// unchanged force it to keep a representation of every token it reads, not only of the masks.
#pragma once

#include <cstdint>
#include <vector>

#include "core/array.hpp"
#include "core/random.hpp"

namespace attnlab::nn::data {

struct MaskingRule {
  double select = 0.15;  // the share of the eligible tokens chosen as targets
  double mask = 0.8;     // of those, replaced by the [MASK] id
  double random = 0.1;   // replaced by a token drawn uniformly from the eligible ids; the rest kept
};

enum class MaskChoice : std::uint8_t { none, masked, random, kept };

struct MaskedTokens {
  std::vector<Index> input;         // what the model reads
  std::vector<Index> target;        // the original id at the chosen places, `ignore` elsewhere
  std::vector<MaskChoice> choice;   // what happened at each place
};

// Eligible tokens are the ids in [first, end) (the characters: not padding, [CLS], separators or
// <unk>). Of the n eligible ones, round(select * n) are chosen, at least one when n > 0, uniformly
// without replacement; each chosen one is masked, replaced or kept by one draw with the rule's
// probabilities (a random replacement may draw the original id: 1 in end - first). ShapeError
// when the rule's shares are outside [0, 1] or mask + random > 1, first >= end, or mask_id is
// itself eligible.
MaskedTokens mask_tokens(const std::vector<Index>& ids, Index mask_id, Index first, Index end, Generator& gen,
                         const MaskingRule& rule = {}, Index ignore = -100);

}  // namespace attnlab::nn::data
