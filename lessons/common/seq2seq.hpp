// The encoder-decoder both attention lessons train (02 Bahdanau, 03 Luong), on date
// normalization ("the 3rd of march, 1997" -> "1997-03-03", one token per character).
//
//   encoder   embedding -> bidirectional GRU: annotations h_j = [fwd_j; bwd_j] (B, S, 2He),
//             the keys and the values of every attention; s_0 = tanh(W_init [fwd_last; bwd_first]).
//   Bahdanau  the query is the PREVIOUS decoder state s_{t-1}; its context c_t enters the
//             recurrence: s_t = GRU([emb(y_{t-1}); c_t], s_{t-1}); logits = W_o [s_t; c_t].
//             Each step needs the one before, so training runs T attention calls of one query each.
//   Luong     the query is the CURRENT state h_t = GRU(emb(y_{t-1}), h_{t-1});
//             h~_t = tanh(W_c [c_t; h_t]); logits = W_o h~_t. The recurrence never sees c_t, so
//             with teacher forcing all T queries attend in one batched call.
//
// Header-only: the lessons' common library links only the core, this needs nn.
#pragma once

#include <algorithm>
#include <chrono>
#include <ctime>
#include <fstream>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <xtensor/xarray.hpp>
#include <xtensor/xview.hpp>

#include "core/ops.hpp"
#include "lessons/common/progress.hpp"
#include "nn/attention/attention.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/dates.hpp"
#include "nn/data/split.hpp"
#include "nn/data/vocab.hpp"
#include "nn/gru.hpp"
#include "nn/layers.hpp"
#include "nn/metrics.hpp"
#include "nn/module.hpp"
#include "nn/optim.hpp"

namespace attnlab::lessons::s2s {

using F = float;
using Tns = Tensor<F>;
namespace data = nn::data;

// ---------------------------------------------------------------------------------------------
// The task: generated dates, split train / validation / test by distinct source string.

struct DateTask {
  data::Splits<data::Pair> pairs;
  data::Vocab source_vocab, target_vocab;  // built from the training split only
  data::EncodedPairs train, validation, test;
};

inline DateTask make_date_task(std::size_t n, std::uint64_t seed) {
  Generator gen(seed);
  const std::vector<data::Pair> all = data::make_dates(n, gen);
  DateTask t;
  t.pairs = data::split_examples(all, {0.8, 0.1, 0.1}, seed + 1);
  std::vector<std::vector<std::string>> src, tgt;
  for (const auto& p : t.pairs.train) {
    src.push_back(data::char_tokens(p.source));
    tgt.push_back(data::char_tokens(p.target));
  }
  t.source_vocab = data::Vocab::build(src);
  t.target_vocab = data::Vocab::build(tgt);
  auto enc = [&](const std::vector<data::Pair>& ps) {
    return data::encode_pairs(ps, t.source_vocab, data::Tokenizer::chars, t.target_vocab, data::Tokenizer::chars);
  };
  t.train = enc(t.pairs.train);
  t.validation = enc(t.pairs.validation);
  t.test = enc(t.pairs.test);
  return t;
}

inline std::vector<std::size_t> lengths_of(const data::PaddedBatch& b) {
  return std::vector<std::size_t>(b.lengths.begin(), b.lengths.end());
}

// ---------------------------------------------------------------------------------------------
// The model.

enum class DecoderStyle { Bahdanau, Luong };

struct ModelConfig {
  DecoderStyle style = DecoderStyle::Bahdanau;
  std::string score = "additive";   // any score of nn/attention/scores.hpp
  std::size_t embed = 32;           // E, both embeddings
  std::size_t encoder_hidden = 64;  // He per direction: annotations are 2He wide
  std::size_t decoder_hidden = 64;  // Hd (Luong's dot score needs Hd == 2He)
  std::size_t attention_hidden = 64;  // A, inside additive / concat scores
};

struct Encoded {
  Tns annotations;  // (B, S, 2He): keys and values
  Tns init;         // (B, Hd): the decoder's first state
  Allowed real;     // (B, S): the real source tokens, the keys attention may use
};

class Encoder : public nn::Module<F> {
 public:
  Encoder(std::size_t vocab, const ModelConfig& c, Generator& gen)
      : embed(vocab, c.embed, gen, data::Vocab::pad),
        gru(c.embed, c.encoder_hidden, gen, nn::GRUOptions{1, true}),
        bridge(2 * c.encoder_hidden, c.decoder_hidden, gen) {
    register_module("embed", embed);
    register_module("gru", gru);
    register_module("bridge", bridge);
  }
  Encoded forward(const data::PaddedBatch& src) {
    nn::GRUOutput<F> o = gru.forward(embed(src.ids), Tns(), lengths_of(src));
    // state (2, B, He): [forward final, backward final]; each direction has read the whole source.
    const Tns both = concat<F>({squeeze(slice(o.state, 0, 0, 1), 0), squeeze(slice(o.state, 0, 1, 2), 0)}, -1);
    return {o.output, attnlab::tanh(bridge(both)), src.allowed()};
  }
  nn::Embedding<F> embed;
  nn::GRU<F> gru;
  nn::Linear<F> bridge;
};

struct Step {
  Tns logits;   // (B, V)
  Tns state;    // (B, Hd)
  Tns weights;  // (B, S)
};

class Decoder : public nn::Module<F> {
 public:
  // Teacher forcing: logits (B, T, V) for inputs <bos> y_1 .. y_{T-1}; weights (B, T, S) if asked.
  virtual Tns teacher_forced(const Encoded& e, const IndexArray& inputs, Tns* weights = nullptr) = 0;
  // One greedy step from the previous tokens (B) and state (B, Hd).
  virtual Step step(const Encoded& e, const IndexArray& prev, const Tns& state) = 0;

