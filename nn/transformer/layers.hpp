// The two Transformer blocks, post-norm or pre-norm, with PyTorch's structure and names
// (nn.TransformerEncoderLayer, nn.TransformerDecoderLayer), so that their state_dicts load by name:
//   EncoderLayer   x -> self_attn -> feed-forward (linear1, dropout, linear2), each wrapped in a
//                  residual and a LayerNorm (norm1, norm2)
//   DecoderLayer   y -> masked self_attn -> multihead_attn (cross-attention on the encoder's
//                  memory) -> feed-forward, norms norm1, norm2, norm3
// Post-norm (the paper):  x = norm(x + drop(sublayer(x)))
// Pre-norm (GPT-2, ViT):  x = x + drop(sublayer(norm(x)))   -- the residual path stays an identity,
//                         which is why deep pre-norm stacks train without warm-up tricks; they
//                         need a final norm after the last layer.
#pragma once

#include "nn/attention/multi_head.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// What every layer of a stack shares.
struct LayerConfig {
  std::size_t d_model = 128;
  std::size_t heads = 8;
  std::size_t d_ff = 512;
  double dropout = 0.1;       // on sublayer outputs, inside the FF and on attention weights
  bool norm_first = false;    // false: post-norm (the paper); true: pre-norm
  Activation activation = Activation::ReLU;
  double eps = 1e-5;          // LayerNorm epsilon
  // Key/value heads of the self-attention (grouped-query attention, nn/attention/multi_head.hpp):
  // 0 as many as heads (multi-head), 1 multi-query, else a divisor of heads.
  std::size_t kv_heads = 0;
};

template <class T>
class EncoderLayer : public Module<T> {
 public:
  EncoderLayer(const LayerConfig& config, Generator& gen);
  // x (B, L, d). options go to the self-attention: allowed keys (padding), causal (decoder-only
  // models), score bias (relative / ALiBi), qk transform (RoPE).
  Tensor<T> forward(const Tensor<T>& x, const MultiHeadOptions<T>& options = {});
  // The same block on new positions that follow the cached ones (causal self-attention through
  // MultiHeadAttention::forward_cached; generation in a decoder-only model).
  Tensor<T> forward_cached(const Tensor<T>& x, KVCache<T>& cache, const MultiHeadOptions<T>& options = {});
  // The self-attention weights (B, h, L, L) of the last forward (not differentiable; for plots).
  const Tensor<T>& attention() const { return attention_; }
  const LayerConfig& config() const { return config_; }

  MultiHeadAttention<T> self_attn;
  Linear<T> linear1;  // the feed-forward: linear2(dropout(act(linear1(x))))
  Dropout<T> dropout;
  Linear<T> linear2;
  LayerNorm<T> norm1, norm2;
  Dropout<T> dropout1, dropout2;  // on the sublayers' outputs

 private:
  // The residual block around any self-attention: attend(h) -> AttentionResult.
  template <class Attend>
  Tensor<T> block(const Tensor<T>& x, const Attend& attend);
  LayerConfig config_;
  Tensor<T> attention_;
};

template <class T>
class DecoderLayer : public Module<T> {
 public:
  DecoderLayer(const LayerConfig& config, Generator& gen);
  // x (B, T, d) the target so far, memory (B, S, d) the encoder's output. self_options is usually
  // causal with the target's allowed keys; cross_options carries the source's allowed keys.
  Tensor<T> forward(const Tensor<T>& x, const Tensor<T>& memory,
                    const MultiHeadOptions<T>& self_options,
                    const MultiHeadOptions<T>& cross_options = {});
  const Tensor<T>& self_attention() const { return self_weights_; }    // (B, h, T, T)
  const Tensor<T>& cross_attention() const { return cross_weights_; }  // (B, h, T, S)
  const LayerConfig& config() const { return config_; }

  MultiHeadAttention<T> self_attn;
  MultiHeadAttention<T> multihead_attn;  // the cross-attention: queries from y, keys from memory
  Linear<T> linear1;                     // the feed-forward: linear2(dropout(act(linear1(x))))
  Dropout<T> dropout;
  Linear<T> linear2;
  LayerNorm<T> norm1, norm2, norm3;
  Dropout<T> dropout1, dropout2, dropout3;  // on the sublayers' outputs

 private:
  LayerConfig config_;
  Tensor<T> self_weights_, cross_weights_;
};

}  // namespace attnlab::nn
