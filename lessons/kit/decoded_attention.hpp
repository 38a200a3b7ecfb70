// The attention of the recurrent encoder-decoder (nn/rnn, lessons 02 and 03) on a decoded input,
// as the figures and the explorer show it: rows the decoded tokens (queries, one per output step),
// columns the input's characters and <eos> (keys).
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "lessons/kit/explorer.hpp"
#include "lessons/kit/figures.hpp"
#include "nn/data/vocab.hpp"
#include "nn/rnn/seq2seq.hpp"

namespace attnlab::lessons {

// Example i of `ev`, whose input was `source`, as a map titled `title`. std::out_of_range naming
// decoded_map when ev has no example i; std::invalid_argument naming it when the example's
// attention is not (its decoded tokens, the source's characters and <eos>): a model without
// attention, or the wrong source.
AttentionMap decoded_map(const nn::rnn::Evaluation& ev, std::size_t i, const std::string& source,
                         const nn::data::Vocab& target, const std::string& title);

// Example i decoded by one model or several, as one explorer input named "\"source\" -> the first
// model's prediction": a layer per model, named as given, its one head that model's attention; the
// queries are the first model's decoded tokens (on an input they decode alike, everyone's).
// std::invalid_argument naming decoded_input for no models, and decoded_map's errors for each.
using NamedEvaluation = std::pair<std::string, const nn::rnn::Evaluation*>;
AttentionInput decoded_input(const std::vector<NamedEvaluation>& models, std::size_t i, const std::string& source,
                             const nn::data::Vocab& target);

// decoded_map's panels side by side in `cols` columns under `title` (attention_figure), the axes
// named for a translation: input characters (keys), output characters (queries).
plots::Figure decoded_figure(const std::vector<AttentionMap>& maps, const std::string& title, int cols, int width,
                             int height);

}  // namespace attnlab::lessons
