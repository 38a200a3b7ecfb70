#include "lessons/kit/history.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "lessons/story/stats.hpp"
#include "lessons/story/text.hpp"
#include "nn/metrics.hpp"

namespace attnlab::lessons {

const std::vector<double>& History::validation_of(const std::string& name) const {
  for (const auto& [n, values] : validation)
    if (n == name) return values;
  throw std::out_of_range("History: no held-out score named '" + name + "'");
}

std::vector<double> History::epoch_steps() const {
  std::vector<double> steps;
  for (std::size_t e = 1; e <= epoch_loss.size(); ++e) steps.push_back(double(e * steps_per_epoch));
  return steps;
}

std::size_t History::steps_to_reach(const std::string& score, double level) const {
  const std::vector<double>& values = validation_of(score);
  for (std::size_t e = 0; e < values.size(); ++e)
    if (values[e] >= level) return (e + 1) * steps_per_epoch;
  return 0;
}

double History::median_step_ms() const { return median(step_ms); }
double History::median_step_cpu_ms() const { return median(step_cpu_ms); }

std::string History::threads_text() const {
  if (steps_at_one_thread == 0 || threads == 1) return counted(threads, "thread");
  if (steps_at_one_thread == steps) return "1 thread";
  return "1 thread in " + std::to_string(steps_at_one_thread) + " of " + std::to_string(steps) + " steps and " +
         std::to_string(threads) + " in the rest, the loop keeping whichever it measured faster";
}

std::vector<double> History::epoch_cpu_seconds() const {
  std::vector<double> out;
  double seconds = 0;
  for (std::size_t s = 0; s < step_cpu_ms.size(); ++s) {
    seconds += step_cpu_ms[s] / 1000.0;
    if (steps_per_epoch > 0 && (s + 1) % steps_per_epoch == 0) out.push_back(seconds);
  }
  return out;
}

History joined(History earlier, const History& later) {
  auto append = [](std::vector<double>& to, const std::vector<double>& more) {
    to.insert(to.end(), more.begin(), more.end());
  };
  append(earlier.loss, later.loss);
  append(earlier.lr, later.lr);
  append(earlier.step_ms, later.step_ms);
  append(earlier.step_cpu_ms, later.step_cpu_ms);
  append(earlier.epoch_loss, later.epoch_loss);
  for (auto& [name, values] : earlier.validation) append(values, later.validation_of(name));
  earlier.steps += later.steps;
  earlier.seconds += later.seconds;
  earlier.threads = std::max(earlier.threads, later.threads);
  earlier.steps_at_one_thread += later.steps_at_one_thread;
  return earlier;
}

Scores class_scores(const Array<float>& probabilities, const IndexArray& labels) {
  return {{"accuracy", nn::accuracy(nn::argmax_last(probabilities), labels)},
          {"loss", nn::log_loss(probabilities, labels)}};
}

}  // namespace attnlab::lessons
