#include "nn/lm/by_position.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "nn/lm/score.hpp"

namespace attnlab::nn::lm {

namespace {

// The length shared by every opening; ShapeError naming `who` otherwise.
std::size_t common_length(const std::vector<std::vector<Index>>& openings, const char* who) {
  check(!openings.empty(), who, "needs at least one opening");
  const std::size_t L = openings.front().size();
  check(L > 0, who, "the openings are empty");
  for (std::size_t i = 0; i < openings.size(); ++i)
    check(openings[i].size() == L, who, "opening ", i, " holds ", openings[i].size(), " tokens, opening 0 holds ", L);
  return L;
}

}  // namespace

std::vector<std::vector<Index>> openings(const std::vector<std::vector<Index>>& sequences, std::size_t length) {
  std::vector<std::vector<Index>> out;
  for (const std::vector<Index>& s : sequences)
    if (s.size() >= length) out.emplace_back(s.begin(), s.begin() + long(length));
  return out;
}

IndexArray after_bos(const std::vector<std::vector<Index>>& openings, std::size_t first, std::size_t count, Index bos) {
  const char* who = "after_bos";
  check(count > 0 && first + count <= openings.size(), who, "rows ", first, " .. ", first + count, " (exclusive) of ",
        openings.size(), " openings");
  const std::size_t L = openings[first].size();
  check(L > 0, who, "opening ", first, " is empty");
  IndexArray ids = IndexArray::from_shape({count, L});
  for (std::size_t b = 0; b < count; ++b) {
    const std::vector<Index>& o = openings[first + b];
    check(o.size() == L, who, "opening ", first + b, " holds ", o.size(), " tokens, opening ", first, " holds ", L);
    for (std::size_t t = 0; t < L; ++t) ids(b, t) = t == 0 ? bos : o[t - 1];
  }
  return ids;
}

template <class T>
std::vector<double> causal_lm_nats_by_position(CausalLM<T>& model, const std::vector<std::vector<Index>>& openings,
                                               Index bos, std::size_t batch) {
  const char* who = "causal_lm_nats_by_position";
  const std::size_t L = common_length(openings, who), N = openings.size();
  check(batch > 0, who, "batch must be positive");
  check(L <= model.config().max_length, who, "openings of ", L, " tokens are longer than max_length ",
        model.config().max_length);
  check(!model.training(), who, "the model is in training mode; call eval() first");
  std::vector<double> nats(L, 0.0);
  NoGrad no_grad;
  for (std::size_t lo = 0; lo < N; lo += batch) {
    const std::size_t n = std::min(batch, N - lo);
    const Array<T> logp = log_softmax(model.forward(after_bos(openings, lo, n, bos)), -1).value();
    for (std::size_t b = 0; b < n; ++b)
      for (std::size_t t = 0; t < L; ++t) nats[t] -= double(logp(b, t, std::size_t(openings[lo + b][t]))) / double(N);
  }
  return nats;
}

std::vector<double> kneser_ney_nats_by_position(const KneserNey& kn, const std::vector<std::vector<Index>>& openings,
                                                std::size_t order) {
  const char* who = "kneser_ney_nats_by_position";
  const std::size_t L = common_length(openings, who), N = openings.size();
  check(order >= 1 && order <= kn.max_order(), who, "order ", order, " is outside 1 .. ", kn.max_order());
  // token_nats scores each opening as a whole sequence: its L tokens, then an <eos>, skipped here.
  const std::vector<double> nats = kn.token_nats(openings)[order - 1];
  std::vector<double> out(L, 0.0);
  for (std::size_t i = 0; i < N; ++i)
    for (std::size_t t = 0; t < L; ++t) out[t] += nats[i * (L + 1) + t] / double(N);
  return out;
}

template <class T>
std::vector<double> logit_change_by_position(CausalLM<T>& model, const std::vector<Index>& a, const std::vector<Index>& b) {
  const char* who = "logit_change_by_position";
  check(!a.empty() && a.size() == b.size(), who, "needs two inputs of one length, got ", a.size(), " and ", b.size());
  check(!model.training(), who, "the model is in training mode; call eval() first");
  NoGrad no_grad;
  const Array<T> x = model.forward(as_row(a)).value(), y = model.forward(as_row(b)).value();
  std::vector<double> change(a.size(), 0.0);
  for (std::size_t t = 0; t < a.size(); ++t)
    for (std::size_t v = 0; v < x.shape()[2]; ++v) change[t] = std::max(change[t], double(std::abs(x(0, t, v) - y(0, t, v))));
  return change;
}

template <class T>
double cache_max_diff(CausalLM<T>& model, const std::vector<Index>& ids) {
  const char* who = "cache_max_diff";
  check(!ids.empty(), who, "needs at least one token");
  check(!model.training(), who, "the model is in training mode; call eval() first");
  NoGrad no_grad;
  const Array<T> full = model.forward(as_row(ids)).value();
  CausalLMCache<T> cache;
  std::vector<Tensor<T>> steps;
  for (Index id : ids) steps.push_back(model.forward_cached(as_row({id}), cache));
  const Array<T> stepped = concat(steps, 1).value();
  double diff = 0.0;
  for (std::size_t i = 0; i < full.size(); ++i)
    diff = std::max(diff, std::abs(double(full.data()[i]) - double(stepped.data()[i])));
  return diff;
}

#define ATTNLAB_BY_POSITION(T)                                                                                          \
  template std::vector<double> causal_lm_nats_by_position<T>(CausalLM<T>&, const std::vector<std::vector<Index>>&,    \
                                                             Index, std::size_t);                                     \
  template std::vector<double> logit_change_by_position<T>(CausalLM<T>&, const std::vector<Index>&,                   \
                                                           const std::vector<Index>&);                                \
  template double cache_max_diff<T>(CausalLM<T>&, const std::vector<Index>&);
ATTNLAB_BY_POSITION(float)
ATTNLAB_BY_POSITION(double)
#undef ATTNLAB_BY_POSITION

}  // namespace attnlab::nn::lm
