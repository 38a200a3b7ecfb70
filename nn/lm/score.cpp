// Sliding-window scoring: cut every padded sequence x = <bos> s <eos> into windows, run the
// windows in batches, and put each scored target's -log P back at its place.
#include "nn/lm/score.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/ops.hpp"

namespace attnlab::nn::lm {

namespace {

// Inputs x[start .. start + length) of sequence `seq`; targets x[t + 1] for t in
// [start + first, start + length) are scored and written at out[offset + t].
struct Window {
  std::size_t seq, start, length, first, offset;
};

}  // namespace

IndexArray as_row(const std::vector<Index>& ids) {
  IndexArray a = IndexArray::from_shape({1, ids.size()});
  std::copy(ids.begin(), ids.end(), a.begin());
  return a;
}

double mean_of(const std::vector<double>& nats) {
  double sum = 0.0;
  for (double x : nats) sum += x;
  return nats.empty() ? 0.0 : sum / double(nats.size());
}

template <class T>
std::vector<double> causal_lm_token_nats(CausalLM<T>& model, const std::vector<std::vector<Index>>& sequences, Index bos,
                                         Index eos, std::size_t window, std::size_t batch) {
  const char* who = "causal_lm_token_nats";
  const CausalLMConfig& c = model.config();
  check(window >= 2, who, "window must be at least 2, got ", window);
  check(c.positional != Positional::Learned || window <= c.max_length, who, "window ", window,
        " is longer than the learned positions (max_length ", c.max_length, ")");
  check(batch > 0, who, "batch must be positive");
  const auto in_vocab = [&](Index t) { return t >= 0 && std::size_t(t) < c.vocab; };
  check(in_vocab(bos) && in_vocab(eos), who, "<bos> ", bos, " or <eos> ", eos, " is outside the vocabulary of ", c.vocab);

  // Padded sequences and their windows. Sequence i has n_i = |s_i| + 1 targets, written from
  // offset_i on; inputs x[0 .. n_i), targets x[1 .. n_i].
  std::vector<std::vector<Index>> padded;
  std::vector<Window> windows;
  std::size_t total = 0;
  const std::size_t half = window / 2;
  for (std::size_t i = 0; i < sequences.size(); ++i) {
    std::vector<Index> x{bos};
    for (Index t : sequences[i]) {
      check(in_vocab(t), who, "sequence ", i, " holds token ", t, ", outside the vocabulary of ", c.vocab);
      x.push_back(t);
    }
    x.push_back(eos);
    const std::size_t n = x.size() - 1;
    for (std::size_t start = 0;; start += half) {
      const std::size_t length = std::min(window, n - start);
      windows.push_back({i, start, length, start == 0 ? 0 : window - half, total});
      if (start + length >= n) break;
    }
    total += n;
    padded.push_back(std::move(x));
  }

  std::vector<double> nats(total, 0.0);
  NoGrad no_grad;
  const bool was_training = model.training();
  model.eval();
  // Longest first, so the windows of a batch have similar lengths and little padding.
  std::vector<std::size_t> order(windows.size());
  for (std::size_t w = 0; w < order.size(); ++w) order[w] = w;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return windows[a].length > windows[b].length; });
  for (std::size_t lo = 0; lo < order.size(); lo += batch) {
    const std::size_t hi = std::min(order.size(), lo + batch);
    const std::size_t L = windows[order[lo]].length;
    IndexArray ids = xt::zeros<Index>({hi - lo, L});
    for (std::size_t r = lo; r < hi; ++r) {
      const Window& w = windows[order[r]];
      for (std::size_t t = 0; t < w.length; ++t) ids(r - lo, t) = padded[w.seq][w.start + t];
    }
    const Array<T> logp = log_softmax(model.forward(ids), -1).value();  // (rows, L, V)
    for (std::size_t r = lo; r < hi; ++r) {
      const Window& w = windows[order[r]];
      for (std::size_t t = w.first; t < w.length; ++t) {
        const Index target = padded[w.seq][w.start + t + 1];
        nats[w.offset + w.start + t] = -double(logp(r - lo, t, std::size_t(target)));
      }
    }
  }
  if (was_training) model.train();
  return nats;
}

template std::vector<double> causal_lm_token_nats<float>(CausalLM<float>&, const std::vector<std::vector<Index>>&, Index,
                                                         Index, std::size_t, std::size_t);
template std::vector<double> causal_lm_token_nats<double>(CausalLM<double>&, const std::vector<std::vector<Index>>&, Index,
                                                          Index, std::size_t, std::size_t);

}  // namespace attnlab::nn::lm