  virtual const nn::Attention<F>& attention() const = 0;

  nn::Embedding<F> embed;  // of the previous output token, in both decoders

 protected:
  Decoder(std::size_t vocab, const ModelConfig& c, Generator& gen) : embed(vocab, c.embed, gen, data::Vocab::pad) {
    register_module("embed", embed);
  }
};

class BahdanauDecoder : public Decoder {
 public:
  BahdanauDecoder(std::size_t vocab, const ModelConfig& c, Generator& gen)
      : Decoder(vocab, c, gen),
        attention_(nn::make_score<F>(c.score, c.decoder_hidden, 2 * c.encoder_hidden, gen, c.attention_hidden)),
        cell(c.embed + 2 * c.encoder_hidden, c.decoder_hidden, gen),
        out(c.decoder_hidden + 2 * c.encoder_hidden, vocab, gen) {
    register_module("attention", attention_);
    register_module("cell", cell);
    register_module("out", out);
  }
  Step step(const Encoded& e, const IndexArray& prev, const Tns& state) override {
    AttentionResult<F> a = attention_(state, e.annotations, e.annotations, e.real);  // c_t (B, 2He)
    const Tns s = cell.forward(concat<F>({embed(prev), a.output}, -1), state);
    return {out(concat<F>({s, a.output}, -1)), s, a.weights};
  }
  Tns teacher_forced(const Encoded& e, const IndexArray& inputs, Tns* weights) override {
    std::vector<Tns> logits, ws;
    Tns state = e.init;
    for (std::size_t t = 0; t < inputs.shape()[1]; ++t) {
      const IndexArray prev = xt::view(inputs, xt::all(), t);
      Step s = step(e, prev, state);
      logits.push_back(s.logits);
      if (weights) ws.push_back(s.weights);
      state = s.state;
    }
    if (weights) *weights = stack(ws, 1);
    return stack(logits, 1);
  }
  const nn::Attention<F>& attention() const override { return attention_; }

