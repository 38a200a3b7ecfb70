// inspect dates "3rd of March, 1997" "12/25/68"
//
// Lesson 02's date model (a GRU encoder-decoder with additive attention) decodes each input
// greedily; for every output character, the input character it read most is printed; each input's
// attention is drawn as a heatmap (attention_N.png) and all of them go into explorer.html.
#include <iostream>

#include "inspect/inspect.hpp"
#include "io/files.hpp"
#include "lessons/kit/explorer.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/seq2seq.hpp"
#include "lessons/story/text.hpp"
#include "nn/data/batch.hpp"

namespace attnlab::inspect {
namespace {

using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

int run_dates(const Request& a) {
  LoadedSeq2Seq m;
  try {
    m = load_seq2seq(a.from, "dates");
  } catch (const std::exception& e) {
    throw std::runtime_error(std::string(e.what()) + " (a run of lesson 02 writes both: build/bin/02_additive_attention"
                             " --out DIR, then inspect dates ... --from DIR)");
  }
  // Decode every input first; write only when all went through.
  data::EncodedPairs pairs;
  for (const std::string& in : a.inputs) {
    pairs.source.push_back(m.source.encode(typed_characters(in)));
    pairs.target.push_back({});
  }
  const data::PaddedBatch src = data::make_seq2seq_batch(pairs, data::first_rows(pairs.size())).source;
  const nn::rnn::Decoded d = m.model->greedy(src, 16);

  ExplorerPage page;
  page.title = "Lesson 02's date model on your input";
  page.query_side = "output characters", page.key_side = "input characters";
  page.note = "The model of " + m.lesson + " (seed " + std::to_string(m.seed) + ", from " + a.from +
              "). Each output character (right) draws lines to the input characters (left) it reads; hover one to "
              "read its weights.";
  std::vector<plots::Figure> figures;
  for (std::size_t i = 0; i < a.inputs.size(); ++i) {
    const std::string& in = a.inputs[i];
    const std::string out = m.target.decode(d.ids[i], data::Tokenizer::chars);
    const std::vector<std::string> typed = typed_characters(in), queries = token_labels(d.ids[i], m.target);
    std::vector<std::string> keys = typed;
    for (std::string& k : keys) k = k == " " ? "␣" : k;  // as char_labels shows a space
    keys.push_back("<eos>");
    std::cout << "\"" << in << "\" -> " << out << "\n";
    const std::vector<std::string> unknown = unknown_characters(typed, m.source);
    if (!unknown.empty())
      std::cout << "  not in the model's vocabulary, read as <unk>: " << listing(unknown) << "\n";
    for (std::size_t t = 0; t < queries.size(); ++t) {
      std::size_t best = 0;
      for (std::size_t j = 1; j < keys.size(); ++j) best = d.attention[i](t, j) > d.attention[i](t, best) ? j : best;
      std::cout << "  writes " << queries[t] << "  reading " << keys[best] << " (" << percent(d.attention[i](t, best))
                << ")\n";
    }
    page.inputs.push_back({"\"" + in + "\" -> " + out, queries, keys, {"cross-attention"}, {{d.attention[i]}}});
    AttentionFigureOptions style{"\"" + in + "\" -> " + out, 1, 1400, 900};
    style.keys_label = "input characters (keys)", style.queries_label = "output characters (queries)";
    figures.push_back(attention_figure({{d.attention[i], keys, queries, ""}}, style));
  }
  const std::string html = explorer_html(page);
  const std::string why = make_dirs_or_why(a.out);
  if (!why.empty()) throw std::runtime_error("--out '" + a.out + "': " + why);
  for (std::size_t i = 0; i < figures.size(); ++i) figures[i].save(a.out + "/attention_" + std::to_string(i + 1) + ".png");
  write_file_atomic(a.out + "/explorer.html", html, "inspect");
  std::cout << "Wrote " << figures.size() << " heatmap" << (figures.size() > 1 ? "s" : "") << " and explorer.html to "
            << a.out << "/.\n";
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
