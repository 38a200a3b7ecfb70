// Optimizer updates as raw loops over each parameter's contiguous data: one pass, no
// temporaries, the same operation order as torch's _single_tensor_* functions.
#include "nn/optim.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "core/runtime/parallel.hpp"

namespace attnlab::nn {

namespace {
void check_finite_nonneg(const std::string& who, const char* what, double v) {
  check(std::isfinite(v) && v >= 0.0, who, what, " must be finite and >= 0, got ", v);
}
}  // namespace

// ------------------------------------------------------------------ Optimizer

template <class T>
Optimizer<T>::Optimizer(std::string name, std::vector<Tensor<T>> params, double lr,
                        std::vector<std::string> buffers, bool per_param_steps)
    : name_(std::move(name)),
      params_(std::move(params)),
      lr_(lr),
      buffer_names_(std::move(buffers)),
      buffers_(buffer_names_.size(), std::vector<Array<T>>(params_.size())),
      has_state_(params_.size(), false),
      per_param_steps_(per_param_steps),
      param_steps_(params_.size(), 0) {
  check(!params_.empty(), name_, "empty parameter list");
  std::set<const Node<T>*> seen;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    check(params_[i].defined(), name_, "parameter ", i, " is an empty tensor handle");
    check(params_[i].requires_grad(), name_, "parameter ", i, " ", shape_str(params_[i].shape()),
          " does not require a gradient");
    check(seen.insert(params_[i].node().get()).second, name_, "parameter ", i,
          " appears more than once in the list");
  }
  set_lr(lr);
}

template <class T>
void Optimizer<T>::set_lr(double lr) {
  check_finite_nonneg(name_, "lr", lr);
  lr_ = lr;
}

template <class T>
void Optimizer<T>::step() {
  NoGrad no_grad;
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (!params_[i].has_grad()) continue;
    check(params_[i].grad().shape() == params_[i].value().shape(), name_, "parameter ", i,
          " has value ", shape_str(params_[i].shape()), " but gradient ",
          shape_str(params_[i].grad().shape()));
    const bool fresh = !has_state_[i];
    if (fresh) {
      for (auto& b : buffers_) b[i] = xt::zeros<T>(params_[i].shape());
      has_state_[i] = true;
    }
    ++param_steps_[i];
    update(i, fresh);
  }
  ++steps_;
}

template <class T>
void Optimizer<T>::zero_grad() {
  for (const auto& p : params_) p.zero_grad();
}

template <class T>
void Optimizer<T>::check_names(const std::vector<std::string>& names) const {
  check(names.size() == params_.size(), name_, "needs one name per parameter: ", params_.size(),
        " parameters, ", names.size(), " names");
  std::set<std::string> seen;
  for (std::size_t i = 0; i < names.size(); ++i) {
    check(!names[i].empty(), name_, "parameter ", i, " has an empty name");
    check(names[i].find_first_not_of("0123456789") != std::string::npos, name_, "parameter ", i, " is named '", names[i],
          "', which reads as a position: name the parameters as the model does (Module::named_parameters(), "
          "as save_checkpoint does), so that the state follows each parameter");
    check(seen.insert(names[i]).second, name_, "parameter name '", names[i], "' given twice");
  }
}

template <class T>
Npz Optimizer<T>::state(const std::vector<std::string>& names) const {
  check_names(names);
  Npz out;
  out.add("lr", NpyArray(Array<double>(lr_)));
  out.add("step", NpyArray(IndexArray(steps_)));
  for (std::size_t i = 0; i < params_.size(); ++i) {
    if (!has_state_[i]) continue;
    for (std::size_t b = 0; b < buffer_names_.size(); ++b)
      out.add(buffer_names_[b] + "/" + names[i], NpyArray(buffers_[b][i]));
    if (per_param_steps_) out.add("step/" + names[i], NpyArray(IndexArray(param_steps_[i])));
  }
  return out;
}

namespace {
// "exp_avg.3": the position-keyed form of state written before parameter names were used.
bool keyed_by_position(const std::string& key) {
  const std::size_t dot = key.rfind('.');
  if (key.find('/') != std::string::npos || dot == std::string::npos || dot + 1 == key.size())
    return false;
  return key.find_first_not_of("0123456789", dot + 1) == std::string::npos;
}
}  // namespace

