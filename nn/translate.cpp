#include "nn/translate.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include <xtensor/xview.hpp>

#include "core/tensor.hpp"
#include "nn/decode.hpp"

namespace attnlab::nn {

namespace {

constexpr Index kPad = data::Vocab::pad, kBos = data::Vocab::bos, kEos = data::Vocab::eos;

void check_split(const char* fn, const data::EncodedPairs& split, std::size_t batch) {
  if (split.size() == 0) throw std::invalid_argument(std::string(fn) + ": the split has no sentences");
  if (batch == 0) throw std::invalid_argument(std::string(fn) + ": the batch size must be positive, got 0");
  if (split.target.size() != split.source.size())
    throw std::invalid_argument(std::string(fn) + ": the split has " + std::to_string(split.source.size()) +
                                " sources but " + std::to_string(split.target.size()) + " targets");
}

std::size_t longest_source(const data::EncodedPairs& split) {
  std::size_t n = 0;
  for (const auto& s : split.source) n = std::max(n, s.size());
  return n;
}

template <class Body>
void batches(std::size_t n, std::size_t batch, Body&& body) {
  for (std::size_t start = 0; start < n; start += batch) {
    std::vector<std::size_t> rows;
    for (std::size_t i = start; i < std::min(n, start + batch); ++i) rows.push_back(i);
    body(rows);
  }
}

}  // namespace

std::vector<Index> before_end(const std::vector<Index>& ids, Index end) {
  return {ids.begin(), std::find(ids.begin(), ids.end(), end)};
}

std::vector<data::Sequence> translate(Seq2SeqTransformer<float>& model, const data::EncodedPairs& split,
                                      std::size_t extra, std::size_t batch) {
  check_split("translate", split, batch);
  model.eval();
  const std::size_t max_len = longest_source(split) + extra;
  std::vector<data::Sequence> out;
  batches(split.size(), batch, [&](const std::vector<std::size_t>& rows) {
    const data::Seq2SeqBatch b = data::make_seq2seq_batch(split, rows, /*source_eos=*/false);
    for (const auto& ids : greedy_decode_batch(model, b.source.ids, b.source.allowed(), kBos, kEos, max_len))
      out.push_back(before_end(ids, kEos));
  });
  return out;
}

std::vector<data::Sequence> translate(rnn::Seq2Seq& model, const data::EncodedPairs& split, std::size_t extra,
                                      std::size_t batch) {
  check_split("translate", split, batch);
  model.eval();
  const std::size_t max_len = longest_source(split) + extra;
  std::vector<data::Sequence> out;
  batches(split.size(), batch, [&](const std::vector<std::size_t>& rows) {
    NoGrad no_grad;
    for (const auto& ids : model.greedy(data::make_seq2seq_batch(split, rows).source, max_len).ids)
      out.push_back(before_end(ids, kEos));
  });
  return out;
}

const std::vector<data::Sequence>& BeamSweep::at(std::size_t width, double alpha) const {
  const auto it = beam.find({width, alpha});
  if (it == beam.end())
    throw std::out_of_range("BeamSweep::at: width " + std::to_string(width) + " with alpha " + std::to_string(alpha) +
                            " was not swept");
  return it->second;
}

data::EncodedPairs spread_evenly(const data::EncodedPairs& split, std::size_t n, std::vector<std::size_t>* rows) {
  data::EncodedPairs out;
  const std::size_t k = std::min(n, split.size());
  for (std::size_t i = 0; i < k; ++i) {
    const std::size_t r = i * split.size() / k;
    if (rows) rows->push_back(r);
    out.source.push_back(split.source[r]);
    out.target.push_back(split.target[r]);
  }
  return out;
}

LengthScores score_by_length(const std::vector<data::Sequence>& translations, const data::EncodedPairs& split,
                             std::size_t longest_group) {
  check_split("score_by_length", split, 1);
  if (translations.size() != split.size())
    throw std::invalid_argument("score_by_length: " + std::to_string(translations.size()) + " translations for " +
                                std::to_string(split.size()) + " sentences");
  std::vector<std::size_t> groups;
  LengthScores out;
  for (std::size_t i = 0; i < split.size(); ++i) {
    groups.push_back(std::min(split.source[i].size(), longest_group));
    out.cut_short += translations[i].size() < split.target[i].size();
    out.mean_words += double(translations[i].size());
  }
  out.cut_short /= double(split.size());
  out.mean_words /= double(split.size());
  out.by_length = bleu_by_group(translations, split.target, groups);
  return out;
}

BeamSweep beam_sweep(Seq2SeqTransformer<float>& model, const data::EncodedPairs& split, std::size_t widest,
                     const std::vector<double>& alphas, std::size_t extra) {
  check_split("beam_sweep", split, 1);
  if (widest == 0) throw std::invalid_argument("beam_sweep: the widest beam must be at least 1, got 0");
  if (alphas.empty()) throw std::invalid_argument("beam_sweep: no length penalty (alpha) given");
  model.eval();
  BeamSweep d;
  for (std::size_t i = 0; i < split.size(); ++i) {
    IndexArray src = IndexArray::from_shape({split.source[i].size()});
    std::copy(split.source[i].begin(), split.source[i].end(), src.begin());
    const StepFn step = seq2seq_step(model, src);
    const std::size_t max_len = split.source[i].size() + extra;
    d.greedy.push_back(before_end(greedy_decode(step, kBos, kEos, max_len), kEos));
    for (std::size_t w = 1; w <= widest; ++w)
      for (double a : alphas) {
        BeamOptions o;
        o.width = w;
        o.length_penalty = a;
        o.max_len = max_len;
        d.beam[{w, a}].push_back(before_end(beam_search(step, kBos, kEos, o).front().tokens, kEos));
      }
  }
  return d;
}

Hypothesis beam_translate(Seq2SeqTransformer<float>& model, const data::Sequence& source, std::size_t width,
                          double alpha, std::size_t extra) {
  if (source.empty()) throw std::invalid_argument("beam_translate: the source has no words");
  if (width == 0) throw std::invalid_argument("beam_translate: the beam width must be at least 1, got 0");
  if (!(alpha >= 0.0))
    throw std::invalid_argument("beam_translate: the length penalty alpha must be 0 or more, got " + std::to_string(alpha));
  model.eval();
  IndexArray src = IndexArray::from_shape({source.size()});
  std::copy(source.begin(), source.end(), src.begin());
  BeamOptions o;
  o.width = width, o.length_penalty = alpha, o.max_len = source.size() + extra;
  Hypothesis best = beam_search(seq2seq_step(model, src), kBos, kEos, o).front();
  best.tokens = before_end(best.tokens, kEos);
  return best;
}

TokenScores teacher_forced_scores(Seq2SeqTransformer<float>& model, const data::EncodedPairs& split,
                                  double smoothing, std::size_t batch) {
  check_split("teacher_forced_scores", split, batch);
  NoGrad no_grad;
  model.eval();
  TokenScores s;
  batches(split.size(), batch, [&](const std::vector<std::size_t>& rows) {
    const data::Seq2SeqBatch b = data::make_seq2seq_batch(split, rows, /*source_eos=*/false);
    const Tensor<float> logits =
        model.forward(b.source.ids, b.decoder_input.ids, b.source.allowed(), b.decoder_input.allowed());
    CrossEntropyOptions ce;
    ce.ignore_index = kPad;
    ce.reduction = Reduction::Sum;
    ce.label_smoothing = smoothing;
    s.loss += cross_entropy(logits, b.decoder_target.ids, ce).item();
    ce.label_smoothing = 0.0;
    s.nll += cross_entropy(logits, b.decoder_target.ids, ce).item();
    const Array<float> p = softmax(logits, -1).value();
    const std::size_t T = p.shape()[1], V = p.shape()[2];
    for (std::size_t i = 0; i < rows.size(); ++i)
      for (std::size_t t = 0; t < T; ++t) {
        const Index want = b.decoder_target.ids(i, t);
        if (want == kPad) continue;
        const float* row = &p(i, t, 0);
        const std::size_t best = std::size_t(std::max_element(row, row + V) - row);
        s.confidence += row[best];
        s.accuracy += Index(best) == want;
        ++s.tokens;
      }
  });
  for (double* v : {&s.loss, &s.nll, &s.accuracy, &s.confidence}) *v /= double(s.tokens);
  return s;
}

std::vector<Array<float>> cross_attention_weights(Seq2SeqTransformer<float>& model, const data::Seq2SeqBatch& b) {
  NoGrad no_grad;
  model.eval();
  model.forward(b.source.ids, b.decoder_input.ids, b.source.allowed(), b.decoder_input.allowed());
  std::vector<Array<float>> out;
  for (std::size_t l = 0; l < model.decoder.size(); ++l) out.push_back(model.decoder.layer(l).cross_attention().value());
  return out;
}

CrossAttention cross_attention_with_parts(Seq2SeqTransformer<float>& model, const data::Seq2SeqBatch& b) {
  TransformerAttention a = attention_with_parts(model, b);
  CrossAttention out;
  for (const Tensor<float>& w : a.cross) out.weights.push_back(w.value());
  out.parts = std::move(a.cross_parts);
  return out;
}

TransformerAttention attention_with_parts(Seq2SeqTransformer<float>& model, const data::Seq2SeqBatch& b) {
  const auto keep = [&](bool on) {
    model.encoder.keep_score_parts(on);
    for (std::size_t l = 0; l < model.decoder.size(); ++l)
      model.decoder.layer(l).self_attn.keep_score_parts(on), model.decoder.layer(l).multihead_attn.keep_score_parts(on);
  };
  keep(true);
  {
    NoGrad no_grad;
    model.eval();
    model.forward(b.source.ids, b.decoder_input.ids, b.source.allowed(), b.decoder_input.allowed());
  }
  TransformerAttention out{model.encoder.attention_weights(), model.decoder.self_attention_weights(),
                           model.decoder.cross_attention_weights(), model.encoder.score_parts(), {}, {}};
  for (std::size_t l = 0; l < model.decoder.size(); ++l) {
    out.decoder_parts.push_back(model.decoder.layer(l).self_attn.score_parts());
    out.cross_parts.push_back(model.decoder.layer(l).multihead_attn.score_parts());
  }
  keep(false);
  return out;
}

xt::xarray<double> sentence_cross_attention(Seq2SeqTransformer<float>& model, const data::EncodedPairs& split,
                                            std::size_t row,
                                            const std::vector<std::pair<std::size_t, std::size_t>>& heads) {
  if (row >= split.size())
    throw std::invalid_argument("sentence_cross_attention: row " + std::to_string(row) + " of a split of " +
                                std::to_string(split.size()));
  const std::vector<Array<float>> layers = cross_attention_weights(model, data::make_seq2seq_batch(split, {row}, false));
  const std::size_t t = split.target[row].size(), s = split.source[row].size();
  xt::xarray<double> out = xt::zeros<double>({heads.size(), t, s});
  for (std::size_t i = 0; i < heads.size(); ++i) {
    const auto [l, h] = heads[i];
    if (l >= layers.size() || h >= layers[l].shape()[1])
      throw std::invalid_argument("sentence_cross_attention: layer " + std::to_string(l) + ", head " + std::to_string(h) +
                                  " of a model of " + std::to_string(layers.size()) + " layers of " +
                                  std::to_string(layers.front().shape()[1]) + " heads");
    xt::view(out, i) = xt::view(xt::cast<double>(layers[l]), 0, h, xt::range(0, t), xt::range(0, s));
  }
  return out;
}

std::pair<std::size_t, double> HeadAlignment::best_in_layer(std::size_t layer) const {
  if (layer >= at_output.size())
    throw std::out_of_range("HeadAlignment::best_in_layer: layer " + std::to_string(layer) + " of " +
                            std::to_string(at_output.size()));
  const std::vector<AlignmentCounts>& heads = at_output[layer];
  std::size_t best = 0;
  for (std::size_t h = 1; h < heads.size(); ++h)
    if (heads[h].error_rate() < heads[best].error_rate()) best = h;
  return {best, heads[best].error_rate()};
}

HeadAlignment score_heads_as_aligners(Seq2SeqTransformer<float>& model, const data::EncodedPairs& split,
                                      const std::vector<Mask>& truths, std::size_t batch) {
  check_split("score_heads_as_aligners", split, batch);
  if (truths.size() != split.size())
    throw std::invalid_argument("score_heads_as_aligners: " + std::to_string(truths.size()) + " truths for " +
                                std::to_string(split.size()) + " pairs");
  for (std::size_t i = 0; i < split.size(); ++i)
    if (truths[i].dimension() != 2 || truths[i].shape()[0] != split.target[i].size() ||
        truths[i].shape()[1] != split.source[i].size())
      throw std::invalid_argument("score_heads_as_aligners: truth " + std::to_string(i) + " is not (" +
                                  std::to_string(split.target[i].size()) + " target words, " +
                                  std::to_string(split.source[i].size()) + " source words)");
  const std::size_t L = model.decoder.size(), H = model.config().layer.heads;
  const auto grid = std::vector<std::vector<AlignmentCounts>>(L, std::vector<AlignmentCounts>(H));
  HeadAlignment s{grid, grid};
  batches(split.size(), batch, [&](const std::vector<std::size_t>& rows) {
    const std::vector<Array<float>> layers =
        cross_attention_weights(model, data::make_seq2seq_batch(split, rows, /*source_eos=*/false));
    for (std::size_t k = 0; k < rows.size(); ++k) {
      const Mask& truth = truths[rows[k]];
      const std::size_t n_tgt = truth.shape()[0], n_src = truth.shape()[1];
      for (std::size_t l = 0; l < L; ++l)
        for (std::size_t h = 0; h < H; ++h)
          for (std::size_t shift : {0, 1}) {
            const Array<float> map = xt::view(layers[l], k, h, xt::range(shift, shift + n_tgt), xt::range(0, n_src));
            (shift ? s.at_input : s.at_output)[l][h] += count_links(peak_links(map, n_src), truth, truth);
          }
    }
  });
  return s;
}

}  // namespace attnlab::nn
