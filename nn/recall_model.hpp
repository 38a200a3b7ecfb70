// A one-layer attention model for associative recall (nn/data/recall.hpp), with the attention
// swappable: exact (the tiled op), local (a sliding window), linear (elu + 1 features) or
// Linformer (keys and values projected along the sequence). Lesson 18 trains each on the same data
// to measure what an approximation of attention costs in accuracy.
//
//   x = key_embed(keys) + value_embed(values)          (B, L, width); no positions: a lookup by
//   logits = out(attention(q_proj x, k_proj x, v_proj x))   content needs none (and a window is
//                                                            positional by itself)
//
// The loss is the cross-entropy at the asked positions; recall_accuracy scores a whole set in
// batches without the tape.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/ops.hpp"
#include "nn/attention/linformer.hpp"
#include "nn/data/recall.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"

namespace attnlab::nn {

// exact, and the approximations: local (a sliding window), linear, Linformer; and three sparse
// patterns over the exact kernel (which keys each query may see, after Longformer, BigBird and the
// Sparse Transformer, given to sparse_attention as a description, with no mask): the window plus a few fixed global tokens (the first
// kGlobalTokens positions see and are seen by everyone), the window plus global attention on the
// tokens that ask (Longformer's global attention on the question), and the window plus every
// band-th position back and forth (strided).
enum class AttentionKind { exact, local, linear, linformer, fixed_global, asking_global, strided };
inline constexpr std::size_t kGlobalTokens = 4;

// "exact", "local", "linear", "linformer", "fixed_global", "asking_global", "strided": names for metrics.
const char* kind_name(AttentionKind kind);

// The keys each query may see under a sparse pattern over one sequence, (length, length): key j
// for query i when |i - j| <= band, or i or j is global, or (strided) |i - j| is a multiple of
// band. ShapeError naming sparse_pattern for a band of 0 or `global` not of `length` entries.
Mask sparse_pattern(std::size_t length, std::size_t band, const std::vector<bool>& global, bool strided);

class RecallModel : public Module<float> {
 public:
  // band: local attention's window (keys within band positions each side) and Linformer's rank.
  // ShapeError naming RecallModel for a zero width or band, or a band above the length.
  RecallModel(const data::RecallConfig& config, AttentionKind kind, std::size_t width, std::size_t band,
              Generator& gen);

  // Logits (B, L, values). ShapeError naming RecallModel when the batch's length is not the config's.
  Tensor<float> forward(const data::Recall& batch) const;
  // Mean cross-entropy over the asked positions (the others carry data::kNotAsked).
  Tensor<float> loss(const data::Recall& batch) const;
  // Which keys each query may see under a sparse pattern (B, L, L); std::logic_error for the other kinds.
  Allowed pattern(const data::Recall& batch) const;
  // The same pattern as sparse_attention's description (the window band, the global positions of
  // each sequence, the stride band when strided): O(B L) numbers, no mask. std::logic_error for
  // the other kinds.
  SparsePattern pattern_description(const data::Recall& batch) const;
  // The weights (B, L, L) exact attention would give on these sequences, whatever the kind; no tape.
  Array<float> exact_weights(const data::Recall& batch) const;
  // The weights (B, L, L) of the model's own attention, no tape: softmax weights for exact, local
  // (zero outside the band) and the sparse patterns (zero outside the pattern); for linear
  // attention phi(q_i) . phi(k_j) / (phi(q_i) . sum_j phi(k_j) + eps), the weights its output is
  // the sum under. std::logic_error for Linformer, whose weights are over its projected rows, not
  // over the tokens.
  Array<float> attention_weights(const data::Recall& batch) const;

  AttentionKind kind() const { return kind_; }
  const data::RecallConfig& config() const { return config_; }

  Embedding<float> key_embed, value_embed;
  Linear<float> q_proj, k_proj, v_proj, out;
  Linformer<float> linformer;  // registered (trained) only for AttentionKind::linformer

 private:
  Tensor<float> embed(const data::Recall& batch) const;
  Tensor<float> attend(const data::Recall& b, const Tensor<float>& q, const Tensor<float>& k, const Tensor<float>& v) const;
  data::RecallConfig config_;
  AttentionKind kind_;
  std::size_t band_;
};

// The share of the set's asked positions whose value the model predicts (arg-max of the logits),
// `batch` sequences at a time without the tape. ShapeError for a batch of 0 or a set with nothing asked.
double recall_accuracy(const RecallModel& model, const data::Recall& set, std::size_t batch = 64);

}  // namespace attnlab::nn
