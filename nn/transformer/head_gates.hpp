// Switching the heads of an encoder on and off (head ablation, lesson 07): every self-attention
// layer multiplies head i's output by a gate before out_proj mixes the heads
// (MultiHeadAttention::set_head_gate); 1 leaves a head on, 0 switches it off. And what each head
// is worth by switching it off, alone (ablate_heads) and one after another (prune_heads).
#pragma once

#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include <xtensor/xarray.hpp>

#include "nn/transformer/stacks.hpp"

namespace attnlab::nn {

using HeadGates = std::vector<std::vector<float>>;  // per layer, per head

// Every head of every layer on: the gates that change nothing.
HeadGates all_heads_on(Encoder<float>& encoder);

// Runs `body` with the gates set on every layer, then removes them again (also when body throws).
// ShapeError naming with_head_gates when the gates do not have the encoder's layers and heads.
void with_head_gates(Encoder<float>& encoder, const HeadGates& gates, const std::function<void()>& body);

// ---- what each head is worth: switch it off alone, then prune the least important first

using HeadScore = std::function<double(const HeadGates&)>;  // a score (accuracy, say) with these gates
using HeadId = std::pair<std::size_t, std::size_t>;          // (layer, head)

struct HeadAblation {
  xt::xarray<double> importance;             // (layers, heads): score(all on) - score(this head alone off)
  std::vector<HeadId> least_important_first;  // every head; ties keep the layer-major order
};

// score(all_on) once, then score with each head alone switched off (gate 0). ShapeError naming
// ablate_heads when all_on has no layer, a layer of no heads, or layers of different head counts.
HeadAblation ablate_heads(const HeadGates& all_on, const HeadScore& score);

// Pruning: score with the first k heads of `order` switched off, for k = 0, 1, ..., all but one.
// ShapeError naming prune_heads for an empty order or a head that all_on does not have.
std::vector<double> prune_heads(const HeadGates& all_on, const std::vector<HeadId>& order, const HeadScore& score);

}  // namespace attnlab::nn
