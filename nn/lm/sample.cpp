// Temperature and top-k sampling, and the generation loop with and without the KV cache.
#include "nn/lm/sample.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

#include <xtensor/xview.hpp>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "nn/lm/score.hpp"

namespace attnlab::nn::lm {

Index sample_token(const std::vector<double>& logits, double temperature, std::size_t top_k, Generator& gen) {
  const char* who = "sample_token";
  check(!logits.empty(), who, "no logits to sample from");
  check(temperature > 0.0 && std::isfinite(temperature), who, "temperature must be positive, got ", temperature);
  for (std::size_t i = 0; i < logits.size(); ++i)
    check(std::isfinite(logits[i]), who, "logit ", i, " is ", logits[i]);
  // The ids allowed: all, or the top_k largest (stable: the lower id wins a tie).
  std::vector<std::size_t> ids(logits.size());
  std::iota(ids.begin(), ids.end(), 0);
  if (top_k > 0 && top_k < ids.size()) {
    std::stable_sort(ids.begin(), ids.end(), [&](std::size_t a, std::size_t b) { return logits[a] > logits[b]; });
    ids.resize(top_k);
    std::sort(ids.begin(), ids.end());
  }
  // p_i = exp((z_i - max z) / T) / sum, over the allowed ids; the max keeps exp from overflowing.
  double top = -INFINITY;
  for (std::size_t i : ids) top = std::max(top, logits[i]);
  std::vector<double> weights(ids.size());
  double sum = 0.0;
  for (std::size_t j = 0; j < ids.size(); ++j) sum += weights[j] = std::exp((logits[ids[j]] - top) / temperature);
  const double u = gen.uniform() * sum;
  double acc = 0.0;
  for (std::size_t j = 0; j < ids.size(); ++j) {
    acc += weights[j];
    if (u < acc) return Index(ids[j]);
  }
  return Index(ids.back());  // u rounded up to the very end of the sum
}

namespace {

template <class T>
std::vector<double> last_row(const Tensor<T>& logits) {  // (1, n, V) -> the last position's V logits
  const Array<T>& z = logits.value();
  const std::size_t n = z.shape()[1], V = z.shape()[2];
  std::vector<double> out(V);
  for (std::size_t v = 0; v < V; ++v) out[v] = double(z(0, n - 1, v));
  return out;
}

}  // namespace

template <class T>
std::vector<Index> sample(CausalLM<T>& model, const std::vector<Index>& prompt, Index end, const SampleOptions& options,
                          Generator& gen) {
  const char* who = "sample";
  check(!prompt.empty(), who, "the prompt must hold at least one token (usually <bos>)");
  check(!model.training(), who, "the model is in training mode; call eval() first");
  const CausalLMConfig& c = model.config();
  const std::size_t limit = c.max_length;
  check(limit >= 2, who, "max_length must be at least 2 to generate, got ", limit);
  NoGrad no_grad;
  // The context the next token is predicted from: the tokens since the last restart.
  std::vector<Index> context(prompt.end() - long(std::min(prompt.size(), limit)), prompt.end());
  std::vector<Index> generated;
  CausalLMCache<T> cache;
  std::size_t cached = 0;  // how many tokens of the context the cache holds
  while (generated.size() < options.max_tokens) {
    std::vector<double> logits;
    if (options.use_cache) {
      if (cached == 0) cache = CausalLMCache<T>();
      logits = last_row(model.forward_cached(as_row({context.begin() + long(cached), context.end()}), cache));
      cached = context.size();
    } else {
      logits = last_row(model.forward(as_row(context)));
    }
    const Index next = sample_token(logits, options.temperature, options.top_k, gen);
    generated.push_back(next);
    if (options.stop_at_end && next == end) break;
    if (context.size() == limit) {  // full: keep the last half, and fill the cache again from it
      context.erase(context.begin(), context.begin() + long(limit - limit / 2));
      cached = 0;
    }
    context.push_back(next);
  }
  return generated;
}

template std::vector<Index> sample<float>(CausalLM<float>&, const std::vector<Index>&, Index, const SampleOptions&,
                                          Generator&);
template std::vector<Index> sample<double>(CausalLM<double>&, const std::vector<Index>&, Index, const SampleOptions&,
                                           Generator&);

}  // namespace attnlab::nn::lm
