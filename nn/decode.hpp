// Decoding a sequence model: greedy search and beam search over a step function.
//
// The search knows nothing about the model. A StepFn takes N prefixes (token ids so far, each
// beginning with the start token) and returns an (N, V) array of LOG-probabilities of the next
// token; causal_lm_step adapts a CausalLM to that interface.
//
// Conventions shared by both searches:
//   * returned token sequences hold the GENERATED tokens only: no start token, and the end token
//     as the last element when the model emitted it (so "finished" is tokens.back() == end);
//   * max_len bounds the number of generated tokens, end token included;
//   * log_prob is the sum of the log-probabilities of the generated tokens, end token included.
#pragma once

#include <cstddef>
#include <functional>
#include <vector>

#include "core/array.hpp"
#include "nn/transformer/transformer.hpp"

namespace attnlab::nn {

using StepFn = std::function<Array<float>(const std::vector<std::vector<Index>>& prefixes)>;

// Argmax at every step (ties: lower token id) until the end token (included) or max_len tokens.
std::vector<Index> greedy_decode(const StepFn& step, Index start, Index end, std::size_t max_len);

struct BeamOptions {
  std::size_t width = 4;
  std::size_t max_len = 50;
  // alpha in score = log_prob / len^alpha, len = number of generated tokens (end included).
  // 0 ranks by raw log-probability, which favours short hypotheses (every token costs log p < 0);
  // 1 ranks by mean log-probability per token.
  double length_penalty = 1.0;
};

struct Hypothesis {
  std::vector<Index> tokens;
  double log_prob = 0.0;
  double score = 0.0;
};

// Beam search keeping `width` live beams. Each step expands every live beam by all V tokens and
// ranks the candidates by log-probability (ties: better-ranked parent beam, then lower token id).
// Among the top `width` candidates, those ending in `end` are finished; live beams are refilled
// with the best candidates that do not end in `end`, so the beam never shrinks. Stops when `width`
// hypotheses are finished and no live beam can still beat the worst of them after length
// normalization, or after max_len tokens, when the live beams are finalized unfinished.
// Returns at most `width` hypotheses, best score first.
std::vector<Hypothesis> beam_search(const StepFn& step, Index start, Index end,
                                    const BeamOptions& options = {});

// A StepFn running `model` under NoGrad: the prefixes (possibly of different lengths) are padded
// on the right into one (N, L) batch -- harmless, since position t sees tokens 0..t only -- and
// each row's last real position is log-softmaxed. The model must be in eval mode (dropout would
// make decoding random) and outlive the StepFn.
template <class T>
StepFn causal_lm_step(CausalLM<T>& model);

// The same for an encoder-decoder: src (S,) is encoded once; each step decodes every prefix
// against that memory. The model must be in eval mode and outlive the StepFn.
template <class T>
StepFn seq2seq_step(Seq2SeqTransformer<T>& model, const IndexArray& src);

namespace rnn {
class Seq2Seq;
}

// The same for the recurrent encoder-decoder of nn/rnn (lessons 02 and 03): src (S,) the source's
// ids as the model reads them, with the <eos> make_seq2seq_batch appends, encoded once. Each call teacher-forces the
// decoder over every prefix (right-padded as above: the recurrence never looks ahead) and keeps
// each prefix's last position, so every step sits at its own output position t (where local-m
// centres its window). The state is not carried between calls: O(L^2) for L tokens. The model
// must outlive the StepFn.
StepFn rnn_seq2seq_step(rnn::Seq2Seq& model, const IndexArray& src);

// Greedy decoding of a whole batch of sources at once (greedy_decode one sentence at a time is the
// same search, B times slower): src (B, S) ids with src_allowed (B, S) its real tokens. Every row
// grows by its argmax each step (ties: lower id), the whole prefix decoded again (no cache), until
// every row has emitted `end` or max_len tokens. Rows as greedy_decode returns them: the generated
// tokens, `end` last when it came. The model must be in eval mode.
template <class T>
std::vector<std::vector<Index>> greedy_decode_batch(Seq2SeqTransformer<T>& model, const IndexArray& src,
                                                    const Allowed& src_allowed, Index start, Index end,
                                                    std::size_t max_len);

}  // namespace attnlab::nn
