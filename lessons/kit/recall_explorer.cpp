#include "lessons/kit/recall_explorer.hpp"

#include <stdexcept>

#include <xtensor/xview.hpp>

#include "lessons/story/text.hpp"

namespace attnlab::lessons {

std::string recall_token(const nn::data::RecallConfig& config, const nn::data::Recall& set, std::size_t sequence,
                         std::size_t position) {
  const Index key = set.keys(sequence, position), value = set.values(sequence, position);
  if (key == Index(config.keys)) return "·";  // a filler
  return value == Index(config.values) ? text("k", key, "?") : text("k", key, "=v", value);
}

ExplorerPage recall_explorer(const RecallTask& task, const std::vector<const RecallRun*>& runs, std::size_t sequence) {
  if (runs.empty() || sequence >= task.held_out.size())
    throw std::invalid_argument(text("recall_explorer: needs runs and a held-out sequence, got ", runs.size(),
                                     " runs and sequence ", sequence, " of ", task.held_out.size()));
  const nn::data::Recall one = task.held_out.rows({sequence});
  const std::size_t L = one.length();
  std::vector<std::size_t> asked;
  AttentionInput in;
  for (std::size_t i = 0; i < L; ++i) {
    in.keys.push_back(recall_token(task.config, one, 0, i));
    if (one.targets(0, i) != nn::data::kNotAsked) {
      asked.push_back(i);
      in.queries.push_back(text(in.keys.back(), " (", i, ")"));
    }
  }
  for (const RecallRun* run : runs) {
    const Array<float> w = run->model->attention_weights(one);
    xt::xarray<double> rows = xt::zeros<double>({asked.size(), L});
    for (std::size_t r = 0; r < asked.size(); ++r)
      for (std::size_t j = 0; j < L; ++j) rows(r, j) = w(0, asked[r], j);
    in.layers.push_back(run->name);
    in.heads.push_back({rows});
  }
  in.name = text("held-out sequence ", sequence + 1, ": ", asked.size(), " questions, ", L, " tokens");
  ExplorerPage page;
  page.title = text("Lesson 18: where each attention looks for a fact (associative recall, n = ", L, ")");
  page.query_side = "questions (position)", page.key_side = "tokens";
  page.note = text("The trained models of this run on a held-out sequence: each question k? (right) must find the fact "
                   "k=v with its key (left) anywhere in the first half; \"·\" is a filler. Each attention is a \"layer\" "
                   "of one head. Hover a question to read its weights: which attention finds the fact, and where "
                   "the others look instead.");
  page.inputs.push_back(std::move(in));
  return page;
}

}  // namespace attnlab::lessons