  nn::Attention<F> attention_;
  nn::GRUCell<F> cell;
  nn::Linear<F> out;
};

class LuongDecoder : public Decoder {
 public:
  LuongDecoder(std::size_t vocab, const ModelConfig& c, Generator& gen)
      : Decoder(vocab, c, gen),
        gru(c.embed, c.decoder_hidden, gen),
        attention_(nn::make_score<F>(c.score, c.decoder_hidden, 2 * c.encoder_hidden, gen, c.attention_hidden)),
        combine(2 * c.encoder_hidden + c.decoder_hidden, c.decoder_hidden, gen),
        out(c.decoder_hidden, vocab, gen) {
    register_module("gru", gru);
    register_module("attention", attention_);
    register_module("combine", combine);
    register_module("out", out);
  }
  // Works for any number of steps: states (B, T, Hd) attend with T queries at once.
  Tns attend_and_predict(const Encoded& e, const Tns& states, Tns* weights) {
    AttentionResult<F> a = attention_(states, e.annotations, e.annotations, e.real);
    if (weights) *weights = a.weights;
    return out(attnlab::tanh(combine(concat<F>({a.output, states}, -1))));
  }
  Tns teacher_forced(const Encoded& e, const IndexArray& inputs, Tns* weights) override {
    nn::GRUOutput<F> o = gru.forward(embed(inputs), unsqueeze(e.init, 0));
    return attend_and_predict(e, o.output, weights);
  }
  Step step(const Encoded& e, const IndexArray& prev, const Tns& state) override {
    IndexArray ids = prev;
    ids.reshape({prev.size(), std::size_t(1)});
    nn::GRUOutput<F> o = gru.forward(embed(ids), unsqueeze(state, 0));
    Tns w;
    const Tns logits = attend_and_predict(e, o.output, &w);
    return {squeeze(logits, 1), squeeze(o.state, 0), squeeze(w, 1)};
  }
  const nn::Attention<F>& attention() const override { return attention_; }

  nn::GRU<F> gru;
  nn::Attention<F> attention_;
  nn::Linear<F> combine;
  nn::Linear<F> out;
};

// A greedy decoding of a batch: per example, the tokens up to and including <eos> (if it came)
// and the attention rows of those steps, (T_i, S_i) over the real source tokens.
struct Decoded {
  std::vector<std::vector<Index>> ids;
  std::vector<xt::xarray<double>> attention;
};

class Seq2Seq : public nn::Module<F> {
 public:
  Seq2Seq(const ModelConfig& c, std::size_t source_vocab, std::size_t target_vocab, Generator& gen)
      : config_(c), encoder(source_vocab, c, gen) {
    register_module("encoder", encoder);
    if (c.style == DecoderStyle::Bahdanau)
      decoder = std::make_unique<BahdanauDecoder>(target_vocab, c, gen);
    else
      decoder = std::make_unique<LuongDecoder>(target_vocab, c, gen);
    register_module("decoder", *decoder);
  }
  // Teacher-forced logits (B, T, V); attention weights (B, T, S) into *weights if given.
  Tns forward(const data::Seq2SeqBatch& b, Tns* weights = nullptr) {
    return decoder->teacher_forced(encoder.forward(b.source), b.decoder_input.ids, weights);
  }
  Tns loss(const data::Seq2SeqBatch& b) {
    CrossEntropyOptions ce;
    ce.ignore_index = data::Vocab::pad;
    return cross_entropy(forward(b), b.decoder_target.ids, ce);
  }
  // Greedy decoding: feed back the most likely token, stop at <eos> or after max_len steps.
  Decoded greedy(const data::PaddedBatch& src, std::size_t max_len) {
    NoGrad ng;
    const Encoded e = encoder.forward(src);
    const std::size_t B = src.ids.shape()[0];
    IndexArray prev = xt::zeros<Index>({B});
    prev.fill(data::Vocab::bos);
    Tns state = e.init;
    std::vector<std::vector<Index>> ids(B);
    std::vector<std::vector<std::vector<double>>> rows(B);
    std::vector<bool> done(B, false);
    for (std::size_t t = 0; t < max_len; ++t) {
      Step s = decoder->step(e, prev, state);
      prev = nn::argmax_last(s.logits.value());
      state = s.state;
      bool all = true;
      for (std::size_t b = 0; b < B; ++b) {
        if (done[b]) continue;
        ids[b].push_back(prev(b));
        std::vector<double> row(static_cast<std::size_t>(src.lengths(b)));
        for (std::size_t j = 0; j < row.size(); ++j) row[j] = s.weights.value()(b, j);
        rows[b].push_back(std::move(row));
        done[b] = prev(b) == data::Vocab::eos;
        all = all && done[b];
      }
      if (all) break;
    }
    Decoded d;
    d.ids = std::move(ids);
    for (std::size_t b = 0; b < B; ++b) {
      const std::size_t T = rows[b].size(), S = static_cast<std::size_t>(src.lengths(b));
      xt::xarray<double> m = xt::zeros<double>({T, S});
      for (std::size_t i = 0; i < T; ++i)
        for (std::size_t j = 0; j < S; ++j) m(i, j) = rows[b][i][j];
      d.attention.push_back(std::move(m));
    }
    return d;
  }
  const ModelConfig& config() const { return config_; }
  std::size_t attention_parameters() const { return decoder->attention().parameter_count(); }