template <class T>
void Optimizer<T>::load_state(const Npz& state, const std::vector<std::string>& names) {
  check_names(names);
  std::vector<std::string> problems;
  const auto scalar_of = [&](const std::string& key, DType want, auto& out) {
    const NpyArray& a = state.at(key);
    if (a.dtype() != want || a.size() != 1 || a.shape().size() != 0) {
      problems.push_back("'" + key + "' must be a 0-d " + dtype_descr(want) + " array, found " +
                         dtype_descr(a.dtype()) + " " + shape_str(a.shape()));
      return false;
    }
    if constexpr (std::is_same_v<std::decay_t<decltype(out)>, double>) out = a.template get<double>()();
    else out = a.template get<Index>()();
    return true;
  };
  double lr = lr_;
  std::int64_t steps = 0;
  if (!state.contains("lr")) problems.push_back("missing 'lr'");
  else if (scalar_of("lr", DType::Float64, lr) && !(std::isfinite(lr) && lr >= 0.0))
    problems.push_back("'lr' is " + std::to_string(lr));
  if (!state.contains("step")) problems.push_back("missing 'step'");
  else if (scalar_of("step", DType::Int64, steps) && steps < 0)
    problems.push_back("'step' is negative");

  // Per parameter: which kinds of state were found, then whether each set is complete.
  std::vector<std::string> kinds = buffer_names_;
  if (per_param_steps_) kinds.push_back("step");
  std::map<std::string, std::size_t> index_of;
  for (std::size_t i = 0; i < names.size(); ++i) index_of[names[i]] = i;
  std::vector<std::vector<bool>> found(params_.size(), std::vector<bool>(kinds.size(), false));
  std::vector<std::vector<Array<T>>> new_buffers(buffer_names_.size(),
                                                 std::vector<Array<T>>(params_.size()));
  std::vector<std::int64_t> new_steps(params_.size(), 0);
  std::vector<std::string> by_position;
  for (const auto& [key, array] : state.entries()) {
    if (key == "lr" || key == "step") continue;
    const std::size_t slash = key.find('/');
    if (slash == std::string::npos) {
      if (keyed_by_position(key)) by_position.push_back(key);
      else problems.push_back("unexpected '" + key + "'");
      continue;
    }
    const std::string kind_name = key.substr(0, slash), param = key.substr(slash + 1);
    const std::size_t kind = static_cast<std::size_t>(
        std::find(kinds.begin(), kinds.end(), kind_name) - kinds.begin());
    const auto it = index_of.find(param);
    if (kind == kinds.size()) {
      std::string known;
      for (const auto& k : kinds) known += (known.empty() ? "" : ", ") + k;
      problems.push_back("unexpected '" + key + "' (" + name_ + " keeps " +
                         (known.empty() ? "no state" : known) + " per parameter)");
      continue;
    }
    if (it == index_of.end()) {
      problems.push_back("unexpected '" + key + "': no parameter named '" + param + "'");
      continue;
    }
    const std::size_t i = it->second;
    found[i][kind] = true;
    if (kind == buffer_names_.size()) {  // "step/<name>"
      if (scalar_of(key, DType::Int64, new_steps[i]) && new_steps[i] < 1)
        problems.push_back("'" + key + "' must be >= 1");
    } else if (array.dtype() != DType::Float32 && array.dtype() != DType::Float64) {
      problems.push_back("'" + key + "' has dtype " + dtype_descr(array.dtype()) + ", not a float");
    } else if (array.shape() != params_[i].shape()) {
      problems.push_back("'" + key + "' has shape " + shape_str(array.shape()) + ", parameter '" +
                         param + "' has " + shape_str(params_[i].shape()));
    } else {
      new_buffers[kind][i] = array.template to<T>();
    }
  }
  if (!by_position.empty())
    problems.push_back(
        "'" + by_position.front() + "'" +
        (by_position.size() > 1 ? " and " + std::to_string(by_position.size() - 1) + " more are"
                                : " is") +
        " keyed by position, the format written before optimizer state was keyed by parameter "
        "name. Positions cannot be matched to parameters safely (the attention modules' "
        "parameters changed order with the names), so load the weights alone (load_checkpoint "
        "without an optimizer) and let the optimizer start afresh");
  std::vector<bool> has_state(params_.size(), false);
  for (std::size_t i = 0; i < params_.size(); ++i) {
    std::size_t n = 0;
    for (bool f : found[i]) n += f;
    has_state[i] = n > 0;
    if (n == 0 || n == kinds.size()) continue;
    for (std::size_t k = 0; k < kinds.size(); ++k)
      if (!found[i][k]) problems.push_back("missing '" + kinds[k] + "/" + names[i] + "'");
  }
  if (!problems.empty()) {
    std::ostringstream os;
    os << "cannot load optimizer state (" << problems.size() << " problem"
       << (problems.size() > 1 ? "s" : "") << "):";
    for (const auto& p : problems) os << "\n  " << p;
    fail(name_, os.str());
  }
  lr_ = lr;
  steps_ = steps;
  has_state_ = has_state;
  buffers_ = std::move(new_buffers);
  // Without per-parameter counts (SGD), the count is only "has state or not".
  for (std::size_t i = 0; i < params_.size(); ++i)
    param_steps_[i] = per_param_steps_ ? new_steps[i] : (has_state[i] ? steps : 0);
}

