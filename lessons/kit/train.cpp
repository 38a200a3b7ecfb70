#include "lessons/kit/train.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "lessons/story/lesson.hpp"
#include "nn/checkpoint.hpp"

namespace attnlab::lessons {

namespace {

FitOptions fit_options(const Recipe& r) {
  FitOptions o;
  o.label = r.label;
  o.epochs = r.epochs;
  o.batch = r.batch;
  o.seed = r.seed;
  o.shuffle = r.shuffle;
  o.clip = r.clip;
  o.validate = r.validate;
  o.after_step = r.after_step;
  return o;
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

long fit_steps(std::size_t examples, const Recipe& r) { return fit_steps(examples, fit_options(r)); }

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
  FitOptions o = fit_options(r);
  const long total = fit_steps(examples, o);
  o.lr = schedule_of(r, total);
  // fit sets the rate of optimizer step opt.steps() + 1; a resumed optimizer has counted steps
  // already, and the schedule starts afresh.
  const long before = long(opt.steps());
  const nn::Schedule s = o.lr;
  o.lr = [s, before](long step) { return s(step - before); };
  History h = fit(model, opt, examples, loss, o);
  if (!r.checkpoint.empty()) nn::save_checkpoint(lesson().path(r.checkpoint), model.named_parameters(), &opt);
  return h;
}

}  // namespace attnlab::lessons
