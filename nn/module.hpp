// Module<T>: the base of every layer. A module owns named parameters (leaf tensors that require a
// gradient) and registers its sub-modules by address, so that
//   named_parameters()  ->  "encoder.layers.0.self_attn.in_proj_weight", ...
// walks the whole tree. Names follow PyTorch's, so weights can be exchanged by name.
//
// Conventions (decided):
//  * Order: a module's own parameters in registration order, then each child's, recursively, in
//    child registration order (PyTorch's order).
//  * A tensor registered twice (tied weights) is listed once, under its first name, and counted once.
//  * Modules are neither copyable nor movable: parents hold their children's addresses.
//  * Parameter handles kept as members (e.g. Linear::weight) share the node with the registry.
//    Change values in place (mutable_value(), under NoGrad); never rebind a member handle.
//  * A new module is in training mode; train(false) / eval() switch the whole subtree.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "core/tensor.hpp"

namespace attnlab::nn {

template <class T>
class Module {
 public:
  virtual ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  std::vector<std::pair<std::string, Tensor<T>>> named_parameters() const;
  std::vector<Tensor<T>> parameters() const;
  std::size_t parameter_count() const;  // number of scalars, tied tensors counted once

  // Sub-modules, hierarchically named ("layers.0.self_attn"); this module itself is not listed.
  std::vector<std::pair<std::string, Module<T>*>> named_modules() const;

  void train(bool on = true);  // recursive
  void eval() { train(false); }
  bool training() const { return training_; }

  // A table: one row per parameter (name, shape, count), then the total.
  std::string summary() const;
  void zero_grad();  // drop every parameter's gradient

 protected:
  Module() = default;
  // Stores the parameter (requires_grad set) and returns the registry's handle.
  // Throws ShapeError on an empty name, a dot in it, or a duplicate name.
  Tensor<T>& register_parameter(const std::string& name, Tensor<T> value);
  // child must outlive this module's use (a member, or owned by a unique_ptr member).
  void register_module(const std::string& name, Module<T>& child);

 private:
  void collect(const std::string& prefix, std::vector<std::pair<std::string, Tensor<T>>>& out,
               std::vector<const void*>& seen) const;
  std::vector<std::pair<std::string, Tensor<T>>> params_;
  std::vector<std::pair<std::string, Module<T>*>> children_;
  bool training_ = true;
};

}  // namespace attnlab::nn
