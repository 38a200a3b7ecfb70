#include "lessons/kit/train.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <stdexcept>

#include "core/runtime/parallel.hpp"
#include "core/runtime/thread_choice.hpp"
#include "lessons/story/clock.hpp"
#include "lessons/story/lesson.hpp"
#include "lessons/story/progress.hpp"
#include "nn/checkpoint.hpp"
#include "nn/data/batch.hpp"
#include "nn/optim.hpp"

namespace attnlab::lessons {

namespace {

std::size_t steps_per_epoch(std::size_t examples, std::size_t batch) {
  return batch == 0 ? 1 : (examples + batch - 1) / batch;
}

// One epoch's held-out scores, each appended to the score of its name (a new name added in order).
void record_scores(History& h, const Scores& scores) {
  for (const auto& [name, value] : scores) {
    auto it = h.validation.begin();
    while (it != h.validation.end() && it->first != name) ++it;
    if (it == h.validation.end()) it = h.validation.insert(it, {name, {}});
    it->second.push_back(value);
  }
}

void check(const Recipe& r) {
  auto bad = [&](const std::string& why) { throw std::invalid_argument("train '" + r.label + "': " + why); };
  if (r.epochs < 1) bad("epochs must be at least 1, got " + std::to_string(r.epochs));
  if (!(r.lr > 0.0)) bad("the learning rate must be positive, got " + rounded(r.lr));
  if (r.weight_decay < 0.0 || r.warmup < 0.0 || r.floor < 0.0 || r.clip < 0.0)
    bad("weight decay, warm-up, floor and clip cannot be negative");
  if ((r.decay == Decay::inverse_sqrt || r.decay == Decay::inverse_sqrt_no_warmup) && r.warmup <= 0.0)
    bad("the inverse square root schedule needs a warm-up");
}

// "1/20" for 0.05, "0.3" for 0.3: a floor as the prose says it.
std::string share(double f) {
  const double inverse = 1.0 / f;
  if (std::fabs(inverse - std::round(inverse)) < 1e-9 && inverse >= 2) return "1/" + rounded(std::round(inverse));
  return rounded(f);
}

}  // namespace

long fit_steps(std::size_t examples, const Recipe& r) { return long(steps_per_epoch(examples, r.batch)) * r.epochs; }

long warmup_steps(const Recipe& r, long total) {
  if (r.warmup >= 1.0) return long(std::lround(r.warmup));
  return std::max(r.warmup > 0.0 ? 1L : 0L, long(std::lround(r.warmup * double(total))));
}

nn::Schedule schedule_of(const Recipe& r, long total) {
  check(r);
  const long warmup = warmup_steps(r, total);
  switch (r.decay) {
    case Decay::constant: {
      const double peak = r.lr, w = double(warmup);
      return [peak, w](long step) { return w > 0 ? peak * std::min(1.0, double(step) / w) : peak; };
    }
    case Decay::cosine:
      return nn::warmup_cosine_lr(r.lr, warmup, total, r.floor * r.lr);
    case Decay::inverse_sqrt_no_warmup: {
      const double peak = r.lr, w = double(warmup);
      return [peak, w](long step) {
        if (step < 1) throw std::invalid_argument("schedule: step " + std::to_string(step) + " is below 1");
        return peak * std::min(1.0, std::sqrt(w / double(step)));
      };
    }
    case Decay::inverse_sqrt: {
      const double peak = r.lr, w = double(warmup);
      return [peak, w](long step) {
        if (step < 1) throw std::invalid_argument("schedule: step " + std::to_string(step) + " is below 1");
        const double s = double(step);
        return peak * std::min(s / w, std::sqrt(w / s));
      };
    }
  }
  return nn::constant_lr(r.lr);
}

std::string describe(const Recipe& r, long total) {
  std::string s = r.weight_decay > 0.0 ? "AdamW (peak learning rate " + rounded(r.lr) + ", weight decay " + rounded(r.weight_decay)
                                       : "Adam (peak learning rate " + rounded(r.lr);
  if (r.beta1 != 0.9 || r.beta2 != 0.999) s += ", betas " + rounded(r.beta1) + " and " + rounded(r.beta2);
  s += ")";
  const long warmup = warmup_steps(r, total);
  if (r.decay == Decay::inverse_sqrt_no_warmup)
    s += ", the peak from the first step and from step " + std::to_string(warmup) +
         " a decay as 1/√step (the Noam schedule without its warm-up)";
  else if (warmup > 0) s += ", a linear warm-up over " + counted(warmup, "step") + " then";
  switch (r.decay) {
    case Decay::constant: s += warmup > 0 ? " a constant rate" : ", a constant rate"; break;
    case Decay::cosine:
      s += std::string(warmup > 0 ? "" : ",") + " a cosine decay to " +
           (r.floor > 0.0 ? share(r.floor) + " of the peak" : std::string("zero"));
      break;
    case Decay::inverse_sqrt: s += " a decay as 1/√step (the Noam schedule)"; break;
    case Decay::inverse_sqrt_no_warmup: break;
  }
  if (r.clip > 0.0) s += ", gradients clipped at norm " + rounded(r.clip);
  s += r.batch == 0 ? ", the whole training set in every step" : ", batches of " + std::to_string(r.batch);
  return s + ", " + counted(total, "step");
}

History train(nn::Module<float>& model, std::size_t examples, const BatchLoss& loss, const Recipe& r) {
  check(r);
  if (examples == 0) throw std::invalid_argument("train '" + r.label + "': no training examples");
  nn::AdamW<float> opt(model.parameters(), r.lr, r.beta1, r.beta2, r.eps, r.weight_decay);
  if (!r.checkpoint.empty()) {
    const std::string from = checkpoint_from(r.checkpoint);
    if (!from.empty()) {
      nn::load_checkpoint(from, model.named_parameters(), &opt);
      say("Starting ", r.label, " from ", from, ": the weights and optimizer state of an earlier run (",
          counted(opt.steps(), "step"), "), trained here for more steps with the schedule started afresh.");
    }
  }
  const nn::Schedule schedule = schedule_of(r, fit_steps(examples, r));
  // The schedule's step 1 is this run's first: a resumed optimizer has counted steps already, and
  // the schedule starts afresh.
  const long before = long(opt.steps());
  const std::size_t batch = r.batch == 0 ? examples : r.batch;
  History h;
  h.steps_per_epoch = steps_per_epoch(examples, r.batch);
  const auto start = std::chrono::steady_clock::now();
  Progress bar(h.steps_per_epoch * std::size_t(r.epochs), r.label);
  // Each step at one thread or at all the lesson's, whichever is measured faster; the bits are
  // the same either way. Everything else (validation, the checkpoint) at all of them.
  h.threads = threads();
  ThreadChoice choice(h.threads);
  for (int e = 0; e < r.epochs; ++e) {
    model.train();
    const std::string note = r.epochs > 1 ? "epoch " + std::to_string(e + 1) + "/" + std::to_string(r.epochs) : "";
    double total = 0.0;
    for (const auto& rows : nn::data::batch_slices(nn::data::epoch_order(examples, r.seed, std::size_t(e), r.shuffle), batch)) {
      choice.before_step();
      const double w0 = wall_ms(), c0 = cpu_ms();
      opt.zero_grad();
      const Tensor<float> l = loss(rows);
      l.backward();
      if (r.clip > 0.0) nn::clip_grad_norm(opt.params(), r.clip);
      opt.set_lr(schedule(long(opt.steps()) + 1 - before));
      opt.step();
      h.step_ms.push_back(wall_ms() - w0);
      h.step_cpu_ms.push_back(cpu_ms() - c0);
      choice.after_step(h.step_ms.back());
      h.loss.push_back(l.item());
      h.lr.push_back(opt.lr());
      total += l.item();
      ++h.steps;
      bar.step(l.item(), note);
      if (r.after_step) r.after_step(h.steps);
    }
    h.epoch_loss.push_back(total / double(h.steps_per_epoch));
    choice.restore();
    if (r.validate) {
      model.eval();
      NoGrad no_grad;
      record_scores(h, r.validate());
    }
  }
  bar.finish();
  h.steps_at_one_thread = choice.steps_at_one();
  model.eval();
  h.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!r.checkpoint.empty()) nn::save_checkpoint(lesson().path(r.checkpoint), model.named_parameters(), &opt);
  return h;
}

}  // namespace attnlab::lessons
