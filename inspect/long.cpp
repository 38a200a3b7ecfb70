// inspect long --method rope "the big red dog that the old fox sees chases two small cats"
//
// Lesson 09's Transformers: lesson 08's translation Transformer trained again with its positions
// given as distances (T5's relative bias, RoPE, ALiBi) beside the sinusoidal one, to translate
// sentences longer than any it trained on. --method chooses which of the four translates; the rest
// is inspect translate's (inspect/translate.cpp): greedy decoding (or --beam K), the source word each
// target word reads most, the cross-attention figures and explorer.html. Typing a sentence of more
// than 10 words shows what the lesson measures: where each method's decoder looks past the training lengths.
#include <map>

#include "inspect/inspect.hpp"
#include "io/program.hpp"

namespace attnlab::inspect {
namespace {

// --method as typed -> the positions and the card's stem (lessons/09_long_sentences.cpp writes
// transformer_<positions>.json and .npz). "t5" is the lesson's name for the relative bias.
const std::map<std::string, std::pair<nn::Positional, std::string>> kMethods = {
    {"sinusoidal", {nn::Positional::Sinusoidal, "transformer_sinusoidal"}},
    {"t5", {nn::Positional::RelativeBias, "transformer_relative"}},
    {"relative", {nn::Positional::RelativeBias, "transformer_relative"}},
    {"rope", {nn::Positional::Rotary, "transformer_rope"}},
    {"alibi", {nn::Positional::ALiBi, "transformer_alibi"}}};

int run_long(const Request& r) {
  const auto given = r.options.find("--method");
  if (given == r.options.end()) throw UsageError("long needs --method: sinusoidal, t5 (or relative), rope or alibi");
  const auto method = kMethods.find(given->second);
  if (method == kMethods.end())
    throw UsageError("--method needs sinusoidal, t5 (or relative), rope or alibi, got '" + given->second + "'");
  const auto& [positions, stem] = method->second;
  return run_translation(r, {"09_long_sentences", "long", stem,
                             "Transformer with " + nn::positional_name(positions) + " positions", positions});
}

}  // namespace

InspectModel long_model() {
  return {"long",
          "  long         lesson 09's Transformers: lesson 08's translation with positions as distances, for\n"
          "               sentences longer than any trained on (10 words); INPUT as for translate.\n"
          "    --method M       which one translates (required): sinusoidal, t5 (or relative: T5's bias), rope\n"
          "                     or alibi. Prints and writes what translate does (--beam and --alpha too).\n"
          "               Reference checkpoints: lessons/checkpoints/09_long_sentences\n"
          "               (--from out/09_long_sentences)\n",
          "lessons/checkpoints/09_long_sentences",
          {"--method", "--beam", "--alpha"},
          run_long};
}

}  // namespace attnlab::inspect
