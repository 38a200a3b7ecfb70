// Training a causal language model on a stream of text: every step reads `batch` windows of
// `context` tokens at random places in the stream (nn/data/char_corpus: random_windows) and is
// trained on the mean next-token cross-entropy over every position of every window; between
// `evaluations` equal stretches of steps the held-out `monitor` sequences are scored, in nats and
// in bits per token. The loop, the optimizer, the schedule and --from are the kit's one train()
// (lessons/kit/train.hpp): the recipe says how.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "lessons/kit/step_profile.hpp"
#include "lessons/kit/train.hpp"
#include "plots/plots.hpp"
#include "nn/transformer/causal_lm.hpp"

namespace attnlab::lessons {

struct WindowPlan {
  std::size_t context = 64, batch = 64;  // tokens a window, windows a step
  long steps = 1000;                     // a multiple of evaluations
  int evaluations = 8;                   // held-out points, one after each stretch of steps
  std::uint64_t window_seed = 1;         // the windows' draws
  std::size_t tokens_per_step() const { return context * batch; }
};

// The history of train() with validation scores "loss" (nats per token) and "bpc" (bits per
// token) of `monitor` (each read as <bos> s <eos>) at each point. recipe.epochs, recipe.batch and
// recipe.validate are set from the plan. std::invalid_argument naming train_on_windows for steps
// not a positive multiple of evaluations, an empty monitor, or a stream no longer than a window.
History train_on_windows(nn::CausalLM<float>& model, const std::vector<Index>& stream,
                         const std::vector<std::vector<Index>>& monitor, const WindowPlan& plan, Recipe recipe);

// The millions of tokens read by each validation point of a plan: its x axis.
std::vector<double> millions_read(const WindowPlan& plan);

// Where a step of train_on_windows spends its time: `steps` forward and backward passes of a
// throwaway model of `config` (drawn from Generator(init_seed)) on the plan's windows (drawn from
// Generator(plan.window_seed)) under the op profiler (profile_steps, whose error it raises).
StepProfile profile_window_steps(const nn::CausalLMConfig& config, const std::vector<Index>& stream,
                                 const WindowPlan& plan, std::uint64_t init_seed, int steps);

// The curves of a run of train_on_windows in bits a token, against millions of tokens read:
// "<name>, validation", the held-out "bpc" at each point; "<name>, training windows", the training
// loss (nats, the mean of each of about 40 windows of steps) in bits; then each level as a flat
// dashed line across the run in its color ("#rrggbb"): a counted model's held-out bits, say. For
// line_figure. std::invalid_argument naming bits_curves for a history without "bpc" points or with
// more of them than the plan's evaluations, or without a step.
struct BitsLevel {
  std::string name;
  double bits = 0;
  std::string color;
};
std::vector<plots::Series> bits_curves(const std::string& name, const History& history, const WindowPlan& plan,
                                       const std::vector<BitsLevel>& levels);

}  // namespace attnlab::lessons
