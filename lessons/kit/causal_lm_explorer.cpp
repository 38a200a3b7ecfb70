#include "lessons/kit/causal_lm_explorer.hpp"

#include <stdexcept>

#include "lessons/kit/figures.hpp"
#include "lessons/kit/self_attention_input.hpp"
#include "nn/lm/score.hpp"

namespace attnlab::lessons {

AttentionInput causal_lm_attention_input(nn::CausalLM<float>& model, const nn::data::Vocab& vocab,
                                         const std::vector<Index>& ids, const std::string& name) {
  const std::size_t limit = model.config().max_length;
  if (ids.empty() || ids.size() > limit)
    throw std::invalid_argument("causal_lm_attention_input: needs 1 .. " + std::to_string(limit) + " ids, got " +
                                std::to_string(ids.size()));
  {
    NoGrad no_grad;
    model.blocks.keep_score_parts(true);  // the queries and keys too, for the neuron view
    model.forward(nn::lm::as_row(ids));
  }
  AttentionInput in = with_score_parts(self_attention_input(name, token_labels(ids, vocab), model.attention_weights()),
                                       model.blocks.score_parts());
  model.blocks.keep_score_parts(false);
  return in;
}

}  // namespace attnlab::lessons
