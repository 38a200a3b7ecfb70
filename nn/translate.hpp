// Translating whole splits with a trained encoder-decoder, and scoring it teacher-forced without
// the tape: what a translation lesson needs around its models but does not teach.
//
//   translate(model, split)           greedy translations of every source, a batch at a time
//   beam_sweep(model, split, 8, {0,1}) greedy and beam search of every width 1..8 and length
//                                      penalty, one sentence at a time (its source encoded once)
//   teacher_forced_scores(model, split, smoothing)
//                                      loss, cross-entropy, argmax accuracy and confidence per
//                                      real target token
//
// Translations are the generated ids BEFORE the first <eos> (no <bos>, no <eos>), ready for
// nn::corpus_bleu against split.target. The Transformer reads its source without <eos> (attention
// sees the length); the recurrent model with it (d2l's convention).
#pragma once

#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "nn/alignment.hpp"
#include "nn/decode.hpp"
#include "nn/data/batch.hpp"
#include "nn/metrics.hpp"
#include "nn/rnn/seq2seq.hpp"
#include "nn/transformer/seq2seq.hpp"

namespace attnlab::nn {

// The ids before the first `end` (all of them when there is none).
std::vector<Index> before_end(const std::vector<Index>& ids, Index end);

// Greedy translations of every source of `split`, in order, `batch` sources at a time: at most
// (longest source + extra) generated tokens. The model is put in eval mode. std::invalid_argument
// naming the function for an empty split or a batch of 0.
std::vector<data::Sequence> translate(Seq2SeqTransformer<float>& model, const data::EncodedPairs& split,
                                      std::size_t extra = 5, std::size_t batch = 256);
std::vector<data::Sequence> translate(rnn::Seq2Seq& model, const data::EncodedPairs& split,
                                      std::size_t extra = 5, std::size_t batch = 256);

// n sentences spread evenly over a split, rows i * size / n (all of them if it has no more); the
// rows taken are appended to `rows` when given.
data::EncodedPairs spread_evenly(const data::EncodedPairs& split, std::size_t n,
                                 std::vector<std::size_t>* rows = nullptr);

// Translations of a split scored by the length of their source: corpus BLEU per length (sources
// of `longest_group` words or more share the last group), and how often a translation stops
// short of its reference (fewer words), the failure of a decoder that emits <eos> at the lengths
// it was trained on. std::invalid_argument naming the function when the sizes differ.
struct LengthScores {
  std::vector<GroupBleu> by_length;  // .group: source words, capped at longest_group
  double cut_short = 0;              // share of translations with fewer words than their reference
  double mean_words = 0;             // words per translation
};
LengthScores score_by_length(const std::vector<data::Sequence>& translations, const data::EncodedPairs& split,
                             std::size_t longest_group);

// Every sentence of a split decoded greedily and by beam search of widths 1..widest with each
// length penalty alpha (BeamOptions::length_penalty), at most (its source's length + extra) tokens.
struct BeamSweep {
  std::vector<data::Sequence> greedy;
  std::map<std::pair<std::size_t, double>, std::vector<data::Sequence>> beam;  // (width, alpha)
  // The translations of one (width, alpha); std::out_of_range naming both when not swept.
  const std::vector<data::Sequence>& at(std::size_t width, double alpha) const;
};

// std::invalid_argument naming the function for an empty split, widest 0 or no alpha.
BeamSweep beam_sweep(Seq2SeqTransformer<float>& model, const data::EncodedPairs& split, std::size_t widest,
                     const std::vector<double>& alphas, std::size_t extra = 6);

// One source (ids, without <eos>) translated by beam search of `width` beams and length penalty
// `alpha` (BeamOptions::length_penalty), at most (its length + extra) tokens, as beam_sweep decodes
// each sentence: the best hypothesis, its tokens cut before <eos> (the log_prob and the score are
// beam_search's, <eos> counted). Width 1 with alpha 0 is greedy decoding. The model is put in eval
// mode. std::invalid_argument naming the function for an empty source, width 0 or a negative alpha.
Hypothesis beam_translate(Seq2SeqTransformer<float>& model, const data::Sequence& source, std::size_t width,
                          double alpha, std::size_t extra = 6);

// Teacher-forced scores of a split per real target token (padding excluded), without the tape:
// the loss with label smoothing `smoothing`, the plain cross-entropy (nll), the share of tokens
// whose argmax is the target, and the mean probability of the argmax (the model's confidence).
struct TokenScores {
  double loss = 0, nll = 0, accuracy = 0, confidence = 0;
  std::size_t tokens = 0;
};

// std::invalid_argument naming the function for an empty split or a batch of 0.
TokenScores teacher_forced_scores(Seq2SeqTransformer<float>& model, const data::EncodedPairs& split,
                                  double smoothing = 0.0, std::size_t batch = 256);

// Per decoder layer, the cross-attention weights (B, heads, T, S) of a teacher-forced batch (the
// Transformer's batch: sources without <eos>), without the tape. The model is put in eval mode.
std::vector<Array<float>> cross_attention_weights(Seq2SeqTransformer<float>& model, const data::Seq2SeqBatch& batch);

// The same, with each decoder layer's cross-attention queries, keys and bias of that forward
// (MultiHeadAttention::score_parts: what the explorer's neuron view splits a score into).
struct CrossAttention {
  std::vector<Array<float>> weights;        // per layer (B, heads, T, S)
  std::vector<ScoreParts<float>> parts;     // per layer
};
CrossAttention cross_attention_with_parts(Seq2SeqTransformer<float>& model, const data::Seq2SeqBatch& batch);

// Every attention of one teacher-forced forward, per layer, with its queries, keys and bias: the
// encoder's self-attention (B, heads, S, S), the decoder's self-attention over its input (B, heads,
// T, T; causal: -inf above the diagonal in its bias) and the cross-attention (B, heads, T, S). With
// distance-based positions (T5, ALiBi) the self-attentions' bias holds them and with RoPE their
// queries and keys are the rotated ones, so q . k * scale + bias is the score each head took the
// softmax of. Without the tape; the model is put in eval mode and keeps no score parts after.
struct TransformerAttention {
  std::vector<Tensor<float>> encoder, decoder, cross;  // per layer
  std::vector<ScoreParts<float>> encoder_parts, decoder_parts, cross_parts;
};
TransformerAttention attention_with_parts(Seq2SeqTransformer<float>& model, const data::Seq2SeqBatch& batch);

// One sentence of a split, teacher-forced on its reference: the cross-attention of each chosen
// (layer, head), (heads.size(), target words, source words), the rows that predict the target
// words and the columns of the source words. std::invalid_argument naming the function for a
// row, layer or head out of range.
xt::xarray<double> sentence_cross_attention(Seq2SeqTransformer<float>& model, const data::EncodedPairs& split,
                                            std::size_t row,
                                            const std::vector<std::pair<std::size_t, std::size_t>>& heads);

// Every cross-attention head of every decoder layer scored as a word aligner over a split,
// teacher-forced on its references: each target word is linked to the source word its head
// attends to most (peak_links), against truths[i], (target words, source words) of pair i, as both
// the sure and the possible links. at_output reads the row that predicts target word j, at_input
// the row one step later, which has just read it. std::invalid_argument naming the function when
// truths and split differ in size or a truth's shape is not (target words, source words) of its pair.
struct HeadAlignment {
  std::vector<std::vector<AlignmentCounts>> at_output, at_input;  // [layer][head]
  // The head of `layer` with the lowest AER at_output: (head, AER). std::out_of_range naming the layer.
  std::pair<std::size_t, double> best_in_layer(std::size_t layer) const;
};
HeadAlignment score_heads_as_aligners(Seq2SeqTransformer<float>& model, const data::EncodedPairs& split,
                                      const std::vector<Mask>& truths, std::size_t batch = 256);

}  // namespace attnlab::nn
