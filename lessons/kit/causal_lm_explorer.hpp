// A causal language model (lesson 10's GPT) reading a text, as the attention explorer's input: one
// forward over the ids with the queries and keys kept, every head of every layer, the characters
// as tick labels (token_labels: <bos> as it is, a space and a newline made visible).
#pragma once

#include <string>
#include <vector>

#include "lessons/kit/explorer.hpp"
#include "nn/data/vocab.hpp"
#include "nn/transformer/causal_lm.hpp"

namespace attnlab::lessons {

// The model's attention over `ids` (one sequence, no longer than its max_length) with its score
// parts, for the neuron view; runs without the tape and leaves keep_score_parts off.
// std::invalid_argument naming causal_lm_attention_input for no ids or more than max_length.
AttentionInput causal_lm_attention_input(nn::CausalLM<float>& model, const nn::data::Vocab& vocab,
                                         const std::vector<Index>& ids, const std::string& name);

}  // namespace attnlab::lessons
