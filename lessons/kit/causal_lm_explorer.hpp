// A causal language model (lesson 11's GPT) reading a text, as the attention explorer's input: one
// forward over the ids with the queries and keys kept, every head of every layer, the characters
// as tick labels (token_labels: <bos> as it is, a space and a newline made visible).
#pragma once

#include <string>
#include <vector>

#include "lessons/kit/explorer.hpp"
#include "nn/data/vocab.hpp"
#include "nn/transformer/causal_lm.hpp"
#include "plots/figure.hpp"

namespace attnlab::lessons {

// The model's attention over `ids` (one sequence, no longer than its max_length) with its score
// parts, for the neuron view; runs without the tape and leaves keep_score_parts off. A model whose
// config names its key/value heads (layer.kv_heads > 0: grouped-query attention) gives the input its
// kv_heads, so that the page groups the query heads sharing one.
// std::invalid_argument naming causal_lm_attention_input for no ids or more than max_length.
AttentionInput causal_lm_attention_input(nn::CausalLM<float>& model, const nn::data::Vocab& vocab,
                                         const std::vector<Index>& ids, const std::string& name);

// The causal mask over a text as a figure: 1 where query t may attend (keys 0 .. t), 0 above the
// diagonal, each cell annotated, the labels on both axes (keys across, queries down), 1500 x 1400.
// std::invalid_argument naming causal_mask_figure for no labels.
plots::Figure causal_mask_figure(const std::vector<std::string>& labels, const std::string& title);

}  // namespace attnlab::lessons
