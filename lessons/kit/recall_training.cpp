#include "lessons/kit/recall_training.hpp"

#include <stdexcept>

#include "lessons/story/text.hpp"

namespace attnlab::lessons {

RecallRun train_recall(const RecallTask& task, const std::string& name, nn::AttentionKind kind, std::size_t width,
                       Recipe recipe, std::uint64_t init_seed) {
  if (recipe.epochs < 2)
    throw std::invalid_argument(text("train_recall: '", name, "' needs at least 2 epochs, got ", recipe.epochs));
  Generator gen(init_seed);
  RecallRun t{name, kind, std::make_unique<nn::RecallModel>(task.config, kind, width, task.band, gen), {}, 0, 0};
  const nn::RecallModel& m = *t.model;
  recipe.label = name;
  recipe.validate = [&] { return Scores{{"accuracy", nn::recall_accuracy(m, task.held_out)}}; };
  t.history = train(*t.model, task.train.size(),
                    [&](const std::vector<std::size_t>& rows) { return m.loss(task.train.rows(rows)); }, recipe);
  const std::vector<double>& acc = t.history.validation_of("accuracy");
  t.accuracy = acc.back(), t.half = acc[acc.size() / 2 - 1];
  return t;
}

}  // namespace attnlab::lessons
