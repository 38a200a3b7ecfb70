// An image captioner with attention over patches (Show, Attend and Tell, Xu et al. 2015, on the
// Vision Transformer's patches instead of a CNN's feature map), soft or hard.
//
//   encoder   images (B, H, W) -> patches -> Linear -> + learned positions -> pre-norm Transformer
//             encoder -> final norm: annotations a_i (B, N, d), one per patch (lesson 16's ViT
//             without its class token and head: nn::PatchEmbedding, LearnedPositionalEmbedding, Encoder)
//   decoder   s_0 = 0, or tanh(W_init mean_i a_i) with summary_init (the paper's); at step t, with
//             the previous word y_{t-1}:
//               e_ti = v^T tanh(W_q s_{t-1} + W_k a_i)        (the additive score, f_att of the paper)
//               alpha_t = softmax_i(e_ti)                       (B, N)
//               soft: z_t = sum_i alpha_ti a_i                  the expected patch, differentiable
//               hard: z_t = a_{c_t}, c_t ~ alpha_t              one patch, drawn; not differentiable
//               s_t = GRU([emb(y_{t-1}); z_t], s_{t-1});  logits_t = W_o [s_t; z_t]
//
// Hard attention trains by the paper's variational bound: with r = log p(y | c, x), the gradient of
// E_c[log p(y | c, x)] is E_c[grad log p(y | c, x) + (r - b) grad log p(c | x)] (REINFORCE, b a
// baseline), so the surrogate to descend is -[log p(y | c, x) + (r - b) sum_t log alpha_{t, c_t}]
// with r - b held constant: CaptionPass::log_choice holds sum-able log alpha_{t, c_t} (log_of_chosen).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>

#include "core/ops.hpp"
#include "core/random.hpp"
#include "nn/attention/scores.hpp"
#include "nn/gru.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"
#include "nn/vit.hpp"

namespace attnlab::nn {

// Lesson 16's ViT without the class token and the head: every patch comes out as an annotation.
// Uses config's image size, channels, patch, num_layers and layer (num_classes is not read).
// num_layers may be 0: then each annotation is its own patch's embedding and position, normed, and
// knows nothing of any other patch (as a CNN feature with a small receptive field); with layers,
// self-attention mixes the patches before the decoder reads them.
template <class T>
class PatchEncoder : public Module<T> {
 public:
  PatchEncoder(const ViTConfig& config, Generator& gen);
  // images (B, H, W) with one channel, or (B, C, H, W) -> annotations (B, N, d), N = (H/p)(W/p).
  // ShapeError naming PatchEncoder for images of another size.
  Tensor<T> forward(const Tensor<T>& images);
  std::size_t num_patches() const { return num_patches_; }

  PatchEmbedding<T> patch_embed;
  LearnedPositionalEmbedding<T> pos_embed;  // (N, d)
  std::unique_ptr<Encoder<T>> encoder;      // pre-norm, without a final norm; null at 0 layers
  LayerNorm<T> norm;                        // the final norm

 private:
  ViTConfig config_;
  std::size_t num_patches_;
};

enum class Glimpse { soft, hard };

struct CaptionerConfig {
  ViTConfig encoder;  // image size, patch, layers
  std::size_t vocab = 16, embed = 32, hidden = 64, attention_hidden = 64;
  // The paper starts the decoder from the mean annotation. That hands the decoder a summary of the
  // whole image before it attends, which it can caption from without looking anywhere in
  // particular; starting from zeros leaves attention the only way in.
  bool summary_init = false;
};

template <class T>
struct CaptionPass {
  Tensor<T> logits;      // (B, L, V): teacher-forced, word t from the true words before it
  Tensor<T> weights;     // (B, L, N): alpha_t, differentiable
  Tensor<T> log_choice;  // (B, L): hard only, log alpha_{t, c_t} of the drawn patches
  IndexArray choices;    // (B, L): hard only, the patches read
};

template <class T>
struct Caption {
  IndexArray words;  // (B, L)
  Array<T> weights;  // (B, L, N)
};

template <class T>
class Captioner : public Module<T> {
 public:
  Captioner(const CaptionerConfig& config, Generator& gen);
  // Teacher forcing over inputs (B, L) (<bos> and the first L-1 true words). Hard: the patch of
  // each word is drawn from alpha_t with `draws`, or read from `choices` (B, L) when given (a
  // replay: then the pass is a deterministic function of the weights). std::invalid_argument
  // naming the function for hard glimpses with neither, or choices of the wrong shape.
  CaptionPass<T> teacher_forced(const Tensor<T>& images, const IndexArray& inputs, Glimpse glimpse,
                                Generator* draws = nullptr, const IndexArray* choices = nullptr);
  // Greedy captions of `length` words from <bos> = `bos`: soft reads the expected patch, hard the
  // patch of largest weight (deterministic at test time). No tape.
  Caption<T> greedy(const Tensor<T>& images, std::size_t length, Index bos, Glimpse glimpse);
  const CaptionerConfig& config() const { return config_; }

  PatchEncoder<T> encoder;
  Linear<T> init;            // d -> hidden (used with summary_init)
  Embedding<T> embed;        // the previous word
  AdditiveScore<T> score;    // s_{t-1} against a_i
  GRUCell<T> cell;           // [emb; z] -> hidden
  Linear<T> out;             // [s_t; z_t] -> vocab

 private:
  struct Glance {
    Tensor<T> logits, state, weights, log_choice;
    IndexArray choice;
  };
  Tensor<T> first_state(const Tensor<T>& annotations) const;
  // One word: attend from `state`, read a glimpse, update the state, predict.
  Glance step(const Tensor<T>& annotations, const Tensor<T>& read_keys, const IndexArray& prev,
              const Tensor<T>& state, Glimpse glimpse, Generator* draws, const IndexArray* choice);
  CaptionerConfig config_;
};

// cap.greedy over images (N, H, W) `batch` at a time (bounded memory for a large held-out set),
// the captions and weights of every batch joined in order.
template <class T>
Caption<T> greedy_in_batches(Captioner<T>& cap, const Array<T>& images, std::size_t length, Index bos, Glimpse glimpse,
                             std::size_t batch = 200);

// The surrogate whose gradient is hard attention's estimate (the paper's, with a baseline b):
//   loss = CE(logits, targets) - 1/(B L) sum_b sum_{t < n_b} (r_b - b) log alpha_{t, c_bt},
//   r_b = sum_{t < n_b} log p(y_bt | ...) the caption's log-likelihood under the pass's draws, held
//   constant; n_b = word_counts(b), the words through <eos> (the draws at padding count for nothing),
//   and CE ignores targets equal to `ignore`. mean_reward is the batch's mean r, for the baseline.
// std::invalid_argument naming the function for a pass without draws, or targets and word counts
// that do not fit its logits (B, L, V).
template <class T>
struct ReinforceLoss {
  Tensor<T> loss;
  double mean_reward = 0;
};
template <class T>
ReinforceLoss<T> reinforce_loss(const CaptionPass<T>& pass, const IndexArray& targets, const IndexArray& word_counts,
                                double baseline, Index ignore);

}  // namespace attnlab::nn
