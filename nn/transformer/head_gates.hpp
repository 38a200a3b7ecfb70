// Switching the heads of an encoder on and off (head ablation, lesson 07): every self-attention
// layer multiplies head i's output by a gate before out_proj mixes the heads
// (MultiHeadAttention::set_head_gate); 1 leaves a head on, 0 switches it off.
#pragma once

#include <functional>
#include <vector>

#include "nn/transformer/stacks.hpp"

namespace attnlab::nn {

using HeadGates = std::vector<std::vector<float>>;  // per layer, per head

// Every head of every layer on: the gates that change nothing.
HeadGates all_heads_on(Encoder<float>& encoder);

// Runs `body` with the gates set on every layer, then removes them again (also when body throws).
// ShapeError naming with_head_gates when the gates do not have the encoder's layers and heads.
void with_head_gates(Encoder<float>& encoder, const HeadGates& gates, const std::function<void()>& body);

}  // namespace attnlab::nn
