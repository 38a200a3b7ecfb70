// inspect: a trained lesson model on your own input.
//
//   inspect dates "3rd of March, 1997" "12/25/68"
//
// loads lesson 02's date model (the reference checkpoint kept in lessons/checkpoints/, or the
// run given with --from), decodes each input greedily, prints the ISO date it writes and, for every
// output character, the input characters it read most; then writes into the output folder a
// heatmap of each input's attention (attention_N.png) and the attention explorer (explorer.html)
// for all of them. Nothing is written unless every input was read and decoded.
#include <algorithm>
#include <iostream>

#include "io/files.hpp"
#include "io/program.hpp"
#include "lessons/kit/explorer.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/seq2seq.hpp"
#include "lessons/story/text.hpp"
#include "nn/data/batch.hpp"
#include "nn/data/vocab.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

const std::string kDefaultFrom = std::string(ATTNLAB_SOURCE_DIR) + "/lessons/checkpoints/02_additive_attention";

const std::string kUsage =
    "usage: inspect MODEL INPUT... [--from DIR] [--out DIR] [--help] [--version]\n"
    "  MODEL        dates   lesson 02's date normalizer (a GRU encoder-decoder with additive attention);\n"
    "                       each INPUT a date as a person writes it: \"3rd of March, 1997\", \"12/25/68\"\n"
    "  --from DIR   a run of the lesson whose model to use (its dates.npz and dates.json), e.g.\n"
    "               out/02_additive_attention; default: the reference checkpoint in\n"
    "               lessons/checkpoints/02_additive_attention (lesson 02's full run, seed 1)\n"
    "  --out DIR    where the figures and explorer.html go (default out/inspect/dates)\n"
    "  Prints each input's output and what each output character reads; writes attention_N.png\n"
    "  (one per input) and explorer.html (every input, to hover and click through).\n";

struct Args {
  std::string model, from = kDefaultFrom, out = "out/inspect/dates";
  std::vector<std::string> inputs;
};

Args parse(const std::vector<std::string>& args) {
  Args a;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& s = args[i];
    if (s == "--from" || s == "--out") {
      if (i + 1 >= args.size() || args[i + 1].empty()) throw UsageError(s + " needs a folder name");
      (s == "--from" ? a.from : a.out) = args[++i];
    } else if (s.rfind("--", 0) == 0) {
      throw UsageError("unknown option '" + s + "'");
    } else if (a.model.empty()) {
      a.model = s;
    } else {
      a.inputs.push_back(s);
    }
  }
  if (a.model.empty()) throw UsageError("no model named");
  if (a.model != "dates") throw UsageError("unknown model '" + a.model + "' (the models: dates)");
  if (a.inputs.empty()) throw UsageError("no input given for " + a.model);
  for (const std::string& in : a.inputs)
    if (in.find_first_not_of(" \t") == std::string::npos) throw UsageError("an input is empty");
  return a;
}

// The characters a person typed: one token per UTF-8 character ("é" is one, not two bytes), so
// that a character the model never saw is one <unk> and is shown as itself.
std::vector<std::string> typed_characters(const std::string& text) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
    n = std::min(n, text.size() - i);
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

// The characters of `text` the model never saw in training, each once, in order.
std::vector<std::string> unknown_characters(const std::vector<std::string>& chars, const data::Vocab& v) {
  std::vector<std::string> out;
  for (const std::string& c : chars)
    if (!v.contains(c) && std::find(out.begin(), out.end(), c) == out.end()) out.push_back("'" + c + "'");
  return out;
}

int run(const std::vector<std::string>& argv) {
  const Args a = parse(argv);
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

int main(int argc, char** argv) { return run_program("inspect", kUsage, argc, argv, run); }
