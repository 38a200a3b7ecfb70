#include "lessons/kit/fit.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include "lessons/story/clock.hpp"
#include "lessons/story/progress.hpp"
#include "lessons/story/stats.hpp"
#include "nn/data/batch.hpp"
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

std::vector<double> History::epoch_cpu_seconds() const {
  std::vector<double> out;
  double seconds = 0;
  for (std::size_t s = 0; s < step_cpu_ms.size(); ++s) {
    seconds += step_cpu_ms[s] / 1000.0;
    if (steps_per_epoch > 0 && (s + 1) % steps_per_epoch == 0) out.push_back(seconds);
  }
  return out;
}

namespace {

void record_scores(History& h, const Scores& scores) {
  for (const auto& [name, value] : scores) {
    auto it = h.validation.begin();
    while (it != h.validation.end() && it->first != name) ++it;
    if (it == h.validation.end()) it = h.validation.insert(it, {name, {}});
    it->second.push_back(value);
  }
}

}  // namespace

Array<float> rows_in_batches(std::size_t n, std::size_t batch,
                             const std::function<Array<float>(const std::vector<std::size_t>& rows)>& block) {
  if (n == 0) throw std::invalid_argument("rows_in_batches: no rows to compute");
  NoGrad no_grad;
  Array<float> out;
  std::size_t row_size = 0;
  in_batches(n, batch, [&](const std::vector<std::size_t>& rows) {
    const Array<float> b = block(rows);
    if (b.dimension() == 0 || b.shape()[0] != rows.size())
      throw std::invalid_argument("rows_in_batches: a block for " + std::to_string(rows.size()) + " rows has shape " +
                                  shape_str(b.shape()));
    if (rows.front() == 0) {
      Shape s(b.shape().begin(), b.shape().end());
      s[0] = n;
      out = Array<float>::from_shape(s);
      row_size = b.size() / rows.size();
    } else if (b.size() != rows.size() * row_size) {
      throw std::invalid_argument("rows_in_batches: the block of rows from " + std::to_string(rows.front()) +
                                  " has shape " + shape_str(b.shape()) + ", unlike the first block's rows");
    }
    std::copy(b.begin(), b.end(), out.data() + rows.front() * row_size);
  });
  return out;
}

Scores class_scores(const Array<float>& probabilities, const IndexArray& labels) {
  return {{"accuracy", nn::accuracy(nn::argmax_last(probabilities), labels)},
          {"loss", nn::log_loss(probabilities, labels)}};
}

namespace {
std::size_t steps_per_epoch(std::size_t examples, std::size_t batch) {
  return batch == 0 ? 1 : (examples + batch - 1) / batch;
}
}  // namespace

long fit_steps(std::size_t examples, const FitOptions& o) {
  return long(steps_per_epoch(examples, o.batch)) * o.epochs;
}

History fit(nn::Module<float>& model, nn::Optimizer<float>& opt, std::size_t examples, const BatchLoss& loss,
            const FitOptions& o) {
  if (examples == 0) throw std::invalid_argument("fit: no training examples");
  if (o.epochs < 1) throw std::invalid_argument("fit: epochs must be at least 1, got " + std::to_string(o.epochs));
  const std::size_t batch = o.batch == 0 ? examples : o.batch;
  History h;
  h.steps_per_epoch = steps_per_epoch(examples, o.batch);
  const auto start = std::chrono::steady_clock::now();
  Progress bar(h.steps_per_epoch * std::size_t(o.epochs), o.label);
  for (int e = 0; e < o.epochs; ++e) {
    model.train();
    const std::string note = o.epochs > 1 ? "epoch " + std::to_string(e + 1) + "/" + std::to_string(o.epochs) : "";
    double total = 0.0;
    for (const auto& rows : nn::data::batch_slices(nn::data::epoch_order(examples, o.seed, std::size_t(e), o.shuffle), batch)) {
      const double w0 = wall_ms(), c0 = cpu_ms();
      opt.zero_grad();
      const Tensor<float> l = loss(rows);
      l.backward();
      if (o.clip > 0.0) nn::clip_grad_norm(opt.params(), o.clip);
      if (o.lr) opt.set_lr(o.lr(long(opt.steps()) + 1));
      opt.step();
      h.step_ms.push_back(wall_ms() - w0);
      h.step_cpu_ms.push_back(cpu_ms() - c0);
      h.loss.push_back(l.item());
      h.lr.push_back(opt.lr());
      total += l.item();
      ++h.steps;
      bar.step(l.item(), note);
      if (o.after_step) o.after_step(h.steps);
    }
    h.epoch_loss.push_back(total / double(h.steps_per_epoch));
    if (o.validate) {
      model.eval();
      NoGrad no_grad;
      record_scores(h, o.validate());
    }
  }
  bar.finish();
  model.eval();
  h.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return h;
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
  return earlier;
}

}  // namespace attnlab::lessons
