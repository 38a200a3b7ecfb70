// The recurrent encoder-decoder the attention lessons train (02 Bahdanau, 03 Luong, and 08 as the
// Transformer's rival), with greedy decoding and its evaluation on a split of pairs.
//
//   encoder   embedding -> bidirectional GRU: annotations h_j = [fwd_j; bwd_j] (B, S, 2He),
//             the keys and the values of every attention; s_0 = tanh(W_init [fwd_last; bwd_first]).
//   Bahdanau  the query is the PREVIOUS decoder state s_{t-1}; its context c_t enters the
//             recurrence: s_t = GRU([emb(y_{t-1}); c_t], s_{t-1}); logits = W_o [s_t; c_t].
//             Each step needs the one before, so training runs T attention calls of one query each.
//   Luong     the query is the CURRENT state h_t = GRU(emb(y_{t-1}), h_{t-1});
//             h~_t = tanh(W_c [c_t; h_t]); logits = W_o h~_t. The recurrence never sees c_t, so
//             with teacher forcing all T queries attend in one batched call.
//   none      the Bahdanau decoder with its attention taken out (Cho et al. 2014): the context is
//             the same vector c = [fwd_last; bwd_first] at every step, the whole input squeezed
//             into 2He numbers: s_t = GRU([emb(y_{t-1}); c], s_{t-1}); logits = W_o [s_t; c].
//
// The attention is an Attention over any score (nn/attention/scores.hpp): the decoders do not
// care which.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "core/ops.hpp"
#include "nn/attention/attention.hpp"
#include "nn/attention/local_m.hpp"
#include "nn/attention/local_p.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/pair.hpp"
#include "nn/data/split.hpp"
#include "nn/data/vocab.hpp"
#include "nn/gru.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"

namespace attnlab::nn::rnn {

using F = float;
using Tns = Tensor<F>;

// ------------------------------------------------------------------ the model

enum class DecoderStyle { Bahdanau, Luong };

// Where a local window's centre comes from (Luong et al. 2015): predicted from the decoder state
// (local-p, nn/attention/local_p.hpp) or the decoder's own step, p_t = t (local-m, local_m.hpp).
enum class LocalAlignment { predictive, monotonic };

struct Seq2SeqConfig {
  DecoderStyle style = DecoderStyle::Bahdanau;
  std::string score = "additive";     // any score of nn/attention/scores.hpp; "none": no attention
                                      // (Bahdanau style only)
  std::size_t embed = 32;             // E, both embeddings
  std::size_t encoder_hidden = 64;    // He per direction: annotations are 2He wide
  std::size_t decoder_hidden = 64;    // Hd (a dot score needs Hd == 2He)
  std::size_t attention_hidden = 64;  // A, inside the additive and concat scores
  // D > 0 (Luong style only): Luong's local-p attention, the same score inside a predicted window
  // [p_t - D, p_t + D] with a Gaussian around p_t (nn/attention/local_p.hpp); 0: global attention.
  std::size_t local_window = 0;
  // With local_window > 0: local-p (predictive) or local-m (monotonic).
  LocalAlignment local_alignment = LocalAlignment::predictive;
};

struct Encoded {
  Tns annotations;  // (B, S, 2He): keys and values
  Tns summary;      // (B, 2He): [fwd_last; bwd_first], the whole input in one vector
  Tns init;         // (B, Hd): the decoder's first state
  Allowed real;     // (B, S): the real source tokens, the keys attention may use
};

class Encoder : public Module<F> {
 public:
  Encoder(std::size_t vocab, const Seq2SeqConfig& c, Generator& gen);
  Encoded forward(const data::PaddedBatch& src);

  Embedding<F> embed;
  GRU<F> gru;
  Linear<F> bridge;
};

struct Step {
  Tns logits;   // (B, V)
  Tns state;    // (B, Hd)
  Tns weights;  // (B, S); undefined without attention
};

class Decoder : public Module<F> {
 public:
  // Teacher forcing: logits (B, T, V) for inputs <bos> y_1 .. y_{T-1}; weights (B, T, S) if asked.
  virtual Tns teacher_forced(const Encoded& e, const IndexArray& inputs, Tns* weights = nullptr) = 0;
  // One step at output position t (t = 0 writes the first token) from the previous tokens (B) and
  // state (B, Hd). Only local-m's window depends on t: it is centred at p_t = t.
  virtual Step step(const Encoded& e, const IndexArray& prev, const Tns& state, std::size_t t) = 0;
  // The same for a decoder whose attention does not depend on the position; std::logic_error for
  // one that does (local-m), which must be told t.
  Step step(const Encoded& e, const IndexArray& prev, const Tns& state);
  // Whether step needs the output position (local-m).
  virtual bool needs_position() const { return false; }
  virtual bool has_attention() const { return true; }
  // std::logic_error for a decoder without attention.
  virtual const Attention<F>& attention() const = 0;

  Embedding<F> embed;  // of the previous output token

 protected:
  Decoder(std::size_t vocab, const Seq2SeqConfig& c, Generator& gen);
};

// With score "none", no attention: the context is Encoded::summary at every step.
class BahdanauDecoder : public Decoder {
 public:
  BahdanauDecoder(std::size_t vocab, const Seq2SeqConfig& c, Generator& gen);
  Tns teacher_forced(const Encoded& e, const IndexArray& inputs, Tns* weights) override;
  using Decoder::step;
  Step step(const Encoded& e, const IndexArray& prev, const Tns& state, std::size_t t) override;
  bool has_attention() const override { return attention_ != nullptr; }
  const Attention<F>& attention() const override;

