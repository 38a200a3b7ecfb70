#include "nn/schedule.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"

namespace attnlab::nn {

namespace {
constexpr double kPi = 3.14159265358979323846;

void check_step(const char* who, long step) {
  check(step >= 1, who, "steps count from 1, got step ", step);
}
void check_rate(const char* who, const char* what, double v) {
  check(std::isfinite(v) && v >= 0.0, who, what, " must be finite and >= 0, got ", v);
}
// Rising from peak/warmup at step 1 to peak at step == warmup.
double warmup(double peak, long warmup, long step) {
  return peak * static_cast<double>(step) / static_cast<double>(warmup);
}
}  // namespace

Schedule constant_lr(double lr) {
  check_rate("constant_lr", "lr", lr);
  return [lr](long step) {
    check_step("constant_lr", step);
    return lr;
  };
}

Schedule noam_lr(double d_model, long warmup_steps, double factor) {
  check(d_model > 0.0, "noam_lr", "d_model must be > 0, got ", d_model);
  check(warmup_steps > 0, "noam_lr", "warmup must be > 0, got ", warmup_steps);
  check(std::isfinite(factor) && factor > 0.0, "noam_lr", "factor must be > 0, got ", factor);
  return [=](long step) {
    check_step("noam_lr", step);
    const double s = static_cast<double>(step), w = static_cast<double>(warmup_steps);
    // The two branches cross where step^-0.5 == step * warmup^-1.5, i.e. at step == warmup.
    return factor / std::sqrt(d_model) * std::min(1.0 / std::sqrt(s), s * std::pow(w, -1.5));
  };
}

Schedule warmup_cosine_lr(double peak, long warmup_steps, long total, double floor) {
  check_rate("warmup_cosine_lr", "peak", peak);
  check_rate("warmup_cosine_lr", "floor", floor);
  check(floor <= peak, "warmup_cosine_lr", "floor ", floor, " is above peak ", peak);
  check(warmup_steps >= 0, "warmup_cosine_lr", "warmup must be >= 0, got ", warmup_steps);
  check(total > warmup_steps, "warmup_cosine_lr", "total (", total, ") must exceed warmup (",
        warmup_steps, ")");
  return [=](long step) {
    check_step("warmup_cosine_lr", step);
    if (step <= warmup_steps) return warmup(peak, warmup_steps, step);
    if (step >= total) return floor;
    // progress 0 -> 1 over (warmup, total]; 0.5 * (1 + cos(pi * progress)) falls 1 -> 0.
    const double progress =
        static_cast<double>(step - warmup_steps) / static_cast<double>(total - warmup_steps);
    return floor + (peak - floor) * 0.5 * (1.0 + std::cos(kPi * progress));
  };
}

Schedule warmup_exponential_lr(double peak, long warmup_steps, double gamma) {
  check_rate("warmup_exponential_lr", "peak", peak);
  check(warmup_steps >= 0, "warmup_exponential_lr", "warmup must be >= 0, got ", warmup_steps);
  check(gamma > 0.0 && gamma <= 1.0, "warmup_exponential_lr", "gamma must be in (0, 1], got ",
        gamma);
  return [=](long step) {
    check_step("warmup_exponential_lr", step);
    if (step <= warmup_steps) return warmup(peak, warmup_steps, step);
    return peak * std::pow(gamma, static_cast<double>(step - warmup_steps));
  };
}

}  // namespace attnlab::nn
