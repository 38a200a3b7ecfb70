#include "lessons/kit/translators.hpp"

#include <stdexcept>

#include "core/ops.hpp"
#include "lessons/story/text.hpp"
#include "nn/translation_scores.hpp"

namespace attnlab::lessons {

namespace data = nn::data;

namespace {

template <class Model>
Translator translated(const std::string& name, const std::string& key, Model& model, const History& history,
                      const data::TranslationTask& task) {
  return {name, key, model.parameter_count(), &history, nn::translate(model, task.test),
          nn::translate(model, task.longer_ids)};
}

}  // namespace

Translator translator(const std::string& name, const std::string& key, nn::Seq2SeqTransformer<float>& model,
                      const History& history, const data::TranslationTask& task) {
  return translated(name, key, model, history, task);
}

Translator translator(const std::string& name, const std::string& key, nn::rnn::Seq2Seq& model,
                      const History& history, const data::TranslationTask& task) {
  return translated(name, key, model, history, task);
}

History train_translation(nn::Seq2SeqTransformer<float>& model, const data::EncodedSplits& task, Recipe recipe,
                          double smoothing) {
  for (const auto& [name, split] : {std::pair{"training", &task.train}, std::pair{"validation", &task.validation}})
    if (split->size() == 0)
      throw std::invalid_argument("train_translation '" + recipe.label + "': the " + std::string(name) + " split is empty");
  if (!(smoothing >= 0.0 && smoothing < 1.0))
    throw std::invalid_argument("train_translation '" + recipe.label + "': label smoothing must be in [0, 1), got " +
                                std::to_string(smoothing));
  recipe.validate = [&model, &task, smoothing, more = recipe.validate] {
    const nn::TokenScores s = nn::teacher_forced_scores(model, task.validation, smoothing);
    Scores scores{{"loss", s.loss}, {"nll", s.nll}};
    if (more)
      for (auto& score : more()) scores.push_back(std::move(score));
    return scores;
  };
  CrossEntropyOptions ce;
  ce.ignore_index = data::Vocab::pad, ce.label_smoothing = smoothing;
  return train(model, task.train.size(), [&](const std::vector<std::size_t>& rows) {
    const data::Seq2SeqBatch b = data::make_seq2seq_batch(task.train, rows, /*source_eos=*/false);
    return cross_entropy(model.forward(b.source.ids, b.decoder_input.ids, b.source.allowed(), b.decoder_input.allowed()),
                         b.decoder_target.ids, ce);
  }, recipe);
}

plots::Series bleu_by_length(const Translator& t, const data::TranslationTask& task, std::size_t longest_group) {
  std::vector<double> x, y;
  for (const auto& [hyps, split] : {std::pair{&t.test, &task.test}, std::pair{&t.longer, &task.longer_ids}})
    for (const nn::GroupBleu& g : nn::score_by_length(*hyps, *split, longest_group).by_length)
      x.push_back(double(g.group)), y.push_back(g.bleu.score);
  return curve(t.name, x, y);
}

void save_bleu_by_length(std::vector<plots::Series> series, double boundary, LineFigureOptions style,
                         const std::string& stem, const std::string& caption) {
  series.push_back(reference("longest training sentence", {boundary, boundary}, {0.0, 1.0}));
  style.markers = true, style.ymin = 0.0, style.ymax = 1.0;
  save_figure(line_figure(series, style), stem, caption);
}

std::string compared_translations(const data::TranslationPair& pair,
                                  const std::vector<std::pair<std::string, std::string>>& outputs) {
  auto line = [](const std::string& label, const std::string& words) {
    return label + std::string(label.size() < 11 ? 11 - label.size() : 1, ' ') + words;
  };
  std::string out = line("source", pair.source) + "\n" + line("reference", pair.target) + "\n";
  for (const auto& [label, words] : outputs) out += line(label, words) + (words == pair.target ? "   (right)" : "") + "\n";
  return out;
}

std::vector<std::vector<std::string>> beam_sweep_rows(const std::vector<SweptSplit>& swept, std::size_t widest,
                                                      const std::vector<double>& alphas) {
  std::vector<std::vector<std::string>> rows(1, {"greedy"});
  for (const SweptSplit& s : swept)
    for (std::size_t a = 0; a < alphas.size(); ++a) rows[0].push_back(fixed(nn::bleu_of(s.sweep->greedy, *s.split), 4));
  for (std::size_t w = 1; w <= widest; ++w) {
    std::vector<std::string> r = {text("beam ", w)};
    for (const SweptSplit& s : swept)
      for (double a : alphas) r.push_back(fixed(nn::bleu_of(s.sweep->at(w, a), *s.split), 4));
    rows.push_back(r);
  }
  return rows;
}

void save_beam_sweep_figures(const std::vector<SweptSplit>& swept, std::size_t widest, const std::vector<double>& alphas,
                             const std::string& bleu_caption, const std::string& length_caption) {
  std::vector<double> widths;
  for (std::size_t w = 1; w <= widest; ++w) widths.push_back(double(w));
  std::vector<plots::Series> bleus, lengths, references;
  for (const SweptSplit& s : swept) {
    for (double a : alphas) {
      std::vector<double> b, l;
      for (std::size_t w = 1; w <= widest; ++w)
        b.push_back(nn::bleu_of(s.sweep->at(w, a), *s.split)), l.push_back(nn::mean_words(s.sweep->at(w, a)));
      bleus.push_back(curve(text(s.name, ", alpha ", int(a)), widths, b));
      lengths.push_back(curve(text(s.name, ", alpha ", int(a)), widths, l));
    }
    const std::vector<double> mean(widths.size(), nn::mean_words(s.split->target));
    if (references.empty()) {
      references.push_back(reference("references, " + s.name, widths, mean));
    } else {
      references.push_back(curve("references, " + s.name, widths, mean));
      references.back().dashed = true;
      references.back().color = plots::Color{0.0, 0.0, 0.0};
    }
  }
  lengths.insert(lengths.end(), references.begin(), references.end());
  LineFigureOptions bs{"Beam search: BLEU by beam width", "beam width", "corpus BLEU"};
  bs.markers = true, bs.ymin = 0.0, bs.ymax = 1.0;
  save_figure(line_figure(bleus, bs), "beam_width", bleu_caption);
  LineFigureOptions ls{"Beam search: mean output length by beam width", "beam width", "words"};
  ls.markers = true;
  save_figure(line_figure(lengths, ls), "beam_length", length_caption);
}

}  // namespace attnlab::lessons
