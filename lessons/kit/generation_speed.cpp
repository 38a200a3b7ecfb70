#include "lessons/kit/generation_speed.hpp"

#include <stdexcept>
#include <string>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "core/runtime/allocator.hpp"
#include "core/runtime/flops.hpp"

#include "lessons/kit/figures.hpp"
#include "lessons/kit/timing.hpp"
#include "nn/lm/sample.hpp"
#include "plots/error.hpp"
#include "plots/line.hpp"
#include "nn/lm/score.hpp"

namespace attnlab::lessons {

GenerationSpeed generation_speed(nn::CausalLM<float>& model, Index start, std::size_t tokens, int rounds) {
  if (tokens == 0 || rounds < 1)
    throw std::invalid_argument("generation_speed: needs at least one token and one round, got " +
                                std::to_string(tokens) + " tokens and " + std::to_string(rounds) + " rounds");
  nn::lm::SampleOptions o;
  o.max_tokens = tokens;
  o.stop_at_end = false;  // the end token is never honoured: always `tokens` tokens
  Generator g1(1), g2(1);
  const std::vector<Timing> t = interleaved_medians(
      {[&] {
         o.use_cache = true;
         nn::lm::sample(model, {start}, start, o, g1);
       },
       [&] {
         o.use_cache = false;
         nn::lm::sample(model, {start}, start, o, g2);
       }},
      rounds);
  return {double(tokens) / (t[0].wall_ms / 1000), double(tokens) / (t[1].wall_ms / 1000)};
}

std::vector<double> cached_generation_speeds(const std::vector<nn::CausalLM<float>*>& models, Index start,
                                             std::size_t tokens, int rounds) {
  if (models.empty() || tokens == 0 || rounds < 1)
    throw std::invalid_argument("cached_generation_speeds: needs a model, a token and a round, got " +
                                std::to_string(models.size()) + " models, " + std::to_string(tokens) + " tokens and " +
                                std::to_string(rounds) + " rounds");
  nn::lm::SampleOptions o;
  o.max_tokens = tokens;
  o.stop_at_end = false;
  std::vector<std::function<void()>> work;
  for (nn::CausalLM<float>* model : models)
    work.push_back([model, start, o] {
      Generator gen(1);
      nn::lm::sample(*model, {start}, start, o, gen);
    });
  std::vector<double> out;
  for (const Timing& t : interleaved_medians(work, rounds)) out.push_back(double(tokens) / (t.wall_ms / 1000));
  return out;
}

namespace {
void check_next_token_sizes(const char* function, const nn::CausalLM<float>& model, const std::vector<Index>& prefix,
                            const std::vector<std::size_t>& sizes, int rounds) {
  const auto refuse = [function](const std::string& why) { throw std::invalid_argument(std::string(function) + ": " + why); };
  if (sizes.empty() || rounds < 1) refuse("needs sizes and at least one round, got " + std::to_string(sizes.size()) +
                                          " sizes and " + std::to_string(rounds) + " rounds");
  const std::size_t longest = std::min(prefix.size(), model.config().max_length);
  for (std::size_t n : sizes)
    if (n == 0 || n + 1 > longest)
      refuse("after " + std::to_string(n) + " tokens (at least 1) the next is id " + std::to_string(n + 1) + ", but the prefix holds " +
             std::to_string(prefix.size()) + " and the model reads " + std::to_string(model.config().max_length));
}
}  // namespace

plots::Figure next_token_figure(const std::vector<CostCurve>& cost, const std::vector<double>& held,
                                const std::string& title) {
  if (cost.size() != 2 || cost[0].n.empty() || cost[0].n.size() != held.size() || cost[1].n != cost[0].n ||
      cost[0].peak_mib.size() != held.size() || cost[1].peak_mib.size() != held.size())
    plots::fail("next_token_figure", "needs the two ways measured at the ", held.size(), " sizes of the cache, got ",
                cost.size(), " curves");
  const std::vector<double>& n = cost[0].n;
  const auto through_last = [&n](const std::vector<double>& y) {  // c n through the last point
    std::vector<double> g;
    for (double x : n) g.push_back(y.back() * x / n.back());
    plots::Series s = curve("∝ n", n, g);
    s.dashed = true, s.color = plots::Color{0.5, 0.5, 0.5};
    return s;
  };
  // Memory on linear axes, in KiB: a cache that grows like n is a straight line.
  std::vector<double> cache_kib, cached_total, again;
  for (std::size_t i = 0; i < held.size(); ++i) {
    cache_kib.push_back(held[i] / 1024.0);
    cached_total.push_back(cache_kib.back() + cost[1].peak_mib[i] * 1024.0);
    again.push_back(cost[0].peak_mib[i] * 1024.0);
  }
  plots::Figure fig(2400, 1000, 1, 2);
  fig.title(title);
  plots::LineOptions lo;
  lo.log_x = lo.log_y = lo.markers = true;
  plots::line_plot(fig.panel(0).title("CPU time of the next character, median of the rounds")
                       .xlabel("characters before it, n (log scale)").ylabel("CPU milliseconds (log scale)"),
                   {curve(cost[0].name, n, cost[0].cpu_ms), curve(cost[1].name, n, cost[1].cpu_ms),
                    through_last(cost[0].cpu_ms)},
                   lo);
  lo.log_x = lo.log_y = false;
  lo.ymin = 0;
  plots::line_plot(fig.panel(1).title("Memory: the call's peak, and the cache held between calls")
                       .xlabel("characters before it, n").ylabel("KiB"),
                   {curve(cost[0].name + ": the call's peak", n, again),
                    curve("through the cache: the cache + the call's peak", n, cached_total),
                    curve("the KV cache alone", n, cache_kib), through_last(cache_kib)},
                   lo);
  return fig;
}

NextTokenFlops next_token_flops(nn::CausalLM<float>& model, const std::vector<Index>& prefix, std::size_t n) {
  check_next_token_sizes("next_token_flops", model, prefix, {n}, 1);
  NoGrad no_grad;
  NextTokenFlops out;
  const std::vector<Index> all(prefix.begin(), prefix.begin() + long(n + 1));
  std::uint64_t before = flops_counted();
  model.forward(nn::lm::as_row(all));
  out.without_cache = double(flops_counted() - before);
  nn::CausalLMCache<float> cache;
  model.forward_cached(nn::lm::as_row(std::vector<Index>(all.begin(), all.end() - 1)), cache);
  before = flops_counted();
  model.forward_cached(nn::lm::as_row({all.back()}), cache);
  out.with_cache = double(flops_counted() - before);
  return out;
}

namespace {
// Each layer keeps the attention weights of its last forward for plots, (B, h, L, L) after a pass
// over L positions, and frees them when the next forward replaces them. Freed inside a measured
// call, those bytes would offset the call's own peak (the allocator counts the most held beyond
// what was held when the call began): after a pass over n positions the next call would seem to
// need up to 16 n^2 bytes a layer less than it does. So before every measured call the model
// passes one token through a scratch cache, and what it holds when the call begins is the same
// at every n: (B, h, 1, 1) a layer.
void settle(nn::CausalLM<float>& model, Index token) {
  nn::CausalLMCache<float> scratch;
  model.forward_cached(nn::lm::as_row({token}), scratch);
}
}  // namespace

std::vector<CostCurve> next_token_costs(nn::CausalLM<float>& model, const std::vector<Index>& prefix,
                                        const std::vector<std::size_t>& sizes, int rounds) {
  check_next_token_sizes("next_token_costs", model, prefix, sizes, rounds);
  const auto first = [&prefix](std::size_t n) { return std::vector<Index>(prefix.begin(), prefix.begin() + long(n)); };
  const Index token = prefix.front();
  // Again from the start: the whole n + 1 ids, every layer over every position.
  CostedOp again{"the whole prefix again", [&model, first, token](std::size_t n) {
                   const IndexArray ids = nn::lm::as_row(first(n + 1));
                   return SizedWork{[&model, token] { settle(model, token); }, [&model, ids] {
                                      NoGrad no_grad;
                                      model.forward(ids);
                                    }};
                 }};
  // With the cache: the n before are kept; the (n + 1)-th goes through alone.
  CostedOp cached{"one position through the KV cache", [&model, first, &prefix, token](std::size_t n) {
                    auto filled = std::make_shared<nn::CausalLMCache<float>>();
                    {
                      NoGrad no_grad;
                      model.forward_cached(nn::lm::as_row(first(n)), *filled);
                    }
                    auto cache = std::make_shared<nn::CausalLMCache<float>>(*filled);
                    const IndexArray next = nn::lm::as_row({prefix[n]});
                    return SizedWork{[&model, token, cache, filled] { settle(model, token), *cache = *filled; },
                                     [&model, cache, next] { model.forward_cached(next, *cache); }};
                  }};
  CostOptions o;
  o.rounds = [rounds](std::size_t) { return rounds; };
  return costs_against_n({again, cached}, sizes, o);
}

std::vector<double> kv_cache_bytes_held(nn::CausalLM<float>& model, const std::vector<Index>& prefix,
                                        const std::vector<std::size_t>& sizes) {
  check_next_token_sizes("kv_cache_bytes_held", model, prefix, sizes, 1);
  std::vector<double> held;
  for (std::size_t n : sizes) {
    nn::CausalLMCache<float> filled;
    model.forward_cached(nn::lm::as_row(std::vector<Index>(prefix.begin(), prefix.begin() + long(n))), filled);
    const std::size_t before = live_bytes();
    const auto copy = std::make_unique<nn::CausalLMCache<float>>(filled);  // the cache and its container
    held.push_back(counting_bytes() ? double(live_bytes() - before) : 0.0);
  }
  return held;
}

}  // namespace attnlab::lessons
