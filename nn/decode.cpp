#include "nn/decode.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "core/tensor.hpp"
#include "nn/data/batch.hpp"
#include "nn/rnn/seq2seq.hpp"

namespace attnlab::nn {

namespace {

// Log-probabilities may round a hair above 0 (log_softmax in float); anything clearly positive
// is not a log-probability, and it would break the stopping bound of beam search (which relies
// on log_prob only ever decreasing).
constexpr double kPositiveSlack = 1e-3;

// Call the step function and check what it returned: (N, V), V fixed across steps (vocab = 0
// means "not seen yet"), end a valid id, no NaN, no log-probability above 0.
Array<float> checked_step(const char* where, const StepFn& step,
                          const std::vector<std::vector<Index>>& prefixes, Index end,
                          std::size_t& vocab) {
  Array<float> lp = step(prefixes);
  const Shape s = shape_of(lp);
  check(s.size() == 2 && s[0] == prefixes.size() && s[1] > 0, where,
        "step function returned shape ", shape_str(s), " for ", prefixes.size(),
        " prefixes; expected (", prefixes.size(), ",V)");
  if (vocab == 0) vocab = s[1];
  check(s[1] == vocab, where, "step function changed the vocabulary size from ", vocab, " to ",
        s[1]);
  check(end >= 0 && static_cast<std::size_t>(end) < vocab, where, "end token ", end,
        " out of range for vocabulary size ", vocab);
  const float* p = lp.data();
  for (std::size_t i = 0; i < lp.size(); ++i) {
    check(!std::isnan(p[i]), where, "step function returned NaN log-probability at (", i / vocab,
          ",", i % vocab, ")");
    check(p[i] <= kPositiveSlack, where, "step function returned log-probability ", p[i],
          " > 0 at (", i / vocab, ",", i % vocab, ")");
  }
  return lp;
}

double normalized(double log_prob, std::size_t length, double alpha) {
  return alpha == 0.0 ? log_prob : log_prob / std::pow(static_cast<double>(length), alpha);
}

struct Beam {
  std::vector<Index> tokens;
  double log_prob;
};

struct Candidate {
  std::size_t beam;
  Index token;
  double log_prob;
};

}  // namespace

std::vector<Index> greedy_decode(const StepFn& step, Index start, Index end, std::size_t max_len) {
  const char* where = "greedy_decode";
  check(max_len > 0, where, "max_len must be positive");
  std::vector<std::vector<Index>> prefix{{start}};
  std::size_t vocab = 0;
  for (std::size_t t = 0; t < max_len; ++t) {
    const Array<float> lp = checked_step(where, step, prefix, end, vocab);
    // std::max_element returns the first maximum: ties go to the lower token id.
    const float* row = lp.data();
    const Index best = static_cast<Index>(std::max_element(row, row + vocab) - row);
    prefix[0].push_back(best);
    if (best == end) break;
  }
  return std::vector<Index>(prefix[0].begin() + 1, prefix[0].end());
}

std::vector<Hypothesis> beam_search(const StepFn& step, Index start, Index end,
                                    const BeamOptions& options) {
  const char* where = "beam_search";
  const std::size_t width = options.width;
  const double alpha = options.length_penalty;
  check(width > 0, where, "width must be positive");
  check(options.max_len > 0, where, "max_len must be positive");
  check(std::isfinite(alpha), where, "length_penalty must be finite, got ", alpha);

  std::vector<Beam> live{{{}, 0.0}};
  std::vector<Hypothesis> finished;
  std::size_t vocab = 0;
  std::vector<std::vector<Index>> prefixes;
  std::vector<Candidate> candidates;

  // A total order, so the result never depends on sort internals: score, then log_prob, then
  // the lexicographically smaller token sequence (lower ids first).
  auto by_score = [](const Hypothesis& a, const Hypothesis& b) {
    if (a.score != b.score) return a.score > b.score;
    if (a.log_prob != b.log_prob) return a.log_prob > b.log_prob;
    return a.tokens < b.tokens;
  };

  for (std::size_t t = 1; t <= options.max_len && !live.empty(); ++t) {
    prefixes.assign(live.size(), {start});
    for (std::size_t b = 0; b < live.size(); ++b)
      prefixes[b].insert(prefixes[b].end(), live[b].tokens.begin(), live[b].tokens.end());
    const Array<float> lp = checked_step(where, step, prefixes, end, vocab);

    candidates.clear();
    candidates.reserve(live.size() * vocab);
    const float* p = lp.data();
    for (std::size_t b = 0; b < live.size(); ++b)
      for (std::size_t v = 0; v < vocab; ++v)
        candidates.push_back({b, static_cast<Index>(v), live[b].log_prob + p[b * vocab + v]});
    // Only the best `2 * width` can matter: at most `width` of them end in `end` and still
    // `width` remain to refill the beam. Ties: the better-ranked parent first, then the lower id.
    const std::size_t keep = std::min(candidates.size(), 2 * width);
    std::partial_sort(candidates.begin(), candidates.begin() + keep, candidates.end(),
                      [](const Candidate& a, const Candidate& b) {
                        if (a.log_prob != b.log_prob) return a.log_prob > b.log_prob;
                        if (a.beam != b.beam) return a.beam < b.beam;
                        return a.token < b.token;
                      });

    std::vector<Beam> next;
    next.reserve(width);
    for (std::size_t r = 0; r < keep && next.size() < width; ++r) {
      const Candidate& c = candidates[r];
      if (c.log_prob == -std::numeric_limits<double>::infinity()) break;  // impossible: drop
      std::vector<Index> tokens = live[c.beam].tokens;
      tokens.push_back(c.token);
      if (c.token == end) {
        // An end candidate counts only if it survived pruning to the top `width`.
        if (r < width)
          finished.push_back({std::move(tokens), c.log_prob, normalized(c.log_prob, t, alpha)});
      } else {
        next.push_back({std::move(tokens), c.log_prob});
      }
    }
    live = std::move(next);

    if (finished.size() >= width && !live.empty()) {
      std::sort(finished.begin(), finished.end(), by_score);
      const double worst = finished[width - 1].score;
      // The best a live beam can still reach: its log_prob only decreases (each token adds a
      // log-probability <= 0), so L / n^alpha peaks at the longest length for alpha >= 0 and at
      // the next length for alpha < 0.
      const std::size_t n = alpha >= 0.0 ? options.max_len : t + 1;
      bool hopeless = t < options.max_len;  // at max_len the live beams are finalized below
      for (const Beam& b : live) hopeless = hopeless && normalized(b.log_prob, n, alpha) <= worst;
      if (hopeless) live.clear();
    }
  }
  // Beams still live after max_len tokens are finalized without an end token.
  for (Beam& b : live) {
    const std::size_t len = b.tokens.size();
    finished.push_back({std::move(b.tokens), b.log_prob, normalized(b.log_prob, len, alpha)});
  }
  std::sort(finished.begin(), finished.end(), by_score);
  if (finished.size() > width) finished.resize(width);
  return finished;
}

namespace {

// The prefixes as one (N, L) batch, right-padded by repeating each prefix's last id: harmless
// for a causal decoder, whose position j never sees positions after j.
IndexArray pad_prefixes(const char* where, const std::vector<std::vector<Index>>& prefixes) {
  check(!prefixes.empty(), where, "no prefixes");
  std::size_t longest = 0;
  for (const auto& p : prefixes) {
    check(!p.empty(), where, "empty prefix (it must at least hold the start token)");
    longest = std::max(longest, p.size());
  }
  IndexArray ids = IndexArray::from_shape({prefixes.size(), longest});
  for (std::size_t i = 0; i < prefixes.size(); ++i)
    for (std::size_t j = 0; j < longest; ++j) ids(i, j) = prefixes[i][std::min(j, prefixes[i].size() - 1)];
  return ids;
}

// Row i: log_softmax of the logits (N, L, V) at prefix i's last real position, in double.
template <class T>
Array<float> last_log_probs(const Array<T>& logits, const std::vector<std::vector<Index>>& prefixes) {
  const std::size_t n = prefixes.size(), longest = logits.shape()[1], vocab = logits.shape()[2];
  Array<float> out = Array<float>::from_shape({n, vocab});
  for (std::size_t i = 0; i < n; ++i) {
    // log_softmax(z) = z - max - log(sum exp(z - max))
    const T* z = logits.data() + (i * longest + prefixes[i].size() - 1) * vocab;
    const double m = *std::max_element(z, z + vocab);
    double sum = 0.0;
    for (std::size_t v = 0; v < vocab; ++v) sum += std::exp(static_cast<double>(z[v]) - m);
    const double log_z = m + std::log(sum);
    for (std::size_t v = 0; v < vocab; ++v) out(i, v) = static_cast<float>(static_cast<double>(z[v]) - log_z);
  }
  return out;
}

}  // namespace

template <class T>
StepFn causal_lm_step(CausalLM<T>& model) {
  return [&model](const std::vector<std::vector<Index>>& prefixes) -> Array<float> {
    const char* where = "causal_lm_step";
    check(!model.training(), where, "the model is in training mode; call eval() first");
    const IndexArray ids = pad_prefixes(where, prefixes);
    NoGrad no_grad;
    return last_log_probs(model.forward(ids).value(), prefixes);  // logits (N, L, V)
  };
}

template <class T>
StepFn seq2seq_step(Seq2SeqTransformer<T>& model, const IndexArray& src) {
  const char* where = "seq2seq_step";
  check(!model.training(), where, "the model is in training mode; call eval() first");
  check(src.dimension() == 1 && src.size() > 0, where, "src must be one non-empty sequence of ids, got shape ",
        shape_str(src.shape()));
  Array<T> memory;
  {
    NoGrad no_grad;
    IndexArray batch = src;
    batch.reshape({1, src.size()});
    memory = model.encode(batch).value();  // (1, S, d), encoded once for every step
  }
  return [&model, memory, where](const std::vector<std::vector<Index>>& prefixes) -> Array<float> {
    check(!model.training(), where, "the model is in training mode; call eval() first");
    const IndexArray ids = pad_prefixes(where, prefixes);
    const std::size_t n = prefixes.size(), s = memory.shape()[1], d = memory.shape()[2];
    Array<T> repeated = Array<T>::from_shape({n, s, d});  // the same memory for every prefix
    for (std::size_t i = 0; i < n; ++i) std::copy(memory.begin(), memory.end(), repeated.begin() + i * s * d);
    NoGrad no_grad;
    return last_log_probs(model.decode(ids, Tensor<T>(std::move(repeated))).value(), prefixes);
  };
}

StepFn rnn_seq2seq_step(rnn::Seq2Seq& model, const IndexArray& src) {
  const char* where = "rnn_seq2seq_step";
  check(src.dimension() == 1 && src.size() > 0, where, "src must be one non-empty sequence of ids, got shape ",
        shape_str(src.shape()));
  const data::PaddedBatch one = data::pad_sequences({data::Sequence(src.begin(), src.end())});
  const rnn::Encoded e = [&] {
    NoGrad no_grad;
    return model.encoder.forward(one);  // (1, S, 2He), encoded once for every step
  }();
  return [&model, e, where](const std::vector<std::vector<Index>>& prefixes) -> Array<float> {
    const IndexArray ids = pad_prefixes(where, prefixes);
    const std::size_t n = prefixes.size(), S = e.real.shape()[1];
    NoGrad no_grad;
    const auto repeat = [n](const rnn::Tns& t) { return concat<float>(std::vector<rnn::Tns>(n, t), 0); };
    Mask real = Mask::from_shape({n, S});
    for (std::size_t i = 0; i < n; ++i)
      for (std::size_t j = 0; j < S; ++j) real(i, j) = e.real.mask()(0, j);
    const rnn::Encoded each{repeat(e.annotations), repeat(e.summary), repeat(e.init), Allowed::where(std::move(real))};
    return last_log_probs(model.decoder->teacher_forced(each, ids).value(), prefixes);
  };
}

template <class T>
std::vector<std::vector<Index>> greedy_decode_batch(Seq2SeqTransformer<T>& model, const IndexArray& src,
                                                    const Allowed& src_allowed, Index start, Index end,
                                                    std::size_t max_len) {
  const char* where = "greedy_decode_batch";
  check(!model.training(), where, "the model is in training mode; call eval() first");
  check(max_len > 0, where, "max_len must be positive");
  check(src.dimension() == 2 && src.shape()[0] > 0 && src.shape()[1] > 0, where,
        "src must be (B, S) ids with B, S > 0, got ", shape_str(src.shape()));
  const std::size_t B = src.shape()[0];
  NoGrad no_grad;
  const Tensor<T> memory = model.encode(src, src_allowed);
  IndexArray prefix = IndexArray::from_shape({B, 1});
  prefix.fill(start);
  std::vector<std::vector<Index>> out(B);
  std::vector<bool> done(B, false);
  std::size_t open = B;
  for (std::size_t t = 0; t < max_len && open > 0; ++t) {
    const Array<T> logits = model.decode(prefix, memory, src_allowed).value();  // (B, t + 1, V)
    const std::size_t vocab = logits.shape()[2];
    check(end >= 0 && static_cast<std::size_t>(end) < vocab, where, "end token ", end,
          " out of range for vocabulary size ", vocab);
    IndexArray next = IndexArray::from_shape({B, t + 2});
    for (std::size_t b = 0; b < B; ++b) {
      const T* z = logits.data() + (b * (t + 1) + t) * vocab;
      const Index best = static_cast<Index>(std::max_element(z, z + vocab) - z);
      for (std::size_t j = 0; j <= t; ++j) next(b, j) = prefix(b, j);
      next(b, t + 1) = best;
      if (done[b]) continue;
      out[b].push_back(best);
      if (best == end) done[b] = true, --open;
    }
    prefix = std::move(next);
  }
  return out;
}

template StepFn causal_lm_step<float>(CausalLM<float>&);
template StepFn causal_lm_step<double>(CausalLM<double>&);
template StepFn seq2seq_step<float>(Seq2SeqTransformer<float>&, const IndexArray&);
template StepFn seq2seq_step<double>(Seq2SeqTransformer<double>&, const IndexArray&);
template std::vector<std::vector<Index>> greedy_decode_batch<float>(Seq2SeqTransformer<float>&, const IndexArray&,
                                                                    const Allowed&, Index, Index, std::size_t);
template std::vector<std::vector<Index>> greedy_decode_batch<double>(Seq2SeqTransformer<double>&, const IndexArray&,
                                                                     const Allowed&, Index, Index, std::size_t);

}  // namespace attnlab::nn
