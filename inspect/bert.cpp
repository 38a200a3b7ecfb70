// inspect bert "To be or n_t to be"
//
// Lesson 14's BERT reads the text with every _ replaced by [MASK] and, for each masked character,
// gives its probability of every character the model knows: the five likeliest are printed, the
// likeliest fills the text. Reading both sides at once, every head of every layer is drawn over
// the masked text (heads_layer_N.png) and goes into the explorer.
#include <cmath>
#include <iostream>

#include <xtensor/xadapt.hpp>

#include "core/ops.hpp"
#include "inspect/inspect.hpp"
#include "io/program.hpp"
#include "lessons/kit/bert.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/self_attention_input.hpp"
#include "lessons/kit/transformer_card.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::inspect {
namespace {

using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

const std::string kMask = "_";  // one masked character; a literal underscore cannot be asked for
constexpr std::size_t kGuesses = 5;

int run_bert(const Request& a) {
  if (a.inputs.size() != 1) throw UsageError("bert takes one text (quote it), got " + std::to_string(a.inputs.size()));
  const LoadedBert m = load_checkpoint_of("14_bert", "bert", [&] { return load_bert(a.from, "bert_mlm"); });
  const std::vector<std::string> typed = typed_characters(a.inputs[0]);
  std::vector<std::string> unmasked;
  for (const std::string& c : typed)
    if (c != kMask) unmasked.push_back(c);
  if (unmasked.size() == typed.size())
    throw UsageError("no masked character in \"" + a.inputs[0] + "\": write _ for each character to fill in");
  refuse_unknown(unmasked, m.vocab, m.card.lesson);
  // [CLS] text <eos>, as the lesson's windows of an entry are, within the model's longest window.
  const std::size_t context = m.model->model.config().max_length;
  if (typed.size() + 2 > context)
    throw UsageError(text("the text has ", typed.size(), " characters; the model reads at most ", context - 2));
  std::vector<Index> ids = {m.ids.cls}, where;
  for (const std::string& c : typed) {
    if (c == kMask) where.push_back(Index(ids.size()));
    ids.push_back(c == kMask ? m.ids.mask : m.vocab.id(c));
  }
  ids.push_back(data::Vocab::eos);

  NoGrad no_grad;
  m.model->model.encoder.keep_score_parts(true);  // the queries and keys too, for the neuron view
  const Array<float> logp = log_softmax(m.model->forward(xt::adapt(ids, {std::size_t(1), ids.size()}), std::nullopt,
                                                         xt::adapt(where, {where.size()})),
                                        -1)
                                .value();
  std::string filled;
  std::vector<std::string> lines;
  for (std::size_t k = 0, next = 0; k < typed.size(); ++k) {
    if (typed[k] != kMask) {
      filled += typed[k];
      continue;
    }
    // Only ordinary characters are guesses ([MASK], [CLS] and the specials are never the answer),
    // ranked as lesson 14 ranks them.
    const std::vector<Index> order = bert::likeliest(logp, next, m.ids, kGuesses);
    std::string line = text("  _ ", next + 1, " (character ", k + 1, "):");
    for (std::size_t g = 0; g < kGuesses; ++g) {  // each as the figures show it: a space ␣, a newline ↵, a tab ⇥
      const double p = std::exp(double(logp(next, std::size_t(order[g]))));
      line += text("  '", visible(m.vocab.token(order[g])), "' ", fixed(p, 3));
    }
    lines.push_back(line);
    filled += m.vocab.token(order[0]);
    ++next;
  }
  std::cout << "\"" << a.inputs[0] << "\" -> \"" << filled << "\"\n"
            << "  each masked character's " << kGuesses << " likeliest characters and their probabilities (the model of "
            << m.card.lesson << ", seed " << m.card.seed << "):\n";
  for (const std::string& l : lines) std::cout << l << "\n";

  std::vector<std::string> labels;
  for (Index id : ids) labels.push_back(bert::shown(m.vocab, id));
  const AttentionInput in = with_score_parts(
      self_attention_input(text("\"", a.inputs[0], "\""), labels, m.model->model.attention_weights()),
      m.model->model.encoder.score_parts());
  ExplorerPage page;
  page.title = "Lesson 14's BERT on your text";
  page.query_side = "characters (queries)", page.key_side = "characters (keys)";
  page.note = text("The BERT of ", m.card.lesson, " (seed ", m.card.seed, ", from ", a.from, ") reading \"", a.inputs[0],
                   "\" with each _ as [MASK] (shown \u25ae), between [CLS] and the end of the entry; its guesses: \"",
                   filled, "\". Every character reads both sides: choose a layer and a head, hover a character to read "
                   "its weights, click it to see its scores term by term in the neuron view.");
  page.inputs.push_back(in);
  // The figures: the characters around the first mask.
  write_outputs(a.out, head_figures(in, std::size_t(where[0]), 0, "Lesson 14's BERT on your text"), page);
  return 0;
}

}  // namespace

InspectModel bert_model() {
  return {"bert",
          "  bert         lesson 14's character-level BERT (pretrained on the fortunes corpus by filling in\n"
          "               masked characters); INPUT a text with _ for each character to fill in, one _ per\n"
          "               character: \"To be or n_t to be\", \"wh__ is it\". Prints each _'s five likeliest\n"
          "               characters with their probabilities and the text filled with the likeliest.\n"
          "               A character the model never saw is an error naming it; _ is always a mask.\n"
          "               Writes heads_layer_N.png and explorer.html.\n"
          "               Reference checkpoint: lessons/checkpoints/14_bert (--from out/14_bert)\n",
          "lessons/checkpoints/14_bert",
          {},
          run_bert};
}

}  // namespace attnlab::inspect