// ------------------------------------------------------------------ SGD

template <class T>
SGD<T>::SGD(std::vector<Tensor<T>> params, double lr, double momentum, double weight_decay,
            bool nesterov, double dampening)
    : Optimizer<T>("SGD", std::move(params), lr,
                   momentum != 0.0 ? std::vector<std::string>{"momentum_buffer"}
                                   : std::vector<std::string>{},
                   false),
      momentum_(momentum),
      weight_decay_(weight_decay),
      dampening_(dampening),
      nesterov_(nesterov) {
  check_finite_nonneg("SGD", "momentum", momentum);
  check_finite_nonneg("SGD", "weight_decay", weight_decay);
  check_finite_nonneg("SGD", "dampening", dampening);
  check(!nesterov || (momentum > 0.0 && dampening == 0.0), "SGD",
        "nesterov needs momentum > 0 and dampening 0, got momentum ", momentum, ", dampening ",
        dampening);
}

// d = g + wd*p;  b = d on the first step, else momentum*b + (1-dampening)*d;
// d = nesterov ? d + momentum*b : b;  p -= lr*d
template <class T>
void SGD<T>::update(std::size_t i, bool fresh) {
  const Tensor<T>& param = this->params()[i];
  T* p = param.mutable_value().data();
  const T* g = param.grad().data();
  const std::size_t n = param.size();
  const T lr = T(this->lr()), wd = T(weight_decay_), mom = T(momentum_),
          keep = T(1.0 - dampening_);
  if (momentum_ == 0.0) {
    for (std::size_t j = 0; j < n; ++j) p[j] += -lr * (g[j] + wd * p[j]);
    return;
  }
  T* b = this->buffer(0, i).data();
  for (std::size_t j = 0; j < n; ++j) {
    const T d = g[j] + wd * p[j];
    b[j] = fresh ? d : b[j] * mom + keep * d;
    p[j] += -lr * (nesterov_ ? d + mom * b[j] : b[j]);
  }
}

// ------------------------------------------------------------------ Adam, AdamW

template <class T>
Adam<T>::Adam(std::vector<Tensor<T>> params, double lr, double beta1, double beta2, double eps,
              double weight_decay)
    : Adam("Adam", false, std::move(params), lr, beta1, beta2, eps, weight_decay) {}

template <class T>
Adam<T>::Adam(const char* name, bool decoupled, std::vector<Tensor<T>> params, double lr,
              double beta1, double beta2, double eps, double weight_decay)
    : Optimizer<T>(name, std::move(params), lr, {"exp_avg", "exp_avg_sq"}, true),
      beta1_(beta1),
      beta2_(beta2),
      eps_(eps),
      weight_decay_(weight_decay),
      decoupled_(decoupled) {
  check(beta1 >= 0.0 && beta1 < 1.0, name, "beta1 must be in [0, 1), got ", beta1);
  check(beta2 >= 0.0 && beta2 < 1.0, name, "beta2 must be in [0, 1), got ", beta2);
  check_finite_nonneg(name, "eps", eps);
  check_finite_nonneg(name, "weight_decay", weight_decay);
}

