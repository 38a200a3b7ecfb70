#include "lessons/kit/recall_training.hpp"

#include <stdexcept>

#include "lessons/story/text.hpp"

namespace attnlab::lessons {

RecallTask make_recall_task(const nn::data::RecallConfig& config, std::size_t train_count, std::size_t held_out_count,
                            std::size_t band, std::uint64_t seed) {
  if (band == 0 || band > config.length || train_count == 0 || held_out_count == 0)
    throw std::invalid_argument(text("make_recall_task: needs 0 < band <= length and sequences in both sets, got band ",
                                     band, ", length ", config.length, ", ", train_count, " training and ",
                                     held_out_count, " held-out sequences"));
  RecallTask t;
  t.config = config;
  t.band = band;
  Generator gen(seed);
  t.train = nn::data::make_recall(config, train_count, gen);
  t.held_out = nn::data::make_recall(config, held_out_count, gen);
  return t;
}

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
