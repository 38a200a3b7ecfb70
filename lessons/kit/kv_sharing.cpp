#include "lessons/kit/kv_sharing.hpp"

#include <stdexcept>
#include <string>

#include "lessons/kit/generation_speed.hpp"
#include "nn/data/vocab.hpp"
#include "nn/lm/score.hpp"

namespace attnlab::lessons {

namespace {
void check_probe(const char* function, const std::vector<Index>& probe, const nn::CausalLMConfig& config) {
  if (probe.empty() || probe.size() > config.max_length)
    throw std::invalid_argument(std::string(function) + ": the probe holds " + std::to_string(probe.size()) +
                                " ids, not 1 .. max_length " + std::to_string(config.max_length));
}
}  // namespace

KvSharingRun train_kv_sharing(nn::CausalLMConfig config, std::size_t kv_heads, std::uint64_t init_seed,
                              const std::vector<Index>& stream, const std::vector<std::vector<Index>>& held_out,
                              WindowPlan plan, const Recipe& recipe, const std::vector<Index>& probe, int speed_rounds) {
  check_probe("train_kv_sharing", probe, config);
  config.layer.kv_heads = kv_heads;
  Generator gen(init_seed);
  KvSharingRun run;
  run.model = std::make_unique<nn::CausalLM<float>>(config, gen);
  nn::CausalLM<float>& gpt = *run.model;
  KvSharing& out = run.measured;
  out.kv_heads = kv_heads, out.parameters = gpt.parameter_count();
  plan.evaluations = 1;
  run.history = train_on_windows(gpt, stream, held_out, plan, recipe);
  out.validation_bpc = run.history.validation_of("bpc").back();
  gpt.eval();
  nn::CausalLMCache<float> cache;
  {
    NoGrad no_grad;
    for (Index id : probe) gpt.forward_cached(nn::lm::as_row({id}), cache);
  }
  out.bytes_per_token = double(cache.bytes()) / double(cache.length());
  out.tokens_per_second = generation_speed(gpt, nn::data::Vocab::bos, config.max_length - 1, speed_rounds).with_cache;
  return run;
}

KvSharing measure_kv_sharing(nn::CausalLMConfig config, std::size_t kv_heads, std::uint64_t init_seed,
                             const std::vector<Index>& stream, const std::vector<std::vector<Index>>& held_out,
                             WindowPlan plan, const Recipe& recipe, const std::vector<Index>& probe, int speed_rounds) {
  check_probe("measure_kv_sharing", probe, config);
  return train_kv_sharing(config, kv_heads, init_seed, stream, held_out, plan, recipe, probe, speed_rounds).measured;
}

}  // namespace attnlab::lessons