template <class T>
AdamW<T>::AdamW(std::vector<Tensor<T>> params, double lr, double beta1, double beta2, double eps,
                double weight_decay)
    : Adam<T>("AdamW", true, std::move(params), lr, beta1, beta2, eps, weight_decay) {}

// Bias correction: m and v start at 0, so after t steps E[m] = (1-b1^t) E[g]; dividing by
// 1-b1^t (folded into the step size) and sqrt(1-b2^t) (applied to sqrt(v)) removes that bias.
template <class T>
void Adam<T>::update(std::size_t i, bool /*fresh*/) {
  const Tensor<T>& param = this->params()[i];
  T* p = param.mutable_value().data();
  const T* g = param.grad().data();
  T* m = this->buffer(0, i).data();
  T* v = this->buffer(1, i).data();
  const std::size_t n = param.size();
  const double lr = this->lr();
  const double t = static_cast<double>(this->param_step(i));
  const double step_size = lr / (1.0 - std::pow(beta1_, t));
  const T bc2_sqrt = T(std::sqrt(1.0 - std::pow(beta2_, t)));
  const T b1 = T(beta1_), b2 = T(beta2_), c1 = T(1.0 - beta1_), c2 = T(1.0 - beta2_);
  const T eps = T(eps_), neg_step = T(-step_size);
  const T l2 = decoupled_ ? T(0) : T(weight_decay_);
  const T shrink = T(1.0 - lr * weight_decay_);
  const bool decay = decoupled_ && weight_decay_ != 0.0;
  // The constants are captured by value and the arrays marked unaliased, so that the compiler
  // may keep the constants in registers and run eight entries per instruction: captured by
  // reference, every store to p could have changed them, and the loop ran one entry at a time
  // (27 ms a step for the large encoder's 7.3 M entries at one thread, against 6 vectorized).
  // The arithmetic and its order are unchanged, so the bits are too.
  auto entries = [=](std::size_t first, std::size_t last) {
    T* __restrict pr = p;
    const T* __restrict gr = g;
    T* __restrict mr = m;
    T* __restrict vr = v;
    for (std::size_t j = first; j < last; ++j) {
      T pj = pr[j];
      if (decay) pj *= shrink;
      const T gj = gr[j] + l2 * pj;
      const T mj = mr[j] * b1 + c1 * gj;
      const T vj = vr[j] * b2 + c2 * (gj * gj);
      mr[j] = mj;
      vr[j] = vj;
      pr[j] = pj + neg_step * (mj / (std::sqrt(vj) / bc2_sqrt + eps));
    }
  };
  // Every entry is its own update, so large parameters take chunks on the thread pool with the
  // same bits at any thread count (the large encoder's 512 x 2048 weights: 1 M entries each).
  parallel_for(n, pass_grain, entries);
}

// ------------------------------------------------------------------ clipping

template <class T>
double clip_grad_norm(const std::vector<Tensor<T>>& params, double max_norm) {
  check(std::isfinite(max_norm) && max_norm > 0.0, "clip_grad_norm",
        "max_norm must be finite and > 0, got ", max_norm);
  double sum = 0.0;  // in double even for float gradients: millions of squares
  for (const auto& p : params) {
    if (!p.has_grad()) continue;
    const T* g = p.grad().data();
    for (std::size_t j = 0, n = p.grad().size(); j < n; ++j) sum += double(g[j]) * double(g[j]);
  }
  const double norm = std::sqrt(sum);
  const double coef = max_norm / (norm + 1e-6);
  // NaN/inf norms give coef NaN/0 and poison the gradients, as in torch: the caller sees it.
  if (!(coef < 1.0) && !std::isnan(coef)) return norm;
  const T c = T(coef);
  for (const auto& p : params) {
    if (!p.has_grad()) continue;
    T* g = p.mutable_grad().data();
    for (std::size_t j = 0, n = p.grad().size(); j < n; ++j) g[j] *= c;
  }
  return norm;
}

#define ATTNLAB_INSTANTIATE(T)                                                  \
  template class Optimizer<T>;                                                  \
  template class SGD<T>;                                                        \
  template class Adam<T>;                                                       \
  template class AdamW<T>;                                                      \
  template double clip_grad_norm<T>(const std::vector<Tensor<T>>&, double);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab::nn
