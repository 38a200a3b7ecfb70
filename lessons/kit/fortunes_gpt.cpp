#include "lessons/kit/fortunes_gpt.hpp"

#include <stdexcept>
#include <string>

namespace attnlab::lessons {

nn::data::CharCorpus load_fortunes_corpus(std::size_t train_entries, std::size_t held_out_entries) {
  return nn::data::load_char_corpus({kFortunesHeldOutShare, kFortunesSplitSeed, train_entries, held_out_entries});
}

nn::CausalLMConfig fortunes_gpt_config(std::size_t vocab, const FortunesGptSize& s) {
  const auto refuse = [&](const std::string& why) {
    throw std::invalid_argument("fortunes_gpt_config: " + why + " (vocab " + std::to_string(vocab) + ", d_model " +
                                std::to_string(s.d_model) + ", heads " + std::to_string(s.heads) + ", kv_heads " +
                                std::to_string(s.kv_heads) + ", layers " + std::to_string(s.layers) + ", context " +
                                std::to_string(s.context) + ")");
  };
  if (vocab == 0 || s.layers == 0 || s.heads == 0 || s.context == 0) refuse("needs a vocabulary, layers, heads and a context");
  if (s.d_model % s.heads != 0 || (s.d_model / s.heads) % 2 != 0)
    refuse("d_model must split into heads of even width (rotary positions turn pairs of dimensions)");
  if (s.kv_heads != 0 && s.heads % s.kv_heads != 0) refuse("kv_heads must divide the heads");
  nn::CausalLMConfig c;
  c.vocab = vocab;
  c.num_layers = s.layers;
  c.max_length = s.context;
  c.layer = nn::LayerConfig{s.d_model, s.heads, 4 * s.d_model, 0.0, /*norm_first=*/true, nn::Activation::GELU, 1e-5};
  c.layer.kv_heads = s.kv_heads;
  c.positional = nn::Positional::Rotary;
  c.tie_output = true;
  return c;
}

}  // namespace attnlab::lessons