  std::unique_ptr<Attention<F>> attention_;  // null for score "none"
  GRUCell<F> cell;
  Linear<F> out;

 private:
  // The annotations as the attention's memory (none without attention), and a step over it.
  std::optional<Memory<F>> memory(const Encoded& e) const;
  Step step_over(const Encoded& e, const std::optional<Memory<F>>& memory, const IndexArray& prev,
                 const Tns& state);
};

class LuongDecoder : public Decoder {
 public:
  LuongDecoder(std::size_t vocab, const Seq2SeqConfig& c, Generator& gen);
  Tns teacher_forced(const Encoded& e, const IndexArray& inputs, Tns* weights) override;
  using Decoder::step;
  Step step(const Encoded& e, const IndexArray& prev, const Tns& state, std::size_t t) override;
  bool needs_position() const override { return monotonic_window > 0; }
  const Attention<F>& attention() const override { return attention_; }
  // Local attention only: the window centres p_t (B, T) of the teacher-forced decoder states,
  // without gradient: predicted (local-p) or min(t, S - 1) (local-m); std::logic_error for global
  // attention.
  Tns local_positions(const Encoded& e, const IndexArray& inputs);

  GRU<F> gru;
  Attention<F> attention_;  // global attention; with local_window, its score serves the local one
  Linear<F> combine, out;
  std::unique_ptr<LocalPAttention<F>> local;  // the position predictor of local-p; null for global
  std::size_t monotonic_window = 0;           // local-m's D; 0 unless local-m

 private:
  // States (B, T, Hd), at output steps first_step .., attend with T queries at once.
  Tns attend_and_predict(const Encoded& e, const Tns& states, Tns* weights, std::size_t first_step);
};

// A greedy decoding of a batch: per example, the tokens up to and including <eos> (if it came)
// and the attention rows of those steps, (T_i, S_i) over the real source tokens (none without
// attention).
struct Decoded {
  std::vector<std::vector<Index>> ids;
  std::vector<xt::xarray<double>> attention;
};

class Seq2Seq : public Module<F> {
 public:
  Seq2Seq(const Seq2SeqConfig& c, std::size_t source_vocab, std::size_t target_vocab, Generator& gen);
  // Teacher-forced logits (B, T, V); attention weights (B, T, S) into *weights if given.
  Tns forward(const data::Seq2SeqBatch& b, Tns* weights = nullptr);
  // Cross-entropy per real target token (padding ignored).
  Tns loss(const data::Seq2SeqBatch& b);
  // Greedy decoding: feed back the most likely token, stop at <eos> or after max_len steps.
  Decoded greedy(const data::PaddedBatch& src, std::size_t max_len);
  std::size_t attention_parameters() const {
    return decoder->has_attention() ? decoder->attention().parameter_count() : 0;
  }
  const Seq2SeqConfig& config() const { return config_; }

 private:
  Seq2SeqConfig config_;

 public:
  Encoder encoder;
  std::unique_ptr<Decoder> decoder;
};

// What a global Luong decoder's score compared while it wrote `ids` from one source, when that score
// is a dot product of a query and a key (the explorer's neuron view splits it into per-dimension
// terms): the queries are its states h_t, one per output step (T, Hd), T = ids.size(); the keys are
// the annotations as the score reads them (Score::read_keys), h_s for dot, W h_s for general (S, Hd),
// over the source's `length` real tokens; score(t, s) = q_t . k_s * scale, and the softmax over s is
// the step's attention row. The states are the decoder's GRU run over <bos> and ids[0 .. T-2], as
// greedy decoding fed them (the Luong recurrence never reads the context). std::nullopt for the
// additive and concat scores (a tanh between query and key: no such split); std::invalid_argument
// naming luong_query_keys for a Bahdanau or local decoder, a batch of more than one source, no ids,
// or a length outside the source.
struct QueryKeys {
  xt::xarray<double> queries, keys;
  double scale = 1.0;
};
std::optional<QueryKeys> luong_query_keys(Seq2Seq& model, const data::PaddedBatch& source, const std::vector<Index>& ids);

// ------------------------------------------------------------------ evaluation

// Mean teacher-forced cross-entropy per target token over a split, `batch` pairs at a time, without
// the tape. std::invalid_argument for an empty split or a batch of 0.
double mean_loss(Seq2Seq& model, const data::EncodedPairs& split, std::size_t batch = 256);

// The window centres p_t of a local-attention model (local-p or local-m) over a split, teacher-forced
// as in training, `batch` pairs at a time: per example, one centre per output step (its target's
// tokens and <eos>). std::logic_error for a model that attends globally, std::invalid_argument for an
// empty split or a batch of 0.
std::vector<std::vector<double>> window_centres(Seq2Seq& model, const data::EncodedPairs& split,
                                                std::size_t batch = 256);

struct Evaluation {
  double exact_match = 0, char_accuracy = 0;
  std::vector<std::string> predictions;
  Decoded decoded;
};

// Greedy-decodes every example of a split (in order, `batch` at a time, at most 3 tokens longer
// than the longest target) and scores the decoded strings against the pairs' targets, character
// by character (Tokenizer::chars). std::invalid_argument when pairs and split differ in size.
Evaluation evaluate(Seq2Seq& model, const data::EncodedPairs& split, const std::vector<data::Pair>& pairs,
                    const data::Vocab& target_vocab, std::size_t batch = 256);

}  // namespace attnlab::nn::rnn
