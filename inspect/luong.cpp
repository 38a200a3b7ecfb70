// inspect luong "3rd of March, 1997" "12/25/68"
//
// Lesson 03's four Luong decoders, one per attention score (dot, general, concat and Bahdanau's
// additive), trained by the lesson on lesson 02's dates with one budget, each decode every input
// greedily. Printed per input: what each score's model wrote and, in order, the input character
// each of its output characters read most. Written per input: the four maps side by side
// (alignments_N.png, as the lesson's figure of one test input), and explorer.html with the four
// scores as its four "layers", as the lesson's own explorer: one click apart. An input the four
// decode differently gets one explorer entry per score (an entry's outputs are its queries).
#include <algorithm>
#include <iomanip>
#include <iostream>

#include "inspect/inspect.hpp"
#include "lessons/kit/explorer.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::inspect {
namespace {

using namespace attnlab::lessons;

const std::vector<std::string> kScores = {"dot", "general", "concat", "additive"};  // the lesson's order

// luong_<score>.json and .npz of `folder`: refused unless it is lesson 03's model of that score, from
// the same run as `first` (the four are compared, so they must be one run's).
LoadedSeq2Seq load_score(const std::string& folder, const std::string& score, const LoadedSeq2Seq* first) {
  LoadedSeq2Seq m = load_seq2seq(folder, "luong_" + score);
  const nn::rnn::Seq2SeqConfig& c = m.model->config();
  const std::string card = "'" + folder + "/luong_" + score + ".json'";
  if (c.style != nn::rnn::DecoderStyle::Luong || c.score != score || c.local_window != 0)
    throw std::runtime_error(card + " is not lesson 03's global Luong decoder with the " + score + " score (its card: " +
                             (c.style == nn::rnn::DecoderStyle::Luong ? "luong" : "bahdanau") + ", score " + c.score +
                             (c.local_window ? ", local" : "") + ")");
  if (first && (m.lesson != first->lesson || m.seed != first->seed || m.quick != first->quick))
    throw std::runtime_error(card + " comes from " + m.lesson + " seed " + std::to_string(m.seed) +
                             (m.quick ? " (--quick)" : "") + ", luong_dot.json from " + first->lesson + " seed " +
                             std::to_string(first->seed) + (first->quick ? " (--quick)" : "") +
                             ": the four must be one run's");
  return m;
}

int run_luong(const Request& a) {
  const std::vector<LoadedSeq2Seq> models = load_checkpoint_of("03_luong_attention", "luong", [&] {
    std::vector<LoadedSeq2Seq> four;
    for (const std::string& score : kScores) four.push_back(load_score(a.from, score, four.empty() ? nullptr : &four[0]));
    return four;
  });
  // Decode every input with every model first; write only when all went through.
  std::vector<std::vector<DateReading>> by_score;  // [score][input]
  for (const LoadedSeq2Seq& m : models) by_score.push_back(read_dates(m, a.inputs));

  ExplorerPage page;
  page.title = "Lesson 03's four scores on your input";
  page.query_side = "output characters", page.key_side = "input characters";
  page.note = text("The four models of ", models[0].lesson, " (seed ", models[0].seed, ", from ", a.from, "), one per "
                   "attention score. Where the four write the same date, each score is one layer of the input: switch "
                   "layers to compare where they look; hover an output character (right) to read its weights over the "
                   "input characters (left). Where they differ, each score's reading is an input of its own.");
  std::vector<std::pair<std::string, plots::Figure>> figures;
  std::cout << "each score's output, then the input character each output character reads most, in order (the models of "
            << models[0].lesson << ", seed " << models[0].seed << (models[0].quick ? ", a --quick run" : "") << "):\n";
  for (std::size_t i = 0; i < a.inputs.size(); ++i) {
    std::cout << "\"" << a.inputs[i] << "\"\n";
    if (!by_score[0][i].unknown.empty())
      std::cout << "  not in the models' vocabulary, read as <unk>: " << listing(by_score[0][i].unknown) << "\n";
    std::vector<AttentionMap> maps;
    bool alike = true;
    for (std::size_t s = 0; s < kScores.size(); ++s) {
      const DateReading& r = by_score[s][i];
      std::string reads;
      for (std::size_t t = 0; t < r.queries.size(); ++t) reads += (t ? " " : "") + r.keys[most_read(r, t)];
      std::cout << "  " << std::left << std::setw(9) << kScores[s] << "-> " << std::setw(11) << r.output << "  reads "
                << reads << "\n";
      maps.push_back({r.attention, r.keys, r.queries, kScores[s] + ": " + r.output});
      alike = alike && r.queries == by_score[0][i].queries;
    }
    const std::string name = "\"" + a.inputs[i] + "\"";
    if (alike) {
      AttentionInput in{name + " -> " + by_score[0][i].output, by_score[0][i].queries, by_score[0][i].keys, kScores, {}};
      for (std::size_t s = 0; s < kScores.size(); ++s) in.heads.push_back({by_score[s][i].attention});
      page.inputs.push_back(std::move(in));
    } else {
      for (std::size_t s = 0; s < kScores.size(); ++s) {
        const DateReading& r = by_score[s][i];
        page.inputs.push_back({kScores[s] + ": " + name + " -> " + r.output, r.queries, r.keys, {kScores[s]}, {{r.attention}}});
      }
    }
    figures.emplace_back("alignments_" + std::to_string(i + 1),
                         date_figure(maps, "Each score's attention on " + name));
  }
  write_outputs(a.out, figures, page);
  return 0;
}

}  // namespace

InspectModel luong_model() {
  return {"luong",
          "  luong        lesson 03's four Luong date normalizers, one per attention score (dot, general,\n"
          "               concat, additive); each INPUT a date as for dates. Prints what each score's model\n"
          "               writes and which input character each output character reads most; writes\n"
          "               alignments_N.png (the four maps of input N) and explorer.html (the four scores as\n"
          "               its layers). Reference checkpoint: lessons/checkpoints/03_luong_attention\n"
          "               (--from out/03_luong_attention)\n",
          "lessons/checkpoints/03_luong_attention",
          {},
          run_luong};
}

}  // namespace attnlab::inspect
