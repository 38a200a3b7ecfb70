#include "core/gradcheck.hpp"

#include <cmath>
#include <sstream>

namespace attnlab {

namespace {

double inner(const Array<double>& a, const Array<double>& b) {
  double s = 0.0;
  auto ia = a.begin();
  for (auto ib = b.begin(); ib != b.end(); ++ia, ++ib) s += *ia * *ib;
  return s;
}

bool all_finite(const Array<double>& a) {
  for (double v : a)
    if (!std::isfinite(v)) return false;
  return true;
}

}  // namespace

GradcheckResult gradcheck(const GradFn& f, std::vector<Tensor<double>> inputs,
                          const GradcheckOptions& options) {
  GradcheckResult r;
  Generator gen(options.seed);
  for (auto& x : inputs) {
    x.zero_grad();
    x.set_requires_grad(true);
  }

  // Analytic: backward from a random upstream gradient onto pre-filled input gradients.
  Tensor<double> y = f(inputs);
  if (!all_finite(y.value())) {
    r.finite = false;
    r.detail = "forward produced NaN or inf";
    return r;
  }
  const Array<double> g = random_normal<double>(shape_of(y.value()), gen);
  std::vector<Array<double>> prefill;
  for (auto& x : inputs) {
    prefill.push_back(random_normal<double>(x.shape(), gen));
    x.node()->grad = prefill.back();
    x.node()->has_grad = true;
  }
  if (!y.requires_grad()) {
    r.detail = "output does not depend on any input";
    return r;
  }
  y.backward(g);
  y = Tensor<double>();

  // Numeric: central differences of F = <f(x), g>, one entry at a time.
  NoGrad no_grad;
  const double h = options.step;
  std::ostringstream worst;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    Array<double> analytic = inputs[k].grad() - prefill[k];
    if (!all_finite(analytic)) {
      r.finite = false;
      r.detail = "gradient of input " + std::to_string(k) + " has NaN or inf";
      return r;
    }
    Array<double>& x = inputs[k].mutable_value();
    for (std::size_t i = 0; i < x.size(); ++i) {
      double& xi = x.data()[i];
      const double saved = xi;
      xi = saved + h;
      const double f_plus = inner(f(inputs).value(), g);
      xi = saved - h;
      const double f_minus = inner(f(inputs).value(), g);
      xi = saved;
      const double numeric = (f_plus - f_minus) / (2.0 * h);
      const double a = analytic.data()[i];
      const double abs_err = std::fabs(a - numeric);
      const double rel_err = abs_err / std::max({std::fabs(a), std::fabs(numeric), 1.0});
      if (rel_err > r.max_rel_error) {
        worst.str("");
        worst << "input " << k << " entry " << i << ": analytic " << a << ", numeric " << numeric;
      }
      r.max_abs_error = std::max(r.max_abs_error, abs_err);
      r.max_rel_error = std::max(r.max_rel_error, rel_err);
      ++r.checked;
    }
  }
  r.ok = r.finite && r.checked > 0 && r.max_rel_error <= options.tolerance;
  if (!r.ok) r.detail = r.checked ? worst.str() : "no entries to check";
  return r;
}

std::vector<GradcheckCase>& gradcheck_registry() {
  static std::vector<GradcheckCase> cases;
  return cases;
}

RegisterGradcheck::RegisterGradcheck(std::string name, std::string shapes,
                                     std::function<GradcheckResult()> run) {
  gradcheck_registry().push_back({std::move(name), std::move(shapes), std::move(run)});
}

}  // namespace attnlab
