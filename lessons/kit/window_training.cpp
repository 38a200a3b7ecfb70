#include "lessons/kit/window_training.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/ops.hpp"
#include "nn/data/char_corpus.hpp"
#include "nn/data/vocab.hpp"
#include "nn/lm/score.hpp"

namespace attnlab::lessons {

History train_on_windows(nn::CausalLM<float>& model, const std::vector<Index>& stream,
                         const std::vector<std::vector<Index>>& monitor, const WindowPlan& plan, Recipe recipe) {
  const auto refuse = [](const std::string& why) { throw std::invalid_argument("train_on_windows: " + why); };
  if (plan.evaluations < 1 || plan.steps < plan.evaluations || plan.steps % plan.evaluations != 0)
    refuse("steps " + std::to_string(plan.steps) + " are not a positive multiple of evaluations " +
           std::to_string(plan.evaluations));
  if (monitor.empty()) refuse("the monitor holds no sequence");
  if (stream.size() <= plan.context + 1)
    refuse("a stream of " + std::to_string(stream.size()) + " tokens is no longer than a window of " +
           std::to_string(plan.context) + " and its target");
  using Vocab = nn::data::Vocab;
  Generator windows(plan.window_seed);
  // train()'s "examples" are windows: steps / evaluations batches of them between validation points.
  const std::size_t per_point = std::size_t(plan.steps / plan.evaluations) * plan.batch;
  recipe.epochs = plan.evaluations, recipe.batch = plan.batch;
  recipe.validate = [&] {
    const double nats = nn::lm::mean_of(nn::lm::causal_lm_token_nats(model, monitor, Vocab::bos, Vocab::eos, plan.context));
    return Scores{{"loss", nats}, {"bpc", nats / std::log(2.0)}};
  };
  return train(model, per_point, [&](const std::vector<std::size_t>& rows) {
    auto [ids, targets] = nn::data::random_windows(stream, rows.size(), plan.context, windows);
    return cross_entropy(model.forward(ids), targets);
  }, recipe);
}

std::vector<double> millions_read(const WindowPlan& plan) {
  std::vector<double> x;
  for (int i = 1; i <= plan.evaluations; ++i)
    x.push_back(double(i) * double(plan.steps / plan.evaluations) * double(plan.tokens_per_step()) / 1e6);
  return x;
}

}  // namespace attnlab::lessons
