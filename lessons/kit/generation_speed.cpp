#include "lessons/kit/generation_speed.hpp"

#include <stdexcept>
#include <string>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "core/runtime/flops.hpp"

#include "lessons/kit/timing.hpp"
#include "nn/lm/sample.hpp"
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

std::vector<CostCurve> next_token_costs(nn::CausalLM<float>& model, const std::vector<Index>& prefix,
                                        const std::vector<std::size_t>& sizes, int rounds) {
  check_next_token_sizes("next_token_costs", model, prefix, sizes, rounds);
  const auto first = [&prefix](std::size_t n) { return std::vector<Index>(prefix.begin(), prefix.begin() + long(n)); };
  // Again from the start: the whole n + 1 ids, every layer over every position.
  CostedOp again{"the whole prefix again", [&model, first](std::size_t n) {
                   const IndexArray ids = nn::lm::as_row(first(n + 1));
                   return SizedWork{[] {}, [&model, ids] {
                                      NoGrad no_grad;
                                      model.forward(ids);
                                    }};
                 }};
  // With the cache: the n before are kept; the (n + 1)-th goes through alone.
  CostedOp cached{"one position through the KV cache", [&model, first, &prefix](std::size_t n) {
                    auto filled = std::make_shared<nn::CausalLMCache<float>>();
                    {
                      NoGrad no_grad;
                      model.forward_cached(nn::lm::as_row(first(n)), *filled);
                    }
                    auto cache = std::make_shared<nn::CausalLMCache<float>>(*filled);
                    const IndexArray next = nn::lm::as_row({prefix[n]});
                    return SizedWork{[cache, filled] { *cache = *filled; },
                                     [&model, cache, next] { model.forward_cached(next, *cache); }};
                  }};
  CostOptions o;
  o.rounds = [rounds](std::size_t) { return rounds; };
  return costs_against_n({again, cached}, sizes, o);
}

}  // namespace attnlab::lessons
