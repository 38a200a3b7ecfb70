// inspect gpt "The meaning of life" [--temperature T] [--top-k K] [--length N] [--seed S]
//
// Lesson 11's GPT continues the prompt one sampled character at a time (nn/lm/sample: the
// logits divided by T, only the K likeliest characters kept), and the text it then reads, the
// prompt and its continuation, goes through the model once more to draw every head of every
// layer (heads_layer_N.png) and to fill the explorer.
#include <iostream>

#include "inspect/inspect.hpp"
#include "io/program.hpp"
#include "lessons/kit/causal_lm_explorer.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/transformer_card.hpp"
#include "lessons/story/text.hpp"
#include "nn/lm/sample.hpp"

namespace attnlab::inspect {
namespace {

using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

int run_gpt(const Request& a) {
  if (a.inputs.size() != 1) throw UsageError("gpt takes one prompt (quote it), got " + std::to_string(a.inputs.size()));
  const LoadedGpt m = load_checkpoint_of("11_gpt", "gpt", [&] { return load_gpt(a.from, "gpt"); });
  const std::vector<std::string> typed = typed_characters(a.inputs[0]);
  refuse_unknown(typed, m.vocab, m.card.lesson);
  nn::lm::SampleOptions o;
  o.temperature = real_option(a, "--temperature", 0.8, 0.01, 100.0);
  o.top_k = std::size_t(integer_option(a, "--top-k", 0, 0, (long long)m.vocab.size()));
  o.max_tokens = std::size_t(integer_option(a, "--length", 60, 1, 2000));
  Generator gen(std::uint64_t(integer_option(a, "--seed", 1, 0, 1LL << 62)));

  // <bos> first, as every training window of an entry began.
  std::vector<Index> ids = {data::Vocab::bos};
  for (Index id : m.vocab.encode(typed)) ids.push_back(id);
  const std::size_t prompt_length = ids.size();
  const std::vector<Index> more = nn::lm::sample(*m.model, ids, data::Vocab::eos, o, gen);
  const bool ended = !more.empty() && more.back() == data::Vocab::eos;
  ids.insert(ids.end(), more.begin(), more.end() - (ended ? 1 : 0));
  std::string continuation;
  for (std::size_t i = prompt_length; i < ids.size(); ++i) continuation += m.vocab.token(ids[i]);
  std::cout << a.inputs[0] << "[" << continuation << "]\n"
            << "  (the continuation in brackets: temperature " << o.temperature << ", top-k "
            << (o.top_k ? std::to_string(o.top_k) : "off") << ", "
            << (ended ? "ended at the model's <eos>" : "stopped after " + std::to_string(more.size()) + " characters")
            << "; the model of " << m.card.lesson << ", seed " << m.card.seed << ")\n";

  // The model reads at most its context: the attention shown is over the last `context` characters.
  const std::size_t context = m.model->config().max_length;
  const std::vector<Index> window(ids.end() - long(std::min(ids.size(), context)), ids.end());
  const std::string shown =
      window.size() < ids.size() ? text("the last ", context, " characters") : "prompt and continuation";
  const AttentionInput in =
      causal_lm_attention_input(*m.model, m.vocab, window, text("\"", a.inputs[0], "\" + its continuation"));
  ExplorerPage page;
  page.title = "Lesson 11's GPT on your prompt";
  page.query_side = "characters (queries)", page.key_side = "characters (keys)";
  page.note = text("The GPT of ", m.card.lesson, " (seed ", m.card.seed, ", from ", a.from, ") reading your prompt \"",
                   a.inputs[0], "\" and what it wrote after it (", shown, "). Each character reads only itself and the "
                   "characters before it: choose a layer and a head, hover a character to read its weights, click it to see its "
                   "scores term by term in the neuron view.");
  page.inputs.push_back(in);
  // The figures: the characters around where the prompt ends, the first it wrote reading the prompt.
  const std::size_t skipped = ids.size() - window.size();  // <bos> is character 0
  write_outputs(a.out, head_figures(in, prompt_length > skipped ? prompt_length - skipped : 0, skipped,
                                    "Lesson 11's GPT on your prompt"),
                page);
  return 0;
}

}  // namespace

InspectModel gpt_model() {
  return {"gpt",
          "  gpt          lesson 11's character-level GPT (trained on the fortunes corpus); INPUT a prompt\n"
          "               (\"The meaning of life\"), continued one sampled character at a time. Its options:\n"
          "    --temperature T  the logits divided by T before the softmax (default 0.8; < 1 safer, > 1 wilder)\n"
          "    --top-k K        draw only among the K likeliest characters (default 0: all of them)\n"
          "    --length N       at most N characters written (default 60; the model may end sooner)\n"
          "    --seed S         the draws' random seed (default 1: the same prompt gives the same text)\n"
          "               A character the model never saw is an error naming it. Writes heads_layer_N.png\n"
          "               (every head of layer N over prompt and continuation) and explorer.html.\n"
          "               Reference checkpoint: lessons/checkpoints/11_gpt (--from out/11_gpt)\n",
          "lessons/checkpoints/11_gpt",
          {"--temperature", "--top-k", "--length", "--seed"},
          run_gpt};
}

}  // namespace attnlab::inspect
