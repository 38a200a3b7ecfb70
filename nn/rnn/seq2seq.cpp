#include "nn/rnn/seq2seq.hpp"

#include <algorithm>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include "nn/metrics.hpp"

namespace attnlab::nn::rnn {

// ------------------------------------------------------------------ the model

Encoder::Encoder(std::size_t vocab, const Seq2SeqConfig& c, Generator& gen)
    : embed(vocab, c.embed, gen, data::Vocab::pad),
      gru(c.embed, c.encoder_hidden, gen, GRUOptions{1, true}),
      bridge(2 * c.encoder_hidden, c.decoder_hidden, gen) {
  register_module("embed", embed);
  register_module("gru", gru);
  register_module("bridge", bridge);
}

Encoded Encoder::forward(const data::PaddedBatch& src) {
  const std::vector<std::size_t> lengths(src.lengths.begin(), src.lengths.end());
  GRUOutput<F> o = gru.forward(embed(src.ids), Tns(), lengths);
  // state (2, B, He): [forward final, backward final]; each direction has read the whole source.
  const Tns both = concat<F>({squeeze(slice(o.state, 0, 0, 1), 0), squeeze(slice(o.state, 0, 1, 2), 0)}, -1);
  return {o.output, both, attnlab::tanh(bridge(both)), src.allowed()};
}

Decoder::Decoder(std::size_t vocab, const Seq2SeqConfig& c, Generator& gen)
    : embed(vocab, c.embed, gen, data::Vocab::pad) {
  register_module("embed", embed);
}

Step Decoder::step(const Encoded& e, const IndexArray& prev, const Tns& state) {
  if (needs_position())
    throw std::logic_error("Decoder::step: this decoder's local-m window is centred at the output step; "
                           "call step(e, prev, state, t)");
  return step(e, prev, state, 0);
}

namespace {
constexpr const char* kNoAttention = "none";

std::unique_ptr<Score<F>> score_of(const Seq2SeqConfig& c, Generator& gen) {
  return make_score<F>(c.score, c.decoder_hidden, 2 * c.encoder_hidden, gen, c.attention_hidden);
}
}  // namespace

BahdanauDecoder::BahdanauDecoder(std::size_t vocab, const Seq2SeqConfig& c, Generator& gen)
    : Decoder(vocab, c, gen),
      attention_(c.score == kNoAttention ? nullptr : std::make_unique<Attention<F>>(score_of(c, gen))),
      cell(c.embed + 2 * c.encoder_hidden, c.decoder_hidden, gen),
      out(c.decoder_hidden + 2 * c.encoder_hidden, vocab, gen) {
  if (attention_) register_module("attention", *attention_);
  register_module("cell", cell);
  register_module("out", out);
}

const Attention<F>& BahdanauDecoder::attention() const {
  if (!attention_) throw std::logic_error("Seq2Seq: this decoder has no attention (score \"none\")");
  return *attention_;
}

std::optional<Memory<F>> BahdanauDecoder::memory(const Encoded& e) const {
  if (!attention_) return std::nullopt;
  return attention_->memory(e.annotations, e.annotations, e.real);
}

Step BahdanauDecoder::step(const Encoded& e, const IndexArray& prev, const Tns& state, std::size_t) {
  return step_over(e, memory(e), prev, state);
}

Step BahdanauDecoder::step_over(const Encoded& e, const std::optional<Memory<F>>& memory,
                                const IndexArray& prev, const Tns& state) {
  // c_t (B, 2He): read by attention, or the one summary vector for every step.
  AttentionResult<F> a;
  if (memory) a = attention_->forward(state, *memory);
  const Tns context = memory ? a.output : e.summary;
  const Tns s = cell.forward(concat<F>({embed(prev), context}, -1), state);
  return {out(concat<F>({s, context}, -1)), s, a.weights};
}

Tns BahdanauDecoder::teacher_forced(const Encoded& e, const IndexArray& inputs, Tns* weights) {
  std::vector<Tns> logits, ws;
  Tns state = e.init;
  const std::optional<Memory<F>> m = memory(e);  // the keys read once for all T steps
  for (std::size_t t = 0; t < inputs.shape()[1]; ++t) {
    const IndexArray prev = xt::view(inputs, xt::all(), t);
    Step s = step_over(e, m, prev, state);
    logits.push_back(s.logits);
    if (weights && attention_) ws.push_back(s.weights);
    state = s.state;
  }
  if (weights && attention_) *weights = stack(ws, 1);
  return stack(logits, 1);
}

namespace {
const Seq2SeqConfig& with_attention(const Seq2SeqConfig& c) {
  if (c.score == kNoAttention)
    throw std::invalid_argument("LuongDecoder: score \"none\" is for the Bahdanau decoder only");
  return c;
}
}  // namespace

LuongDecoder::LuongDecoder(std::size_t vocab, const Seq2SeqConfig& c, Generator& gen)
    : Decoder(vocab, with_attention(c), gen),
      gru(c.embed, c.decoder_hidden, gen),
      attention_(score_of(c, gen)),
      combine(2 * c.encoder_hidden + c.decoder_hidden, c.decoder_hidden, gen),
      out(c.decoder_hidden, vocab, gen) {
  register_module("gru", gru);
  register_module("attention", attention_);
  register_module("combine", combine);
  register_module("out", out);
  if (c.local_window > 0 && c.local_alignment == LocalAlignment::monotonic) {
    monotonic_window = c.local_window;  // local-m: nothing to learn about where to look
  } else if (c.local_window > 0) {
    local = std::make_unique<LocalPAttention<F>>(c.decoder_hidden, c.attention_hidden, c.local_window, gen);
    register_module("local", *local);
  }
}

Tns LuongDecoder::attend_and_predict(const Encoded& e, const Tns& states, Tns* weights, std::size_t first_step) {
  Tns context;
  if (monotonic_window > 0) {
    const LocalAttentionResult<F> a = local_m_attention(attention_.score(), states, e.annotations, e.annotations,
                                                        e.real, monotonic_window, first_step);
    context = a.output;
    if (weights) *weights = a.weights;
  } else if (local) {
    const LocalAttentionResult<F> a = local->forward(attention_.score(), states, e.annotations, e.annotations, e.real);
    context = a.output;
    if (weights) *weights = a.weights;
  } else {
    const AttentionResult<F> a = attention_(states, e.annotations, e.annotations, e.real);
    context = a.output;
    if (weights) *weights = a.weights;
  }
  return out(attnlab::tanh(combine(concat<F>({context, states}, -1))));
}

Tns LuongDecoder::local_positions(const Encoded& e, const IndexArray& inputs) {
  if (monotonic_window > 0) return Tns(monotonic_centres<F>(e.real, inputs.shape()[1], 0));
  if (!local) throw std::logic_error("LuongDecoder::local_positions: this decoder attends globally (local_window 0)");
  NoGrad no_grad;
  const Tns states = gru.forward(embed(inputs), unsqueeze(e.init, 0)).output;  // (B, T, Hd)
  std::vector<std::size_t> lengths(states.dim(0), 0);
  for (std::size_t b = 0; b < lengths.size(); ++b)
    for (std::size_t s = 0; s < e.real.shape()[1]; ++s) lengths[b] += e.real.mask()(b, s) ? 1 : 0;
  return local->centres(states, lengths);
}

Tns LuongDecoder::teacher_forced(const Encoded& e, const IndexArray& inputs, Tns* weights) {
  GRUOutput<F> o = gru.forward(embed(inputs), unsqueeze(e.init, 0));
  return attend_and_predict(e, o.output, weights, 0);
}

Step LuongDecoder::step(const Encoded& e, const IndexArray& prev, const Tns& state, std::size_t t) {
  IndexArray ids = prev;
  ids.reshape({prev.size(), std::size_t(1)});
  GRUOutput<F> o = gru.forward(embed(ids), unsqueeze(state, 0));
  Tns w;
  const Tns logits = attend_and_predict(e, o.output, &w, t);
  return {squeeze(logits, 1), squeeze(o.state, 0), squeeze(w, 1)};
}

Seq2Seq::Seq2Seq(const Seq2SeqConfig& c, std::size_t source_vocab, std::size_t target_vocab, Generator& gen)
    : config_(c), encoder(source_vocab, c, gen) {
  register_module("encoder", encoder);
  if (c.style == DecoderStyle::Bahdanau && c.local_window > 0)
    throw std::invalid_argument("Seq2Seq: local_window " + std::to_string(c.local_window) +
                                " (local attention) is for the Luong decoder only");
  if (c.style == DecoderStyle::Bahdanau)
    decoder = std::make_unique<BahdanauDecoder>(target_vocab, c, gen);
  else
    decoder = std::make_unique<LuongDecoder>(target_vocab, c, gen);
  register_module("decoder", *decoder);
}

Tns Seq2Seq::forward(const data::Seq2SeqBatch& b, Tns* weights) {
  return decoder->teacher_forced(encoder.forward(b.source), b.decoder_input.ids, weights);
}

Tns Seq2Seq::loss(const data::Seq2SeqBatch& b) {
  CrossEntropyOptions ce;
  ce.ignore_index = data::Vocab::pad;
  return cross_entropy(forward(b), b.decoder_target.ids, ce);
}

Decoded Seq2Seq::greedy(const data::PaddedBatch& src, std::size_t max_len) {
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
    Step s = decoder->step(e, prev, state, t);
    prev = argmax_last(s.logits.value());
    state = s.state;
    bool all = true;
    for (std::size_t b = 0; b < B; ++b) {
      if (done[b]) continue;
      ids[b].push_back(prev(b));
      if (s.weights.defined()) {
        std::vector<double> row(static_cast<std::size_t>(src.lengths(b)));
        for (std::size_t j = 0; j < row.size(); ++j) row[j] = s.weights.value()(b, j);
        rows[b].push_back(std::move(row));
      }
      done[b] = prev(b) == data::Vocab::eos;
      all = all && done[b];
    }
    if (all) break;
  }
  Decoded d;
  d.ids = std::move(ids);
  if (!decoder->has_attention()) return d;
  for (std::size_t b = 0; b < B; ++b) {
    const std::size_t T = rows[b].size(), S = static_cast<std::size_t>(src.lengths(b));
    xt::xarray<double> m = xt::zeros<double>({T, S});
    for (std::size_t i = 0; i < T; ++i)
      for (std::size_t j = 0; j < S; ++j) m(i, j) = rows[b][i][j];
    d.attention.push_back(std::move(m));
  }
  return d;
}

