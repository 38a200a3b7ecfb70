// The checks an exercise's grading function makes. Each records one Check; a failed one says
// what differs, where, and (from the exercise) where to look.
#include <cmath>
#include <cstdio>

#include "exercises/grading/exercise.hpp"

#include "core/error.hpp"

namespace attnlab::exercises {

namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", v);
  return buf;
}

}  // namespace

void not_attempted() { throw NotAttempted{}; }

Array<double> product(const Array<double>& a, const Array<double>& b) {
  if (a.dimension() != 2 || b.dimension() != 2 || a.shape()[1] != b.shape()[0])
    fail("product", "expected (n, k) x (k, m), got ", shape_str(shape_of(a)), " x ", shape_str(shape_of(b)));
  Array<double> c = xt::zeros<double>({a.shape()[0], b.shape()[1]});
  for (std::size_t i = 0; i < a.shape()[0]; ++i)
    for (std::size_t p = 0; p < a.shape()[1]; ++p)
      for (std::size_t j = 0; j < b.shape()[1]; ++j) c(i, j) += a(i, p) * b(p, j);
  return c;
}

Array<double> transposed(const Array<double>& a) { return xt::transpose(a); }

Array<double> random_array(const Shape& shape, std::uint64_t seed, double lo, double hi) {
  Generator gen(seed);
  return random_uniform<double>(shape, gen, lo, hi);
}

std::string index_str(const Shape& shape, std::size_t flat) {
  std::vector<std::size_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  std::string s = "[";
  for (std::size_t d = 0; d < idx.size(); ++d) s += (d ? ", " : "") + std::to_string(idx[d]);
  return s + "]";
}

bool Grader::check(bool ok, const std::string& what, const std::string& detail, const std::string& hint) {
  checks_.push_back({ok, what, detail, hint});
  return ok;
}

bool Grader::passed() const {
  for (const Check& c : checks_)
    if (!c.ok) return false;
  return !checks_.empty();
}

bool Grader::close(const std::string& what, const Array<double>& got, const Array<double>& expected, double tol,
                   const std::string& hint) {
  const Shape gs = shape_of(got), es = shape_of(expected);
  if (gs != es) return check(false, what, "shape " + shape_str(gs) + ", expected " + shape_str(es), hint);
  std::size_t wrong = 0;
  double worst = 0.0;
  std::string listed;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double a = got.data()[i], b = expected.data()[i];
    const double err = std::fabs(a - b);
    worst = std::max(worst, err);
    if (!(err <= tol * std::max(1.0, std::fabs(b))) && ++wrong <= 5)  // NaN counts as wrong
      listed += (wrong > 1 ? "; " : "") + index_str(gs, i) + " yours " + num(a) + ", expected " + num(b);
  }
  if (wrong == 0) return check(true, what, "all " + std::to_string(got.size()) + " entries within " + sci(tol) +
                                               " (max difference " + sci(worst) + ")");
  return check(false, what,
               std::to_string(wrong) + " of " + std::to_string(got.size()) + " entries differ: " + listed +
                   (wrong > 5 ? "; ..." : ""),
               hint);
}

bool Grader::mask(const std::string& what, const Mask& got, const Mask& expected, const std::string& hint) {
  const Shape gs = shape_of(got), es = shape_of(expected);
  if (gs != es) return check(false, what, "shape " + shape_str(gs) + ", expected " + shape_str(es), hint);
  std::size_t wrong = 0;
  std::string listed;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got.data()[i] != expected.data()[i] && ++wrong <= 5)
      listed += (wrong > 1 ? "; " : "") + index_str(gs, i) + " yours " + (got.data()[i] ? "true" : "false");
  if (wrong == 0) return check(true, what, "all " + std::to_string(got.size()) + " entries right");
  return check(false, what,
               std::to_string(wrong) + " of " + std::to_string(got.size()) + " entries wrong: " + listed +
                   (wrong > 5 ? "; ..." : ""),
               hint);
}

bool Grader::backward(const std::string& what, const EngineForward& forward, const Backward& answer,
                      const std::vector<Array<double>>& inputs, const std::vector<std::string>& names,
                      const std::string& hint) {
  // One random upstream gradient dL/dy: the answer and the engine back-propagate the same one.
  Generator gen(20261123);
  std::vector<Tensor<double>> leaves;
  for (const Array<double>& x : inputs) leaves.emplace_back(x, true);
  const Tensor<double> y = forward(leaves);
  const Array<double> upstream = random_normal<double>(shape_of(y.value()), gen);
  const std::vector<Array<double>> yours = answer(inputs, upstream);  // a stub throws NotAttempted here
  y.backward(upstream);

  bool shapes_ok = check(yours.size() == inputs.size(), what + ": one gradient per input",
                         std::to_string(yours.size()) + " returned, " + std::to_string(inputs.size()) + " expected", hint);
  bool ok = shapes_ok;
  for (std::size_t i = 0; shapes_ok && i < inputs.size(); ++i) {
    const Array<double> engine = leaves[i].grad();
    const bool same = close(what + ": d" + names[i] + " against the engine's backward", yours[i], engine, 1e-8, hint);
    shapes_ok = shapes_ok && shape_of(yours[i]) == shape_of(engine);
    ok = ok && same;
  }
  if (!shapes_ok) return check(false, what + ": central differences", "skipped until every gradient has its input's shape");

  // The engine's own gradient check (core/gradcheck) on the answer recorded as an op of the tape:
  // forward by the engine, backward by the answer, against central differences of the forward.
  const GradFn op = [&](const std::vector<Tensor<double>>& xs) {
    std::vector<Array<double>> values;
    for (const Tensor<double>& x : xs) values.push_back(x.value());
    Array<double> value;
    {
      NoGrad no_grad;
      value = forward(xs).value();
    }
    return record<double>("exercise", std::move(value), xs, [&answer, values](Node<double>& node) {
      const std::vector<Array<double>> grads = answer(values, node.grad);
      for (std::size_t i = 0; i < grads.size(); ++i) node.add_grad(i, grads[i]);
    });
  };
  std::vector<Tensor<double>> fresh;
  for (const Array<double>& x : inputs) fresh.emplace_back(x, true);
  const GradcheckResult r = gradcheck(op, fresh);
  std::string detail = "max relative error " + sci(r.max_rel_error) + " over " + std::to_string(r.checked) +
                       " entries (tolerance 1e-6)";
  if (!r.ok) {
    // "input 1 entry 7: ..." names the input by its position: say its name and index instead.
    std::size_t k = 0, entry = 0;
    if (std::sscanf(r.detail.c_str(), "input %zu entry %zu", &k, &entry) == 2 && k < names.size())
      detail += "; worst: d" + names[k] + index_str(shape_of(inputs[k]), entry) + r.detail.substr(r.detail.find(':'));
    else
      detail += "; " + r.detail;
  }
  return check(r.ok, what + ": central differences (core/gradcheck, as every op of the engine)", detail, hint) && ok;
}

}  // namespace attnlab::exercises