 private:
  ModelConfig config_;

 public:
  Encoder encoder;
  std::unique_ptr<Decoder> decoder;
};

// ---------------------------------------------------------------------------------------------
// Evaluation.

struct Evaluation {
  double exact_match = 0, char_accuracy = 0;
  std::vector<std::string> predictions;
  Decoded decoded;
};

// Greedy-decodes every example of a split (in order) and scores it against the target strings.
inline Evaluation evaluate(Seq2Seq& model, const data::EncodedPairs& enc, const std::vector<data::Pair>& pairs,
                           const data::Vocab& target_vocab, std::size_t batch = 256) {
  Evaluation ev;
  std::vector<std::string> refs;
  std::size_t max_target = 0;
  for (const auto& t : enc.target) max_target = std::max(max_target, t.size());
  for (std::size_t lo = 0; lo < enc.size(); lo += batch) {
    std::vector<std::size_t> rows;
    for (std::size_t i = lo; i < std::min(enc.size(), lo + batch); ++i) rows.push_back(i);
    const data::Seq2SeqBatch b = data::make_seq2seq_batch(enc, rows);
    Decoded d = model.greedy(b.source, max_target + 3);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      ev.predictions.push_back(target_vocab.decode(d.ids[k], data::Tokenizer::chars));
      refs.push_back(pairs[rows[k]].target);
      ev.decoded.ids.push_back(std::move(d.ids[k]));
      ev.decoded.attention.push_back(std::move(d.attention[k]));
    }
  }
  ev.exact_match = nn::exact_match(ev.predictions, refs);
  ev.char_accuracy = nn::token_accuracy(ev.predictions, refs);
  return ev;
}

// Does attention land where the answer is? For every example whose input spells the year with
// four digits, the share of attention that the first four output steps (the year's digits) put on
// those four input characters, averaged; and the same share under uniform attention (4 / S).
struct YearAttention {
  double mass = 0, uniform = 0;
  std::size_t examples = 0;
};

inline YearAttention year_attention(const Evaluation& ev, const std::vector<data::Pair>& pairs) {
  YearAttention y;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    const std::size_t at = pairs[i].source.rfind(pairs[i].target.substr(0, 4));
    const xt::xarray<double>& a = ev.decoded.attention[i];
    if (at == std::string::npos || a.shape()[0] < 4) continue;
    double m = 0;
    for (std::size_t r = 0; r < 4; ++r)
      for (std::size_t j = at; j < at + 4; ++j) m += a(r, j);
    y.mass += m / 4.0;
    y.uniform += 4.0 / double(a.shape()[1]);
    ++y.examples;
  }
  if (y.examples) y.mass /= double(y.examples), y.uniform /= double(y.examples);
  return y;
}

// Mean teacher-forced cross-entropy per target token over a split.
inline double mean_loss(Seq2Seq& model, const data::EncodedPairs& enc, std::size_t batch = 256) {
  NoGrad ng;
  double total = 0;
  std::size_t tokens = 0;
  for (std::size_t lo = 0; lo < enc.size(); lo += batch) {
    std::vector<std::size_t> rows;
    for (std::size_t i = lo; i < std::min(enc.size(), lo + batch); ++i) rows.push_back(i);
    const data::Seq2SeqBatch b = data::make_seq2seq_batch(enc, rows);
    std::size_t n = 0;
    for (bool m : b.decoder_target.real) n += m;
    total += model.loss(b).item() * double(n);
    tokens += n;
  }
  return total / double(tokens);
}