std::optional<QueryKeys> luong_query_keys(Seq2Seq& model, const data::PaddedBatch& source, const std::vector<Index>& ids) {
  auto* luong = dynamic_cast<LuongDecoder*>(model.decoder.get());
  const auto fail = [](const std::string& what) { throw std::invalid_argument("luong_query_keys: " + what); };
  if (!luong || luong->local || luong->monotonic_window > 0) fail("the model's decoder is not Luong's with global attention");
  if (source.ids.dimension() != 2 || source.ids.shape()[0] != 1)
    fail("a batch of " + std::to_string(source.ids.dimension() == 2 ? source.ids.shape()[0] : 0) + " sources, not one");
  if (ids.empty()) fail("no output ids, no steps to score");
  const std::string& name = model.config().score;
  std::optional<double> scale;
  if (name == "dot" || name == "scaled dot") scale = luong->attention_.score().dot_product_scale();
  if (name == "general") scale = 1.0;  // q^T W k, unscaled
  if (!scale) return std::nullopt;
  const std::size_t T = ids.size(), S = static_cast<std::size_t>(source.lengths(0));
  if (S == 0 || S > source.ids.shape()[1]) fail("a source of length " + std::to_string(S) + " in " + shape_str(source.ids.shape()));
  NoGrad no_grad;
  const Encoded e = model.encoder.forward(source);
  IndexArray inputs = xt::zeros<Index>({std::size_t(1), T});
  inputs(0, 0) = data::Vocab::bos;
  for (std::size_t t = 1; t < T; ++t) inputs(0, t) = ids[t - 1];
  const Tns states = luong->gru.forward(luong->embed(inputs), unsqueeze(e.init, 0)).output;  // (1, T, Hd)
  const Tns keys = luong->attention_.score().read_keys(e.annotations);                     // (1, S', dk)
  return QueryKeys{xt::cast<double>(xt::view(states.value(), 0)),
                   xt::cast<double>(xt::view(keys.value(), 0, xt::range(0, S))), *scale};
}

