// How fast a causal language model writes, with the KV cache and without it (nn/lm/sample): the
// same tokens drawn both ways from one seed, the two timed in turn within every round
// (interleaved_medians), so a burst of load from a neighbour hits both alike.
#pragma once

#include <cstddef>

#include "nn/transformer/causal_lm.hpp"

namespace attnlab::lessons {

struct GenerationSpeed {
  double with_cache = 0, without_cache = 0;  // tokens a second, batch of one: medians over the rounds
  double ratio() const { return with_cache / without_cache; }
};

// `tokens` tokens generated after the one-token prompt `start` (never stopping early), `rounds`
// counted rounds after one warm-up. The model must be in eval mode. std::invalid_argument naming
// generation_speed for no tokens or rounds below 1.
GenerationSpeed generation_speed(nn::CausalLM<float>& model, Index start, std::size_t tokens, int rounds);

}  // namespace attnlab::lessons
