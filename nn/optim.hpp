// Optimizers over a list of parameters, matching torch.optim (1.13, single-tensor path) formula
// for formula, and global-norm gradient clipping.
//
//   SGD    d = g + wd*p;  b = d (first step) or momentum*b + (1-dampening)*d;
//          d = nesterov ? d + momentum*b : b;  p -= lr*d
//   Adam   g = g + wd*p (L2 folded into the gradient);  m = b1*m + (1-b1)*g;
//          v = b2*v + (1-b2)*g*g;  p -= lr/(1-b1^t) * m / (sqrt(v)/sqrt(1-b2^t) + eps)
//   AdamW  p *= 1 - lr*wd (decoupled decay), then the Adam update with the raw gradient.
//
// step() runs under NoGrad and updates values in place; parameters without a gradient are
// skipped, and their state (and Adam's per-parameter step count t) is left alone, as in torch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "io/npz.hpp"
#include "core/tensor.hpp"

namespace attnlab::nn {

template <class T>
class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // One update of every parameter that holds a gradient.
  void step();
  // Drop every parameter's gradient.
  void zero_grad();

  double lr() const { return lr_; }
  void set_lr(double lr);
  std::int64_t steps() const { return steps_; }  // step() calls so far
  const std::vector<Tensor<T>>& params() const { return params_; }
  const std::string& name() const { return name_; }

  // State as named arrays, for checkpoints: "lr" (0-d <f8), "step" (0-d <i8, step() calls),
  // and for each parameter that has state, "<buffer>/<name>" with the parameter's shape (e.g.
  // "exp_avg/encoder.layers.0.linear1.weight"), plus "step/<name>" (0-d <i8) for optimizers that
  // count per parameter. names[i] names parameter i (save_checkpoint takes them from the
  // model's named_parameters(), matching tensors). Keyed by name, state follows its parameter
  // whatever the order of the list it comes back to. There is no form without names: a name that
  // is only digits ("0", "3") reads as a position and is refused with a ShapeError that says to
  // take the names from the model's named_parameters().
  Npz state(const std::vector<std::string>& names) const;
  // Restore state(names). Everything is validated first (keys, names, shapes, types); on any
  // problem nothing changes and ShapeError lists every problem found, naming the parameter.
  // State keyed by position ("exp_avg.3", checkpoints written before parameter names) is refused
  // with a message that says how to go on.
  void load_state(const Npz& state, const std::vector<std::string>& names);

 protected:
  Optimizer(std::string name, std::vector<Tensor<T>> params, double lr,
            std::vector<std::string> buffers, bool per_param_steps);
  // Update parameter i, whose gradient exists; buffers(i) are allocated and zero-filled (with
  // fresh = true) on its first update.
  virtual void update(std::size_t i, bool fresh) = 0;

  Array<T>& buffer(std::size_t b, std::size_t i) { return buffers_[b][i]; }
  std::int64_t& param_step(std::size_t i) { return param_steps_[i]; }

 private:
  void check_names(const std::vector<std::string>& names) const;
  std::string name_;
  std::vector<Tensor<T>> params_;
  double lr_;
  std::int64_t steps_ = 0;
  std::vector<std::string> buffer_names_;
  std::vector<std::vector<Array<T>>> buffers_;  // [buffer][parameter]
  std::vector<bool> has_state_;
  bool per_param_steps_;
  std::vector<std::int64_t> param_steps_;
};

template <class T>
class SGD : public Optimizer<T> {
 public:
  SGD(std::vector<Tensor<T>> params, double lr, double momentum = 0.0, double weight_decay = 0.0,
      bool nesterov = false, double dampening = 0.0);

 private:
  void update(std::size_t i, bool fresh) override;
  double momentum_, weight_decay_, dampening_;
  bool nesterov_;
};

template <class T>
class Adam : public Optimizer<T> {
 public:
  Adam(std::vector<Tensor<T>> params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
       double eps = 1e-8, double weight_decay = 0.0);

 protected:
  Adam(const char* name, bool decoupled, std::vector<Tensor<T>> params, double lr, double beta1,
       double beta2, double eps, double weight_decay);

 private:
  void update(std::size_t i, bool fresh) override;
  double beta1_, beta2_, eps_, weight_decay_;
  bool decoupled_;
};

template <class T>
class AdamW : public Adam<T> {
 public:
  AdamW(std::vector<Tensor<T>> params, double lr = 1e-3, double beta1 = 0.9, double beta2 = 0.999,
        double eps = 1e-8, double weight_decay = 1e-2);
};

// Global-norm clipping, as torch.nn.utils.clip_grad_norm_: norm = sqrt(sum of every squared
// gradient entry); if the factor max_norm / (norm + 1e-6) is below 1, every gradient is
// multiplied by it. Returns the norm before clipping. Parameters without a gradient are ignored.
template <class T>
double clip_grad_norm(const std::vector<Tensor<T>>& params, double max_norm);

}  // namespace attnlab::nn