// ------------------------------------------------------------------ evaluation

namespace {
// body(rows) for consecutive rows 0..batch-1, batch..2 batch-1, ... of n (the last may be shorter).
template <class Body>
void batches_of(const char* who, std::size_t n, std::size_t batch, Body&& body) {
  if (n == 0) throw std::invalid_argument(std::string(who) + ": the split is empty");
  if (batch == 0) throw std::invalid_argument(std::string(who) + ": the batch size must be positive, got 0");
  for (std::size_t lo = 0; lo < n; lo += batch) {
    std::vector<std::size_t> rows(std::min(n, lo + batch) - lo);
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = lo + i;
    body(rows);
  }
}
}  // namespace

double mean_loss(Seq2Seq& model, const data::EncodedPairs& split, std::size_t batch) {
  NoGrad ng;
  double total = 0;
  std::size_t tokens = 0;
  batches_of("mean_loss", split.size(), batch, [&](const std::vector<std::size_t>& rows) {
    const data::Seq2SeqBatch b = data::make_seq2seq_batch(split, rows);
    std::size_t n = 0;
    for (bool real : b.decoder_target.real) n += real;
    total += model.loss(b).item() * double(n);
    tokens += n;
  });
  return total / double(tokens);
}

std::vector<std::vector<double>> window_centres(Seq2Seq& model, const data::EncodedPairs& split, std::size_t batch) {
  auto* luong = dynamic_cast<LuongDecoder*>(model.decoder.get());
  if (!luong) throw std::logic_error("window_centres: a Bahdanau decoder has no local window");
  NoGrad ng;
  std::vector<std::vector<double>> centres;
  batches_of("window_centres", split.size(), batch, [&](const std::vector<std::size_t>& rows) {
    const data::Seq2SeqBatch b = data::make_seq2seq_batch(split, rows);
    const Array<F> p = luong->local_positions(model.encoder.forward(b.source), b.decoder_input.ids).value();
    for (std::size_t k = 0; k < rows.size(); ++k) {
      centres.emplace_back();
      for (std::size_t t = 0; t < split.target[rows[k]].size() + 1; ++t) centres.back().push_back(p(k, t));
    }
  });
  return centres;
}

