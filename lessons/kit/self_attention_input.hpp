// A Transformer's self-attention as the explorer's input (lessons/kit/explorer.hpp) and as figures:
// from attention_weights(), one (B, h, L, L) tensor per layer, the weights of one example.
#pragma once

#include <string>
#include <vector>

#include "core/tensor.hpp"
#include "lessons/kit/explorer.hpp"
#include "nn/attention/multi_head.hpp"
#include "plots/figure.hpp"

namespace attnlab::lessons {

// Every layer and head of example `example`, queries and keys both `tokens`, layers named
// "layer 1", "layer 2", ... std::invalid_argument naming self_attention_input when there is no
// layer, a layer is not (B, h, L, L) with L = tokens.size(), or example >= B.
AttentionInput self_attention_input(const std::string& name, const std::vector<std::string>& tokens,
                                    const std::vector<Tensor<float>>& layers, std::size_t example = 0);

// `in` (from self_attention_input) given the queries, keys and bias of every layer and head of
// example `example`, for the explorer's neuron view: `layers` is Encoder::score_parts() after the
// same forward that gave the weights (keep_score_parts(true) before it). std::invalid_argument
// naming with_score_parts when the layer count, a head count or a shape does not fit `in`.
AttentionInput with_score_parts(AttentionInput in, const std::vector<nn::ScoreParts<float>>& layers,
                                std::size_t example = 0);

// The self-attention among tokens [begin, begin + count) of `in` only (queries and keys alike), to
// draw a few characters of a long text large enough to read; the rows keep their weights (they
// need not sum to 1), and the span has no queries and keys (no neuron view). std::invalid_argument naming self_attention_span when the span is not in `in`.
AttentionInput self_attention_span(const AttentionInput& in, std::size_t begin, std::size_t count);

// One figure per layer of `in`: every head of it (two panels a row, on one colour scale for all
// the layers, from 0 to the largest weight), titled "<title>, layer N".
std::vector<plots::Figure> layer_head_grids(const AttentionInput& in, const std::string& title);

}  // namespace attnlab::lessons
