// inspect luong "3rd of March, 1997" "12/25/68"
//
// Lesson 03's four Luong decoders, one per attention score (dot, general, concat and Bahdanau's
// additive), trained by the lesson on lesson 02's dates with one budget, each decode every input
// greedily. Printed per input: what each score's model wrote and, in order, the input character
// each of its output characters read most. Written per input: the four maps side by side
// (alignments_N.png, as the lesson's figure of one test input), and explorer.html with the four
// scores as its four "layers", as the lesson's own explorer: one click apart. An input the four
// decode differently gets one explorer entry per score (an entry's outputs are its queries). Dot and
// general are a query times a key (the decoder state h_t times h_s or W h_s): their layers carry
// both, for the neuron view's per-dimension terms; concat and additive say why they have none.
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>

#include "inspect/inspect.hpp"
#include "lessons/kit/explorer.hpp"
#include "nn/data/batch.hpp"
#include "nn/rnn/seq2seq.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::inspect {
namespace {

using namespace attnlab::lessons;

const std::vector<std::string> kScores = {"dot", "general", "concat", "additive"};  // the lesson's order

// Why the neuron view has nothing for the two scores that are not q . k.
const std::map<std::string, std::string> kNoTerms = {
    {"concat", "Luong's concat score, v\u1d40 tanh(W [h_t; h_s]), passes the decoder state and the annotation "
               "through one tanh together before v sums it: no query and key whose per-dimension products add up "
               "to the score, so nothing to split."},
    {"additive", "Bahdanau's additive score, v\u1d40 tanh(W_q h_t + W_k h_s), adds the projected state and "
                 "annotation inside a tanh before v sums it: no query and key whose per-dimension products add up to "
                 "the score, so nothing to split."}};

// Layer `layer` of `in`, score `score`'s reading of input `typed`: for dot (s = h_t . h_s) and general
// (s = h_t . W h_s) the states h_t as its queries and the keys as the score reads them, for the neuron
// view (nn::rnn::luong_query_keys); for concat and additive the reason there are none.
void add_neuron_view(AttentionInput& in, std::size_t layer, const LoadedSeq2Seq& m, const std::string& score,
                     const std::string& typed, const DateReading& r) {
  const std::size_t L = in.layers.size();
  if (in.q.empty()) in.q.assign(L, {}), in.k.assign(L, {}), in.layer_scale.assign(L, 1.0), in.no_neuron_view.assign(L, "");
  nn::data::EncodedPairs one{{m.source.encode(typed_characters(typed))}, {{}}};
  const std::optional<nn::rnn::QueryKeys> qk =
      nn::rnn::luong_query_keys(*m.model, nn::data::make_seq2seq_batch(one, {0}).source, r.ids);
  if (!qk) {
    in.no_neuron_view[layer] = kNoTerms.at(score);
    return;
  }
  in.q[layer] = {qk->queries}, in.k[layer] = {qk->keys}, in.layer_scale[layer] = qk->scale;
}

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
                   "input characters (left). Where they differ, each score's reading is an input of its own. Dot "
                   "(s = h_t \u00b7 h_s, the decoder state times the input's annotation) and general (s = h_t \u00b7 W h_s) are a query times a key: the "
                   "neuron view splits each score into its per-dimension products, the decoder state h_t the query. "
                   "Concat and additive put a tanh between the two, so they have no such terms: the neuron view says so.");
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
      for (std::size_t s = 0; s < kScores.size(); ++s) add_neuron_view(in, s, models[s], kScores[s], a.inputs[i], by_score[s][i]);
      page.inputs.push_back(std::move(in));
    } else {
      for (std::size_t s = 0; s < kScores.size(); ++s) {
        const DateReading& r = by_score[s][i];
        page.inputs.push_back({kScores[s] + ": " + name + " -> " + r.output, r.queries, r.keys, {kScores[s]}, {{r.attention}}});
        add_neuron_view(page.inputs.back(), 0, models[s], kScores[s], a.inputs[i], r);
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
          "               its layers; the neuron view for dot and general). Reference checkpoint:\n"
          "               lessons/checkpoints/03_luong_attention\n"
          "               (--from out/03_luong_attention)\n",
          "lessons/checkpoints/03_luong_attention",
          {},
          run_luong};
}

}  // namespace attnlab::inspect
