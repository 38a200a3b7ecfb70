// What the date models of lessons 02 and 03 do alike with the dates a person typed (inspect/
// inspect.hpp): read them, decode them greedily, and say which input character each output
// character read most.
#include "inspect/inspect.hpp"
#include "lessons/kit/figures.hpp"
#include "nn/data/batch.hpp"

namespace attnlab::inspect {

namespace data = attnlab::nn::data;

std::vector<DateReading> read_dates(const lessons::LoadedSeq2Seq& m, const std::vector<std::string>& inputs) {
  data::EncodedPairs pairs;
  for (const std::string& in : inputs) {
    pairs.source.push_back(m.source.encode(typed_characters(in)));
    pairs.target.push_back({});
  }
  const data::PaddedBatch src = data::make_seq2seq_batch(pairs, data::first_rows(pairs.size())).source;
  const nn::rnn::Decoded d = m.model->greedy(src, kLongestDate);
  std::vector<DateReading> out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    DateReading r{inputs[i], m.target.decode(d.ids[i], data::Tokenizer::chars), typed_characters(inputs[i]),
                  lessons::token_labels(d.ids[i], m.target), d.attention[i], {}, d.ids[i]};
    r.unknown = unknown_characters(r.keys, m.source);
    for (std::string& k : r.keys) k = k == " " ? "␣" : k;  // as char_labels shows a space
    r.keys.push_back("<eos>");
    out.push_back(std::move(r));
  }
  return out;
}

std::size_t most_read(const DateReading& r, std::size_t query) {
  std::size_t best = 0;
  for (std::size_t j = 1; j < r.keys.size(); ++j) best = r.attention(query, j) > r.attention(query, best) ? j : best;
  return best;
}

plots::Figure date_figure(const std::vector<lessons::AttentionMap>& maps, const std::string& title) {
  lessons::AttentionFigureOptions style{title, int(std::min<std::size_t>(2, maps.size())), 1400, 900};
  if (maps.size() > 1) style.width = 2200, style.height = 1100;  // lesson 03's four maps, as its figure lays them out
  style.keys_label = "input characters (keys)", style.queries_label = "output characters (queries)";
  return lessons::attention_figure(maps, style);
}

}  // namespace attnlab::inspect
