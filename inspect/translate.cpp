// inspect translate "the big red dog chases two cats" "my cat sees a bird"
//
// Lesson 08's Transformer translates each sentence into its invented verb-last language with
// greedy decoding (the decoding the lesson's BLEU is measured with), one word at a time until
// <eos>. Then the same decoder reads its own translation teacher-forced, which computes exactly the
// cross-attention it had while writing each word (a target word sees only the words before it),
// and prints, for every word it wrote, the source word it read most (the mean of every head of
// every layer). Writes per sentence every head's cross-attention (cross_attention_N.png), the mean
// of them (cross_attention_mean_N.png), and explorer.html for all sentences. The source is read as
// lower-case words, punctuation dropped; a word the model never saw is refused by name (exit 2):
// its <unk> embedding was never trained, so a translation of it would be a guess, not the model's.
//
// With --beam K each sentence is also translated by beam search of K beams (nn::beam_translate,
// the decoder of the lesson's section 4; --alpha A its length penalty, 1 by default: hypotheses
// ranked by their mean log-probability per token), printed beside the greedy one with its score,
// with the same figures for it (beam_cross_attention_N.png, beam_cross_attention_mean_N.png) and
// its own entry in the explorer. --beam 1 --alpha 0 is greedy decoding again.
#include <algorithm>
#include <cctype>
#include <iostream>

#include <xtensor/xview.hpp>

#include "inspect/inspect.hpp"
#include "io/files.hpp"
#include "io/program.hpp"
#include "lessons/kit/explorer.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/kit/translation_model.hpp"
#include "lessons/story/text.hpp"
#include "nn/data/batch.hpp"
#include "nn/translate.hpp"

