// The recurrent encoder-decoder the attention lessons train (02 Bahdanau, 03 Luong), and the date
// task they train it on ("the 3rd of march, 1997" -> "1997-03-03", one token per character).
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
// The attention is an nn::Attention over any score (nn/attention/scores.hpp): the decoders do not
// care which.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <xtensor/xarray.hpp>

#include "core/ops.hpp"
#include "lessons/kit/fit.hpp"
#include "nn/attention/attention.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/pair.hpp"
#include "nn/data/split.hpp"
#include "nn/data/vocab.hpp"
#include "nn/gru.hpp"
#include "nn/layers.hpp"
#include "nn/module.hpp"

namespace attnlab::lessons::s2s {

using F = float;
using Tns = Tensor<F>;
namespace data = nn::data;

// ------------------------------------------------------------------ the task

// Generated dates, split train / validation / test by distinct source string; character
// vocabularies built from the training split.
struct DateTask : data::EncodedSplits {
  data::Splits<data::Pair> pairs;
};
DateTask make_date_task(std::size_t n, std::uint64_t seed);

// Inputs that appear in two splits (must be none).
std::size_t split_overlap(const data::Splits<data::Pair>& pairs);

// ------------------------------------------------------------------ the model

enum class DecoderStyle { Bahdanau, Luong };

struct ModelConfig {
  DecoderStyle style = DecoderStyle::Bahdanau;
  std::string score = "additive";     // any score of nn/attention/scores.hpp; "none": no attention
                                      // (Bahdanau style only)
  std::size_t embed = 32;             // E, both embeddings
  std::size_t encoder_hidden = 64;    // He per direction: annotations are 2He wide
  std::size_t decoder_hidden = 64;    // Hd (a dot score needs Hd == 2He)
  std::size_t attention_hidden = 64;  // A, inside the additive and concat scores
};

struct Encoded {
  Tns annotations;  // (B, S, 2He): keys and values
  Tns summary;      // (B, 2He): [fwd_last; bwd_first], the whole input in one vector
  Tns init;         // (B, Hd): the decoder's first state
  Allowed real;     // (B, S): the real source tokens, the keys attention may use
};

class Encoder : public nn::Module<F> {
 public:
  Encoder(std::size_t vocab, const ModelConfig& c, Generator& gen);
  Encoded forward(const data::PaddedBatch& src);

  nn::Embedding<F> embed;
  nn::GRU<F> gru;
  nn::Linear<F> bridge;
};

struct Step {
  Tns logits;   // (B, V)
  Tns state;    // (B, Hd)
  Tns weights;  // (B, S); undefined without attention
};

class Decoder : public nn::Module<F> {
 public:
  // Teacher forcing: logits (B, T, V) for inputs <bos> y_1 .. y_{T-1}; weights (B, T, S) if asked.
  virtual Tns teacher_forced(const Encoded& e, const IndexArray& inputs, Tns* weights = nullptr) = 0;
  // One greedy step from the previous tokens (B) and state (B, Hd).
  virtual Step step(const Encoded& e, const IndexArray& prev, const Tns& state) = 0;
  virtual bool has_attention() const { return true; }
  // std::logic_error for a decoder without attention.
  virtual const nn::Attention<F>& attention() const = 0;

  nn::Embedding<F> embed;  // of the previous output token

 protected:
  Decoder(std::size_t vocab, const ModelConfig& c, Generator& gen);
};

// With score "none", no attention: the context is Encoded::summary at every step.
class BahdanauDecoder : public Decoder {
 public:
  BahdanauDecoder(std::size_t vocab, const ModelConfig& c, Generator& gen);
  Tns teacher_forced(const Encoded& e, const IndexArray& inputs, Tns* weights) override;
  Step step(const Encoded& e, const IndexArray& prev, const Tns& state) override;
  bool has_attention() const override { return attention_ != nullptr; }
  const nn::Attention<F>& attention() const override;

  std::unique_ptr<nn::Attention<F>> attention_;  // null for score "none"
  nn::GRUCell<F> cell;
  nn::Linear<F> out;