Evaluation evaluate(Seq2Seq& model, const data::EncodedPairs& split, const std::vector<data::Pair>& pairs,
                    const data::Vocab& target_vocab, std::size_t batch) {
  if (pairs.size() != split.size())
    throw std::invalid_argument("evaluate: " + std::to_string(pairs.size()) + " pairs for a split of " +
                                std::to_string(split.size()));
  Evaluation ev;
  std::vector<std::string> refs;
  std::size_t max_target = 0;
  for (const auto& t : split.target) max_target = std::max(max_target, t.size());
  batches_of("evaluate", split.size(), batch, [&](const std::vector<std::size_t>& rows) {
    const data::Seq2SeqBatch b = data::make_seq2seq_batch(split, rows);
    Decoded d = model.greedy(b.source, max_target + 3);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      ev.predictions.push_back(target_vocab.decode(d.ids[k], data::Tokenizer::chars));
      refs.push_back(pairs[rows[k]].target);
      ev.decoded.ids.push_back(std::move(d.ids[k]));
      if (!d.attention.empty()) ev.decoded.attention.push_back(std::move(d.attention[k]));
    }
  });
  ev.exact_match = exact_match(ev.predictions, refs);
  ev.char_accuracy = token_accuracy(ev.predictions, refs);
  return ev;
}

}  // namespace attnlab::nn::rnn