namespace attnlab::inspect {
namespace {

using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

// The words of a typed sentence as the task writes them: lower case, letters and digits only.
std::vector<std::string> source_words(const std::string& sentence) {
  std::string clean;
  for (char c : sentence) {
    const unsigned char u = static_cast<unsigned char>(c);
    clean += std::isalnum(u) || u >= 0x80 ? char(std::tolower(u)) : c == '\'' || c == '-' ? c : ' ';
  }
  return data::word_tokens(clean);
}

// UsageError naming every word of `sentences` outside the vocabulary, and the words it knows most often.
void refuse_unknown_words(const std::vector<std::vector<std::string>>& sentences, const data::Vocab& v,
                          const std::string& lesson) {
  std::vector<std::string> unknown;
  for (const auto& words : sentences)
    for (const std::string& w : words)
      if (!v.contains(w) && std::find(unknown.begin(), unknown.end(), "'" + w + "'") == unknown.end())
        unknown.push_back("'" + w + "'");
  if (unknown.empty()) return;
  std::vector<std::string> known;
  for (std::size_t i = data::Vocab::num_specials; i < std::min<std::size_t>(v.size(), data::Vocab::num_specials + 24); ++i)
    known.push_back(v.token(Index(i)));
  throw UsageError("not in " + lesson + "'s source vocabulary: " + listing(unknown) + " (its " +
                   std::to_string(v.size() - data::Vocab::num_specials) + " words, most frequent first: " +
                   listing(known) + ", ...)");
}

// What one translation of a sentence read: prints (when `print`), for every word it wrote, the source
// word the mean of every head of every layer read most, and adds the figures of its cross-attention
// to `figures` (<prefix>cross_attention_<n>.png, every head; <prefix>cross_attention_mean_<n>.png).
void show_translation(const AttentionInput& in, const std::vector<std::string>& keys, std::size_t L, std::size_t H,
                      const std::string& prefix, std::size_t n, const std::string& which, bool print,
                      std::vector<std::pair<std::string, plots::Figure>>& figures) {
  const std::vector<std::string>& queries = in.queries;
  const std::size_t S = keys.size(), T = queries.size();
  xt::xarray<double> all = xt::zeros<double>({L * H, T, S}), mean = xt::zeros<double>({T, S});
  std::vector<std::string> titles;
  for (std::size_t l = 0; l < L; ++l)
    for (std::size_t h = 0; h < H; ++h) {
      xt::view(all, l * H + h) = in.heads[l][h];
      mean += in.heads[l][h] / double(L * H);
      titles.push_back(text("layer ", l + 1, ", head ", h + 1));
    }
  for (std::size_t t = 0; print && t < T; ++t) {
    const std::size_t best = std::size_t(std::max_element(&mean(t, 0), &mean(t, 0) + S) - &mean(t, 0));
    std::cout << "  writes " << queries[t] << "  reading " << keys[best] << " (" << percent(mean(t, best)) << ")\n";
  }
  plots::HeatmapGridOptions g;
  g.heatmap = attention_style(keys, queries);
  g.cols = int(H), g.panel_titles = titles;
  g.title = text("Sentence ", n, which, ": every cross-attention head while the decoder writes each target word");
  g.xlabel = "source words (keys)", g.ylabel = "target words (queries)";
  g.width_px = 2400, g.height_px = int(700 * L + 200);
  figures.push_back({text(prefix, "cross_attention_", n), plots::heatmap_grid(all, g)});
  AttentionFigureOptions style{text("Sentence ", n, which, ": cross-attention, the mean of every head and layer"), 1, 1600, 1000};
  style.keys_label = "source words (keys)", style.queries_label = "target words (queries)";
  style.annotate = true;
  figures.push_back({text(prefix, "cross_attention_mean_", n), attention_figure({{mean, keys, queries, ""}}, style)});
}

}  // namespace

int run_translation(const Request& r, const TranslationModel& t) {
  const std::string lesson = "lesson " + t.lesson.substr(0, 2);
  const long long beam = integer_option(r, "--beam", 0, 1, 16);  // 0: greedy only
  const double alpha = real_option(r, "--alpha", 1.0, 0.0, 2.0);
  if (r.options.count("--alpha") && !beam) throw UsageError("--alpha is the beam's length penalty: give --beam K too");
  const LoadedTransformer m = load_checkpoint_of(t.lesson, t.command, [&] {
    LoadedTransformer loaded = load_transformer(r.from, t.stem);
    // A card of another lesson's run, or of other positions, under this name: not the model asked for.
    const std::string card = "'" + r.from + "/" + t.stem + ".json'";
    if (loaded.lesson != t.lesson)
      throw std::runtime_error(card + " is a model of " + loaded.lesson + ", not of " + t.lesson);
    if (loaded.model->config().positional != t.positions)
      throw std::runtime_error(card + " holds a Transformer with " + nn::positional_name(loaded.model->config().positional) +
                               " positions, not " + nn::positional_name(t.positions));
    return loaded;
  });
  std::vector<std::vector<std::string>> words;
  for (const std::string& in : r.inputs) {
    words.push_back(source_words(in));
    if (words.back().empty()) throw UsageError("'" + in + "' has no words");
  }
  refuse_unknown_words(words, m.source, lesson);
  // Translate every sentence first; write only when all went through.
  data::EncodedPairs split;
  for (const auto& w : words) split.source.push_back(m.source.encode(w)), split.target.push_back({});
  split.target = nn::translate(*m.model, split);
  data::EncodedPairs beamed = split;  // the beam's translations, when asked for
  std::vector<nn::Hypothesis> hypotheses;
  for (std::size_t i = 0; beam && i < split.size(); ++i) {
    hypotheses.push_back(nn::beam_translate(*m.model, split.source[i], std::size_t(beam), alpha));
    beamed.target[i] = hypotheses.back().tokens;
  }
  const std::size_t L = m.model->decoder.size(), H = m.model->config().layer.heads;

  ExplorerPage page;
  page.title = "L" + lesson.substr(1) + "'s " + t.description + " on your sentences";
  page.query_side = "target words", page.key_side = "source words";
  page.note = "The model of " + m.lesson + " (seed " + std::to_string(m.seed) + ", from " + r.from +
              "), greedy decoding" + (beam ? text(" and beam search of ", beam, " beams (alpha ", alpha, ")") : "") +
              ". Each target word (right) draws lines to the source words (left) the decoder's "
              "cross-attention read while it wrote that word; choose the layer and head, hover a word to read its weights.";
  std::vector<std::pair<std::string, plots::Figure>> figures;
  for (std::size_t i = 0; i < split.size(); ++i) {
    const std::vector<std::string>& keys = words[i];
    const AttentionInput in = translated_sentence_input(*m.model, split, i, m.source, m.target);
    std::cout << in.name << "\n";
    if (keys.size() > m.task.max_train_words)
      std::cout << "  (" << keys.size() << " words: longer than any training sentence, " << m.task.max_train_words
                << "; " << lesson << " measures how the model fares there)\n";
    show_translation(in, keys, L, H, "", i + 1, "", true, figures);
    page.inputs.push_back(in);
    if (!beam) continue;
    AttentionInput b = translated_sentence_input(*m.model, beamed, i, m.source, m.target);
    const nn::Hypothesis& h = hypotheses[i];
    const bool same = h.tokens == split.target[i];
    std::cout << "  beam " << beam << " (alpha " << alpha << ") -> " << m.target.decode(h.tokens, data::Tokenizer::words)
              << (same ? "   (the same as greedy)" : "") << "\n  score " << fixed(h.score, 4) << " (log-probability "
              << fixed(h.log_prob, 4) << " over " << h.tokens.size() + 1 << " tokens with <eos>, divided by "
              << h.tokens.size() + 1 << "^alpha)\n";
    show_translation(b, keys, L, H, "beam_", i + 1, text(", beam ", beam), !same, figures);
    b.name = text("beam ", beam, ": ", b.name);
    page.inputs.push_back(b);
  }
  const std::string html = explorer_html(page);
  const std::string why = make_dirs_or_why(r.out);
  if (!why.empty()) throw std::runtime_error("--out '" + r.out + "': " + why);
  for (const auto& [name, fig] : figures) fig.save(r.out + "/" + name + ".png");
  write_file_atomic(r.out + "/explorer.html", html, "inspect");
  std::cout << "Wrote cross_attention_N.png and cross_attention_mean_N.png" << (beam ? " (and beam_ ones)" : "") << " for " << counted(long(split.size()), "sentence")
            << " and explorer.html to " << r.out << "/.\n";
  return 0;
}

namespace {

int run_translate(const Request& r) {
  return run_translation(r, {"08_transformer", "translate", "transformer", "Transformer", nn::Positional::Sinusoidal});
}

}  // namespace

InspectModel translate_model() {
  return {"translate",
          "  translate    lesson 08's Transformer (a toy translation into a verb-last language); each INPUT an\n"
          "               English-like sentence of the lesson's words: \"the big red dog chases two cats\".\n"
          "               Read as lower-case words, punctuation dropped; a word it never saw is an error\n"
          "               naming it. Greedy decoding. Prints the translation and the source word each target\n"
          "               word reads most; writes cross_attention_N.png (every head),\n"
          "               cross_attention_mean_N.png and explorer.html. Reference checkpoint:\n"
          "               lessons/checkpoints/08_transformer (--from out/08_transformer)\n"
          "    --beam K         also beam search of K beams (1 to 16), printed beside greedy with its score;\n"
          "                     writes beam_cross_attention_N.png and beam_cross_attention_mean_N.png too\n"
          "    --alpha A        the beam's length penalty, 0 to 2 (default 1: ranked by the mean log-probability\n"
          "                     per token; --beam 1 --alpha 0 is greedy decoding again)\n",
          "lessons/checkpoints/08_transformer",
          {"--beam", "--alpha"},
          run_translate};
}

}  // namespace attnlab::inspect
