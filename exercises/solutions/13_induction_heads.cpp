// Solutions to exercises/13_induction_heads.cpp, and the mistakes the grader must catch.
#include <vector>

#include "exercises/grading/exercise.hpp"

using namespace attnlab;
using namespace attnlab::exercises;

namespace {

// Query i looks right after the most recent earlier occurrence of its own token (from look_from on:
// 1 is the induction head; other rules below are the mistakes).
enum class Rule { after_previous_occurrence, previous_occurrence, previous_token, fixed_offset };

Mask pattern(const std::vector<Index>& tokens, Rule rule) {
  const std::size_t L = tokens.size();
  Mask allowed = xt::zeros<bool>({L, L});
  for (std::size_t i = 0; i < L; ++i) {
    long s = long(i) - 1;
    while (s >= 0 && tokens[std::size_t(s)] != tokens[i]) --s;
    long j = 0;
    if (rule == Rule::previous_token) j = long(i) - 1;
    if (rule == Rule::fixed_offset) j = long(i) - 15;  // a segment of 16 tokens, and its own next one
    if (rule == Rule::after_previous_occurrence && s >= 0) j = s + 1;
    if (rule == Rule::previous_occurrence && s >= 0) j = s;
    allowed(i, std::size_t(std::max(j, 0L))) = true;
  }
  return allowed;
}

Mask induction_pattern(const std::vector<Index>& tokens) { return pattern(tokens, Rule::after_previous_occurrence); }
SOLUTION(induction_pattern);

Mask previous_occurrence(const std::vector<Index>& tokens) { return pattern(tokens, Rule::previous_occurrence); }
WRONG_ANSWER(induction_pattern, previous_occurrence,
             "looks at the earlier occurrence itself: it copies the current token, not the one after it");

Mask previous_token(const std::vector<Index>& tokens) { return pattern(tokens, Rule::previous_token); }
WRONG_ANSWER(induction_pattern, previous_token, "the previous-token head of layer 1 alone");

Mask fixed_offset(const std::vector<Index>& tokens) { return pattern(tokens, Rule::fixed_offset); }
WRONG_ANSWER(induction_pattern, fixed_offset,
             "a fixed look-back (right for a segment of 16 tokens): the segments' lengths vary");

Mask sees_the_answer(const std::vector<Index>& tokens) {
  Mask allowed = xt::zeros<bool>({tokens.size(), tokens.size()});
  for (std::size_t i = 0; i < tokens.size(); ++i) allowed(i, std::min(i + 1, tokens.size() - 1)) = true;
  return allowed;
}
WRONG_ANSWER(induction_pattern, sees_the_answer, "looks at the next token itself: not causal");

}  // namespace
