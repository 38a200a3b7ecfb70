// inspect dates "3rd of March, 1997" "12/25/68"
//
// Lesson 02's date model (a GRU encoder-decoder with additive attention) decodes each input
// greedily; for every output character, the input character it read most is printed; each input's
// attention is drawn as a heatmap (attention_N.png) and all of them go into explorer.html.
#include <iostream>

#include "inspect/inspect.hpp"
#include "lessons/kit/explorer.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::inspect {
namespace {

using namespace attnlab::lessons;

int run_dates(const Request& a) {
  const LoadedSeq2Seq m =
      load_checkpoint_of("02_additive_attention", "dates", [&] { return load_seq2seq(a.from, "dates"); });
  // Decode every input first; write only when all went through.
  const std::vector<DateReading> dates = read_dates(m, a.inputs);
  ExplorerPage page;
  page.title = "Lesson 02's date model on your input";
  page.query_side = "output characters", page.key_side = "input characters";
  page.note = "The model of " + m.lesson + " (seed " + std::to_string(m.seed) + ", from " + a.from +
              "). Each output character (right) draws lines to the input characters (left) it reads; hover one to "
              "read its weights.";
  std::vector<std::pair<std::string, plots::Figure>> figures;
  for (const DateReading& r : dates) {
    const std::string name = "\"" + r.input + "\" -> " + r.output;
    std::cout << name << "\n";
    if (!r.unknown.empty()) std::cout << "  not in the model's vocabulary, read as <unk>: " << listing(r.unknown) << "\n";
    for (std::size_t t = 0; t < r.queries.size(); ++t) {
      const std::size_t best = most_read(r, t);
      std::cout << "  writes " << r.queries[t] << "  reading " << r.keys[best] << " (" << percent(r.attention(t, best))
                << ")\n";
    }
    page.inputs.push_back({name, r.queries, r.keys, {"cross-attention"}, {{r.attention}}});
    figures.emplace_back("attention_" + std::to_string(figures.size() + 1),
                         date_figure({{r.attention, r.keys, r.queries, ""}}, name));
  }
  write_outputs(a.out, figures, page);
  return 0;
}

}  // namespace

InspectModel dates_model() {
  return {"dates",
          "  dates        lesson 02's date normalizer (a GRU encoder-decoder with additive attention);\n"
          "               each INPUT a date as a person writes it: \"3rd of March, 1997\", \"12/25/68\".\n"
          "               Prints each input's ISO date and what each output character reads; writes\n"
          "               attention_N.png (one per input) and explorer.html. Reference checkpoint:\n"
          "               lessons/checkpoints/02_additive_attention (--from out/02_additive_attention)\n",
          "lessons/checkpoints/02_additive_attention",
          {},
          run_dates};
}

}  // namespace attnlab::inspect
