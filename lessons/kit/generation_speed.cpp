#include "lessons/kit/generation_speed.hpp"

#include <stdexcept>
#include <string>

#include "lessons/kit/timing.hpp"
#include "nn/lm/sample.hpp"

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

}  // namespace attnlab::lessons
