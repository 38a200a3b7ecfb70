#include "lessons/kit/seq2seq.hpp"

#include <algorithm>
#include <numeric>
#include <set>

#include <xtensor/xview.hpp>

#include "lessons/kit/figures.hpp"
#include "lessons/story/lesson.hpp"
#include "nn/data/dates.hpp"
#include "nn/metrics.hpp"
#include "nn/optim.hpp"

namespace attnlab::lessons::s2s {

// ------------------------------------------------------------------ the task

DateTask make_date_task(std::size_t n, std::uint64_t seed) {
  Generator gen(seed);
  const std::vector<data::Pair> all = data::make_dates(n, gen);
  DateTask t;
  t.pairs = data::split_examples(all, {0.8, 0.1, 0.1}, seed + 1);
  static_cast<data::EncodedSplits&>(t) = data::encode_splits(t.pairs, data::Tokenizer::chars, data::Tokenizer::chars);
  return t;
}

std::size_t split_overlap(const data::Splits<data::Pair>& p) {
  std::set<std::string> train, val;
  for (const auto& e : p.train) train.insert(e.source);
  for (const auto& e : p.validation) val.insert(e.source);
  std::size_t n = 0;
  for (const auto& e : p.validation) n += train.count(e.source);
  for (const auto& e : p.test) n += train.count(e.source) + val.count(e.source);
  return n;
}

// ------------------------------------------------------------------ the model

Encoder::Encoder(std::size_t vocab, const ModelConfig& c, Generator& gen)
    : embed(vocab, c.embed, gen, data::Vocab::pad),
      gru(c.embed, c.encoder_hidden, gen, nn::GRUOptions{1, true}),
      bridge(2 * c.encoder_hidden, c.decoder_hidden, gen) {
  register_module("embed", embed);
  register_module("gru", gru);
  register_module("bridge", bridge);
}

Encoded Encoder::forward(const data::PaddedBatch& src) {
  const std::vector<std::size_t> lengths(src.lengths.begin(), src.lengths.end());
  nn::GRUOutput<F> o = gru.forward(embed(src.ids), Tns(), lengths);
  // state (2, B, He): [forward final, backward final]; each direction has read the whole source.
  const Tns both = concat<F>({squeeze(slice(o.state, 0, 0, 1), 0), squeeze(slice(o.state, 0, 1, 2), 0)}, -1);
  return {o.output, both, attnlab::tanh(bridge(both)), src.allowed()};
}

Decoder::Decoder(std::size_t vocab, const ModelConfig& c, Generator& gen)
    : embed(vocab, c.embed, gen, data::Vocab::pad) {
  register_module("embed", embed);
}

namespace {
constexpr const char* kNoAttention = "none";

std::unique_ptr<nn::Score<F>> score_of(const ModelConfig& c, Generator& gen) {
  return nn::make_score<F>(c.score, c.decoder_hidden, 2 * c.encoder_hidden, gen, c.attention_hidden);
}
}  // namespace

BahdanauDecoder::BahdanauDecoder(std::size_t vocab, const ModelConfig& c, Generator& gen)
    : Decoder(vocab, c, gen),
      attention_(c.score == kNoAttention ? nullptr : std::make_unique<nn::Attention<F>>(score_of(c, gen))),
      cell(c.embed + 2 * c.encoder_hidden, c.decoder_hidden, gen),
      out(c.decoder_hidden + 2 * c.encoder_hidden, vocab, gen) {
  if (attention_) register_module("attention", *attention_);
  register_module("cell", cell);
  register_module("out", out);
}

const nn::Attention<F>& BahdanauDecoder::attention() const {
  if (!attention_) throw std::logic_error("Seq2Seq: this decoder has no attention (score \"none\")");
  return *attention_;
}

std::optional<nn::Memory<F>> BahdanauDecoder::memory(const Encoded& e) const {
  if (!attention_) return std::nullopt;
  return attention_->memory(e.annotations, e.annotations, e.real);
}

Step BahdanauDecoder::step(const Encoded& e, const IndexArray& prev, const Tns& state) {
  return step(e, memory(e), prev, state);
}

Step BahdanauDecoder::step(const Encoded& e, const std::optional<nn::Memory<F>>& memory,
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
  const std::optional<nn::Memory<F>> m = memory(e);  // the keys read once for all T steps
  for (std::size_t t = 0; t < inputs.shape()[1]; ++t) {
    const IndexArray prev = xt::view(inputs, xt::all(), t);
    Step s = step(e, m, prev, state);
    logits.push_back(s.logits);
    if (weights && attention_) ws.push_back(s.weights);
    state = s.state;
  }
  if (weights && attention_) *weights = stack(ws, 1);
  return stack(logits, 1);
}

namespace {
const ModelConfig& with_attention(const ModelConfig& c) {
  if (c.score == kNoAttention)
    throw std::invalid_argument("LuongDecoder: score \"none\" is for the Bahdanau decoder only");
  return c;
}
}  // namespace

LuongDecoder::LuongDecoder(std::size_t vocab, const ModelConfig& c, Generator& gen)
    : Decoder(vocab, with_attention(c), gen),
      gru(c.embed, c.decoder_hidden, gen),
      attention_(score_of(c, gen)),
      combine(2 * c.encoder_hidden + c.decoder_hidden, c.decoder_hidden, gen),
      out(c.decoder_hidden, vocab, gen) {
  register_module("gru", gru);
  register_module("attention", attention_);
  register_module("combine", combine);
  register_module("out", out);
}

Tns LuongDecoder::attend_and_predict(const Encoded& e, const Tns& states, Tns* weights) {
  const AttentionResult<F> a = attention_(states, e.annotations, e.annotations, e.real);
  if (weights) *weights = a.weights;
  return out(attnlab::tanh(combine(concat<F>({a.output, states}, -1))));
}

Tns LuongDecoder::teacher_forced(const Encoded& e, const IndexArray& inputs, Tns* weights) {
  nn::GRUOutput<F> o = gru.forward(embed(inputs), unsqueeze(e.init, 0));
  return attend_and_predict(e, o.output, weights);
}

Step LuongDecoder::step(const Encoded& e, const IndexArray& prev, const Tns& state) {
  IndexArray ids = prev;
  ids.reshape({prev.size(), std::size_t(1)});
  nn::GRUOutput<F> o = gru.forward(embed(ids), unsqueeze(state, 0));
  Tns w;
  const Tns logits = attend_and_predict(e, o.output, &w);
  return {squeeze(logits, 1), squeeze(o.state, 0), squeeze(w, 1)};
}

Seq2Seq::Seq2Seq(const ModelConfig& c, std::size_t source_vocab, std::size_t target_vocab, Generator& gen)
    : config_(c), encoder(source_vocab, c, gen) {
  register_module("encoder", encoder);
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
    Step s = decoder->step(e, prev, state);
    prev = nn::argmax_last(s.logits.value());
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

// ------------------------------------------------------------------ training and evaluation

void record(const Plan& p) {
  config("examples", p.examples);
  config("embed", p.model.embed);
  config("encoder_hidden", p.model.encoder_hidden);
  config("hidden", p.model.decoder_hidden);
  config("attention_hidden", p.model.attention_hidden);
  config("epochs", p.fit.epochs);
  config("batch", p.fit.batch);
  config("lr", p.lr);
  config("clip", p.fit.clip);
}

History train(Seq2Seq& model, const data::EncodedPairs& train, const data::EncodedPairs& validation, double lr,
              FitOptions options) {
  nn::Adam<F> opt(model.parameters(), lr);
  options.validate = [&] { return Scores{{"loss", mean_loss(model, validation)}}; };
  return fit(model, opt, train.size(),
             [&](const std::vector<std::size_t>& rows) { return model.loss(data::make_seq2seq_batch(train, rows)); },
             options);
}

History train(Seq2Seq& model, const DateTask& task, double lr, FitOptions options) {
  return train(model, task.train, task.validation, lr, std::move(options));
}

double mean_loss(Seq2Seq& model, const data::EncodedPairs& split, std::size_t batch) {
  NoGrad ng;
  double total = 0;
  std::size_t tokens = 0;
  in_batches(split.size(), batch, [&](const std::vector<std::size_t>& rows) {
    const data::Seq2SeqBatch b = data::make_seq2seq_batch(split, rows);
    std::size_t n = 0;
    for (bool real : b.decoder_target.real) n += real;
    total += model.loss(b).item() * double(n);
    tokens += n;
  });
  return total / double(tokens);
}

Evaluation evaluate(Seq2Seq& model, const data::EncodedPairs& split, const std::vector<data::Pair>& pairs,
                    const data::Vocab& target_vocab, std::size_t batch) {
  Evaluation ev;
  std::vector<std::string> refs;
  std::size_t max_target = 0;
  for (const auto& t : split.target) max_target = std::max(max_target, t.size());
  in_batches(split.size(), batch, [&](const std::vector<std::size_t>& rows) {
    const data::Seq2SeqBatch b = data::make_seq2seq_batch(split, rows);
    Decoded d = model.greedy(b.source, max_target + 3);
    for (std::size_t k = 0; k < rows.size(); ++k) {
      ev.predictions.push_back(target_vocab.decode(d.ids[k], data::Tokenizer::chars));
      refs.push_back(pairs[rows[k]].target);
      ev.decoded.ids.push_back(std::move(d.ids[k]));
      if (!d.attention.empty()) ev.decoded.attention.push_back(std::move(d.attention[k]));
    }
  });
  ev.exact_match = nn::exact_match(ev.predictions, refs);
  ev.char_accuracy = nn::token_accuracy(ev.predictions, refs);
  return ev;
}

YearAttention year_attention(const Evaluation& ev, const std::vector<data::Pair>& pairs) {
  if (ev.decoded.attention.size() != pairs.size())
    throw std::invalid_argument("year_attention: " + std::to_string(ev.decoded.attention.size()) +
                                " attention maps for " + std::to_string(pairs.size()) + " examples");
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

std::vector<std::string> output_labels(const std::vector<Index>& ids, const data::Vocab& v) {
  std::vector<std::string> out;
  for (Index id : ids) out.push_back(visible(v.token(id)));
  return out;
}

}  // namespace attnlab::lessons::s2s
