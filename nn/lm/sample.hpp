// Sampling text from a causal language model: temperature, top-k, and generation with or without
// the KV cache (CausalLM::forward_cached).
#pragma once

#include <cstddef>
#include <vector>

#include "core/array.hpp"
#include "core/random.hpp"
#include "nn/transformer/causal_lm.hpp"

namespace attnlab::nn::lm {

// One draw from p_i = softmax(logits / temperature)_i, restricted to the top_k largest logits
// (0: all of them; ties at the k-th value go to the lower ids) and renormalized. Temperature < 1
// sharpens the distribution (toward the argmax), > 1 flattens it (toward uniform). One uniform
// draw from gen, inverted through the cumulative sum in id order. ShapeError naming sample_token
// for an empty vector, a temperature <= 0 or non-finite logits.
Index sample_token(const std::vector<double>& logits, double temperature, std::size_t top_k, Generator& gen);

struct SampleOptions {
  double temperature = 1.0;
  std::size_t top_k = 0;        // 0: sample from every token
  std::size_t max_tokens = 200; // generated tokens at most, the end token included
  bool stop_at_end = true;      // stop after the end token (false: always max_tokens, for timing)
  bool use_cache = true;        // the KV cache; false: the whole context again for every token
};

// Continues `prompt` (non-empty, usually <bos> and perhaps some text) one sampled token at a time
// until `end` (included) or options.max_tokens tokens; returns the generated tokens only. The
// context never grows past the model's max_length: when it is full, it restarts from its last
// max_length / 2 tokens (both paths alike, so with and without the cache the logits are
// the same up to rounding, and with one generator the same tokens come out). The model must be in
// eval mode.
template <class T>
std::vector<Index> sample(CausalLM<T>& model, const std::vector<Index>& prompt, Index end, const SampleOptions& options,
                          Generator& gen);

}  // namespace attnlab::nn::lm