 private:
  // The annotations as the attention's memory (none without attention), and a step over it.
  std::optional<nn::Memory<F>> memory(const Encoded& e) const;
  Step step(const Encoded& e, const std::optional<nn::Memory<F>>& memory, const IndexArray& prev,
            const Tns& state);
};

class LuongDecoder : public Decoder {
 public:
  LuongDecoder(std::size_t vocab, const ModelConfig& c, Generator& gen);
  Tns teacher_forced(const Encoded& e, const IndexArray& inputs, Tns* weights) override;
  Step step(const Encoded& e, const IndexArray& prev, const Tns& state) override;
  const nn::Attention<F>& attention() const override { return attention_; }

  nn::GRU<F> gru;
  nn::Attention<F> attention_;
  nn::Linear<F> combine, out;

 private:
  // States (B, T, Hd) attend with T queries at once.
  Tns attend_and_predict(const Encoded& e, const Tns& states, Tns* weights);
};

// A greedy decoding of a batch: per example, the tokens up to and including <eos> (if it came)
// and the attention rows of those steps, (T_i, S_i) over the real source tokens (none without
// attention).
struct Decoded {
  std::vector<std::vector<Index>> ids;
  std::vector<xt::xarray<double>> attention;
};

class Seq2Seq : public nn::Module<F> {
 public:
  Seq2Seq(const ModelConfig& c, std::size_t source_vocab, std::size_t target_vocab, Generator& gen);
  // Teacher-forced logits (B, T, V); attention weights (B, T, S) into *weights if given.
  Tns forward(const data::Seq2SeqBatch& b, Tns* weights = nullptr);
  // Cross-entropy per real target token (padding ignored).
  Tns loss(const data::Seq2SeqBatch& b);
  // Greedy decoding: feed back the most likely token, stop at <eos> or after max_len steps.
  Decoded greedy(const data::PaddedBatch& src, std::size_t max_len);
  std::size_t attention_parameters() const {
    return decoder->has_attention() ? decoder->attention().parameter_count() : 0;
  }
  const ModelConfig& config() const { return config_; }

 private:
  ModelConfig config_;

 public:
  Encoder encoder;
  std::unique_ptr<Decoder> decoder;
};

// ------------------------------------------------------------------ training and evaluation

// The sizes and the training budget of a date lesson.
struct Plan {
  std::size_t examples = 12000;
  ModelConfig model;
  FitOptions fit;
  double lr = 5e-3;
};
// Writes the plan into the lesson's configuration (metrics.json).
void record(const Plan& plan);

// Adam on the training pairs, batches of options.batch, held-out loss on the validation pairs
// after every epoch (History::validation_of("loss")).
History train(Seq2Seq& model, const data::EncodedPairs& train, const data::EncodedPairs& validation, double lr,
              FitOptions options);
// The same on a date task's training and validation splits.
History train(Seq2Seq& model, const DateTask& task, double lr, FitOptions options);

// Mean teacher-forced cross-entropy per target token over a split.
double mean_loss(Seq2Seq& model, const data::EncodedPairs& split, std::size_t batch = 256);

struct Evaluation {
  double exact_match = 0, char_accuracy = 0;
  std::vector<std::string> predictions;
  Decoded decoded;
};

// Greedy-decodes every example of a split (in order) and scores it against the target strings.
Evaluation evaluate(Seq2Seq& model, const data::EncodedPairs& split, const std::vector<data::Pair>& pairs,
                    const data::Vocab& target_vocab, std::size_t batch = 256);

// Does attention land where the answer is? For every example whose input spells the year with
// four digits, the share of attention that the first four output steps (the year's digits) put on
// those four input characters, averaged; and the same share under uniform attention (4 / S).
struct YearAttention {
  double mass = 0, uniform = 0;
  std::size_t examples = 0;
};
YearAttention year_attention(const Evaluation& ev, const std::vector<data::Pair>& pairs);

// The output tokens of a decoded example as tick labels (a space shown as an open box).
std::vector<std::string> output_labels(const std::vector<Index>& ids, const data::Vocab& v);

}  // namespace attnlab::lessons::s2s