// ---------------------------------------------------------------------------------------------
// Clocks. On a shared machine wall time measures the neighbours as much as the model; the CPU
// time of this process (all its threads) is what the work itself costs.

inline double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
}

inline double wall_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// The 1-minute load average (runnable processes), or -1 where /proc/loadavg does not exist.
inline double load_average() {
  std::ifstream f("/proc/loadavg");
  double v = -1;
  if (!(f >> v)) return -1;
  return v;
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// ---------------------------------------------------------------------------------------------
// Training: Adam, global-norm clipping, teacher forcing, one validation pass per epoch.

struct TrainConfig {
  int epochs = 1;
  std::size_t batch = 64;
  double lr = 3e-3;
  double clip = 1.0;
  std::uint64_t seed = 0;  // the shuffling of each epoch
};

struct History {
  std::vector<double> train_loss, validation_loss;  // per epoch
  std::vector<double> step_loss;                    // loss of every training step
  std::vector<double> step_ms, step_cpu_ms;        // wall and CPU time of every training step
  std::size_t steps = 0;
  double median_step_ms() const { return median(step_ms); }
  double median_step_cpu_ms() const { return median(step_cpu_ms); }
};

// on_step(step) runs after every optimizer step, on_epoch(epoch) after each epoch's validation.
inline History train(Seq2Seq& model, const DateTask& task, const TrainConfig& tc, const std::string& name,
                     const std::function<void(std::size_t)>& on_step = {},
                     const std::function<void(int, const History&)>& on_epoch = {}) {
  nn::Adam<F> opt(model.parameters(), tc.lr);
  const data::Seq2SeqLoader loader(task.train, tc.batch, tc.seed);
  History h;
  for (int ep = 0; ep < tc.epochs; ++ep) {
    model.train();
    Progress bar(loader.num_batches(), name + " epoch " + std::to_string(ep + 1) + "/" + std::to_string(tc.epochs));
    double sum = 0;
    std::size_t n = 0;
    for (const data::Seq2SeqBatch& b : loader.epoch(std::size_t(ep))) {
      const double w0 = wall_ms(), c0 = cpu_ms();
      opt.zero_grad();
      const Tns loss = model.loss(b);
      loss.backward();
      nn::clip_grad_norm(opt.params(), tc.clip);
      opt.step();
      h.step_ms.push_back(wall_ms() - w0);
      h.step_cpu_ms.push_back(cpu_ms() - c0);
      const double l = loss.item();
      h.step_loss.push_back(l);
      sum += l;
      ++n;
      ++h.steps;
      bar.step(l);
      if (on_step) on_step(h.steps);
    }
    bar.finish();
    model.eval();
    h.train_loss.push_back(sum / double(n));
    h.validation_loss.push_back(mean_loss(model, task.validation));
    if (on_epoch) on_epoch(ep + 1, h);
  }
  return h;
}

// ---------------------------------------------------------------------------------------------
// Display helpers.

// Axis labels for a heatmap: one per token, spaces shown as an open box so they stay visible.
inline std::vector<std::string> char_labels(const std::string& text, bool with_eos) {
  std::vector<std::string> out;
  for (char ch : text) out.push_back(ch == ' ' ? "\u2423" : std::string(1, ch));
  if (with_eos) out.push_back("<eos>");
  return out;
}

// Output labels of a decoded example: its characters, and <eos> if it ended with one.
inline std::vector<std::string> output_labels(const std::vector<Index>& ids, const data::Vocab& v) {
  std::vector<std::string> out;
  for (Index id : ids) {
    const std::string& tok = v.token(id);
    out.push_back(tok == " " ? "\u2423" : tok);
  }
  return out;
}

}  // namespace attnlab::lessons::s2s
