// A decoder-only language model (GPT): causal self-attention blocks, no cross-attention.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "nn/transformer/scheme.hpp"
#include "nn/transformer/stacks.hpp"

namespace attnlab::nn {

struct CausalLMConfig {
  std::size_t vocab = 100, num_layers = 2;
  std::size_t max_length = 512;
  LayerConfig layer{128, 8, 512, 0.1, /*norm_first=*/true, Activation::GELU, 1e-5};
  Positional positional = Positional::Learned;
  bool tie_output = true;
};

// The keys and values of every layer for the positions generated so far (KV cache).
template <class T>
struct CausalLMCache {
  std::vector<KVCache<T>> layers;
  std::size_t length() const { return layers.empty() ? 0 : layers.front().length(); }
  // What the cache holds: every layer's keys and values, sizeof(T) bytes a number. With h/g query
  // heads to a key/value head (grouped-query attention) that is h/g times less than multi-head.
  std::size_t bytes() const {
    std::size_t n = 0;
    for (const KVCache<T>& l : layers) n += l.keys.size() + l.values.size();
    return n * sizeof(T);
  }
};

// GPT: token embedding + positions, pre-norm causal self-attention blocks (an Encoder run with
// causal = true: a decoder-only model has no cross-attention), final norm, output projection.
template <class T>
class CausalLM : public Module<T> {
 public:
  CausalLM(const CausalLMConfig& config, Generator& gen);
  // ids (B, L) -> logits (B, L, vocab); position t sees tokens 0..t only.
  Tensor<T> forward(const IndexArray& ids, const std::optional<Allowed>& allowed_keys = std::nullopt);
  // Generation with a KV cache: the logits (B, n, vocab) of new tokens ids (B, n) that follow the
  // cache.length() positions already in `cache` (an empty cache: the prompt), whose keys and values
  // are appended to it. Equal to the last n rows of forward() on the whole sequence, but each new
  // token costs one position's work instead of the whole prefix's. Inference only: the model must
  // be in eval mode; runs without the tape.
  Tensor<T> forward_cached(const IndexArray& ids, CausalLMCache<T>& cache);
  std::vector<Tensor<T>> attention_weights() const { return blocks.attention_weights(); }
  const CausalLMConfig& config() const { return config_; }

  Embedding<T> embed;
  PositionalScheme<T> positional;
  Dropout<T> dropout;
  Encoder<T> blocks;  // with its final norm
  std::unique_ptr<Linear<T>> output;  // "output.weight", "output.bias" when untied
  Tensor<T> output_bias;              // "output_bias" when tied (the weight is embed.weight)

 private:
  CausalLMConfig config_;
};

}  // namespace attnlab::nn
