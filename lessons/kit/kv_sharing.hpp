// What sharing keys and values buys a GPT (multi-query and grouped-query attention): one model of a
// given number of key/value heads trained on random windows of a stream (train_on_windows), then
// measured: the bytes its KV cache holds per token, its held-out bits per token, and how fast it
// writes with the cache. Lesson 12 runs it for 4, 2 and 1 key/value heads, all else alike.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "lessons/kit/window_training.hpp"
#include "nn/transformer/causal_lm.hpp"

namespace attnlab::lessons {

struct KvSharing {
  std::size_t kv_heads = 0, parameters = 0;
  double bytes_per_token = 0;   // CausalLMCache::bytes() / length after the probe went through the cache
  double validation_bpc = 0;    // on every held-out sequence, after training
  double tokens_per_second = 0; // generating from <bos> with the cache, batch of one (median of the rounds)
};

// config with layer.kv_heads = kv_heads, drawn from Generator(init_seed), trained by
// train_on_windows(stream, held_out, plan, recipe) with one evaluation at the end (plan.evaluations
// is set to 1). The probe (at most max_length ids) goes through the cache one token at a time.
// Errors: MultiHeadAttention's for a kv_heads that does not divide the heads, train_on_windows's,
// and std::invalid_argument naming measure_kv_sharing for an empty probe or one past max_length.
KvSharing measure_kv_sharing(nn::CausalLMConfig config, std::size_t kv_heads, std::uint64_t init_seed,
                             const std::vector<Index>& stream, const std::vector<std::vector<Index>>& held_out,
                             WindowPlan plan, const Recipe& recipe, const std::vector<Index>& probe, int speed_rounds);

// The same, keeping what was trained: the model (left in eval mode) and its training history, for a
// lesson that goes on to generate with it. The same errors, naming train_kv_sharing.
struct KvSharingRun {
  KvSharing measured;
  std::unique_ptr<nn::CausalLM<float>> model;
  History history;
};
KvSharingRun train_kv_sharing(nn::CausalLMConfig config, std::size_t kv_heads, std::uint64_t init_seed,
                              const std::vector<Index>& stream, const std::vector<std::vector<Index>>& held_out,
                              WindowPlan plan, const Recipe& recipe, const std::vector<Index>& probe, int speed_rounds);

}  // namespace attnlab::lessons
