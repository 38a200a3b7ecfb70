#include "lessons/kit/window_training.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/ops.hpp"
#include "lessons/kit/figures.hpp"
#include "lessons/story/stats.hpp"
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

StepProfile profile_window_steps(const nn::CausalLMConfig& config, const std::vector<Index>& stream,
                                 const WindowPlan& plan, std::uint64_t init_seed, int steps) {
  Generator gen(init_seed), windows(plan.window_seed);
  nn::CausalLM<float> model(config, gen);
  using Batch = std::pair<IndexArray, IndexArray>;
  return profile_steps<Batch>(
      model, [&] { return nn::data::random_windows(stream, plan.batch, plan.context, windows); },
      [&](const Batch& b) { return cross_entropy(model.forward(b.first), b.second); }, steps);
}

std::vector<plots::Series> bits_curves(const std::string& name, const History& history, const WindowPlan& plan,
                                       const std::vector<BitsLevel>& levels) {
  const double ln2 = std::log(2.0);
  const std::vector<double> x = millions_read(plan);
  const auto& found = history.validation;
  const bool has_bpc = std::any_of(found.begin(), found.end(), [](const auto& v) { return v.first == "bpc"; });
  if (!has_bpc || history.validation_of("bpc").empty() || history.validation_of("bpc").size() > x.size() ||
      history.loss.empty())
    throw std::invalid_argument("bits_curves: the history of '" + name + "' needs 1 .. " + std::to_string(x.size()) +
                                " \"bpc\" points (the plan's evaluations) and a step, has " +
                                std::to_string(has_bpc ? history.validation_of("bpc").size() : 0) + " and " +
                                std::to_string(history.loss.size()) + " steps");
  const std::vector<double>& bpc = history.validation_of("bpc");
  std::vector<plots::Series> series{curve(name + ", validation", std::vector<double>(x.begin(), x.begin() + long(bpc.size())), bpc)};
  const Windowed w = windowed(history.loss, std::max<std::size_t>(1, history.loss.size() / 40));
  std::vector<double> wx, wy;
  for (std::size_t i = 0; i < w.x.size(); ++i)
    wx.push_back(w.x[i] * double(plan.tokens_per_step()) / 1e6), wy.push_back(w.y[i] / ln2);
  series.push_back(curve(name + ", training windows", wx, wy));
  const std::vector<double> span{0.0, x.back()};
  for (const BitsLevel& l : levels) {
    plots::Series s = reference(l.name, span, {l.bits, l.bits});
    s.color = plots::Color::hex(l.color);
    series.push_back(s);
  }
  return series;
}

}  // namespace attnlab::lessons
