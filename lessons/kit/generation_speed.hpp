// How fast a causal language model writes, with the KV cache and without it (nn/lm/sample): the
// same tokens drawn both ways from one seed, the two timed in turn within every round
// (interleaved_medians), so a burst of load from a neighbour hits both alike.
#pragma once

#include <cstddef>
#include <vector>

#include "lessons/kit/timing.hpp"
#include "plots/figure.hpp"
#include "nn/transformer/causal_lm.hpp"

namespace attnlab::lessons {

struct GenerationSpeed {
  double with_cache = 0, without_cache = 0;  // tokens a second, batch of one: medians over the rounds
  double ratio() const { return with_cache / without_cache; }
};

// `tokens` tokens generated after the one-token prompt `start` (never stopping early), `rounds`
// counted rounds after one warm-up. The model must be in eval mode. std::invalid_argument naming
// generation_speed for no tokens or rounds below 1.
GenerationSpeed generation_speed(nn::CausalLM<float>& model, Index start, std::size_t tokens, int rounds);

// Tokens a second of each model writing with the cache, as generation_speed does, the models timed
// in turn within every round (interleaved_medians): a fair comparison of models on a loaded
// machine. Each must be in eval mode. std::invalid_argument naming cached_generation_speeds for no
// models, no tokens or rounds below 1.
std::vector<double> cached_generation_speeds(const std::vector<nn::CausalLM<float>*>& models, Index start,
                                             std::size_t tokens, int rounds);

// What the next token costs after n tokens, for each n in `sizes`: curves[0] runs the first n + 1
// ids of `prefix` through the model again (no cache), curves[1] runs the (n + 1)-th alone through
// a cache holding the n before it (the cache is filled and restored outside the time measured).
// Both return the logits of the same position; they are timed by costs_against_n, `rounds`
// counted rounds at each n. The peak memory of each is what its call needs beyond what was held
// when it began (for the cached way, beyond the cache it reads: kv_cache_bytes_held says what
// that holds); before each call, outside the time, the model passes one token through a scratch
// cache, so that no call frees a previous pass's attention weights inside its own measurement. The model must be in eval mode. std::invalid_argument naming
// next_token_costs for no sizes, rounds below 1, or a size of 0 or one whose n + 1 ids are more than the
// prefix holds or the model reads (max_length).
std::vector<CostCurve> next_token_costs(nn::CausalLM<float>& model, const std::vector<Index>& prefix,
                                        const std::vector<std::size_t>& sizes, int rounds);

// The bytes the allocator counts for the KV cache after each n in `sizes`: the first n ids of
// `prefix` go through the model into a cache, and a copy of it is counted (every layer's keys
// and values, and the cache's own container), measured, not computed from shapes. 0 at every n
// when the allocator does not count (core/runtime/allocator.hpp). The errors of next_token_costs,
// naming kv_cache_bytes_held.
std::vector<double> kv_cache_bytes_held(nn::CausalLM<float>& model, const std::vector<Index>& prefix,
                                        const std::vector<std::size_t>& sizes);

// Lesson 12's cost of the next token, two log-log panels against n: the CPU time of both ways
// (curves from next_token_costs) with a dashed line through the last point of the first growing
// like n; and the memory in KiB, on linear axes: the whole prefix again (its call's peak), through the cache (the cache
// held, `held` from kv_cache_bytes_held at the same sizes, plus its call's peak), and the cache
// alone, with a dashed line through its last point growing like n. PlotError naming
// next_token_figure unless there are two curves measured at the sizes of `held`.
plots::Figure next_token_figure(const std::vector<CostCurve>& cost, const std::vector<double>& held,
                                const std::string& title);

// The same two ways at one n, counted instead of timed: the floating-point operations of their
// matrix products (core/runtime/flops: 2 m n k each), the same on every run and machine. The
// errors of next_token_costs, naming next_token_flops.
struct NextTokenFlops {
  double without_cache = 0, with_cache = 0;
};
NextTokenFlops next_token_flops(nn::CausalLM<float>& model, const std::vector<Index>& prefix, std::size_t n);

}  // namespace attnlab::lessons
