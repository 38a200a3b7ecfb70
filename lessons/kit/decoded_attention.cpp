#include "lessons/kit/decoded_attention.hpp"

#include <stdexcept>

#include "core/array.hpp"

namespace attnlab::lessons {

AttentionMap decoded_map(const nn::rnn::Evaluation& ev, std::size_t i, const std::string& source,
                         const nn::data::Vocab& target, const std::string& title) {
  const nn::rnn::Decoded& d = ev.decoded;
  if (i >= d.ids.size() || i >= d.attention.size())
    throw std::out_of_range("decoded_map: example " + std::to_string(i) + " of " + std::to_string(d.ids.size()) +
                            " decoded examples");
  AttentionMap m{d.attention[i], char_labels(source, true), token_labels(d.ids[i], target), title};
  if (m.weights.dimension() != 2 || m.weights.shape()[0] != m.queries.size() || m.weights.shape()[1] != m.keys.size())
    throw std::invalid_argument("decoded_map: example " + std::to_string(i) + "'s attention is " +
                                shape_str(m.weights.shape()) + ", not (" + std::to_string(m.queries.size()) +
                                " decoded tokens, " + std::to_string(m.keys.size()) + " characters of \"" + source +
                                "\" and <eos>)");
  return m;
}

AttentionInput decoded_input(const std::vector<NamedEvaluation>& models, std::size_t i, const std::string& source,
                             const nn::data::Vocab& target) {
  if (models.empty()) throw std::invalid_argument("decoded_input: no models for \"" + source + "\"");
  const AttentionMap first = decoded_map(*models.front().second, i, source, target, "");
  AttentionInput in{"\"" + source + "\" -> " + models.front().second->predictions.at(i), first.queries, first.keys, {}, {}};
  for (const auto& [name, ev] : models) {
    in.layers.push_back(name);
    in.heads.push_back({decoded_map(*ev, i, source, target, name).weights});
  }
  return in;
}

plots::Figure decoded_figure(const std::vector<AttentionMap>& maps, const std::string& title, int cols, int width,
                             int height) {
  AttentionFigureOptions style{title, cols, width, height};
  style.keys_label = "input characters (keys)";
  style.queries_label = "output characters (queries)";
  return attention_figure(maps, style);
}

}  // namespace attnlab::lessons
