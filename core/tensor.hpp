// Tensor<T>: a cheap handle to a node of the tape.
//
// A node holds its value, its gradient (allocated on first contribution), whether it requires
// a gradient, its parents, and the backward function of the op that made it. Ops are free
// functions (core/ops/*.hpp) that compute a value and record a node whose backward reads
// dL/dy from node.grad and adds dL/dx into each parent with node.add_grad(i, ...).
//
// Backward semantics (decided, documented, tested):
//  * backward() walks an iterative topological order (no recursion: a chain of 100,000 ops works).
//  * Every contribution is added with +=: a tensor used twice receives the sum of both.
//  * Leaves (tensors you created with requires_grad) accumulate across backward() calls, like
//    PyTorch, until zero_grad().
//  * Once a node's backward has run, its intermediate gradient and its saved activations are
//    freed (memory stays flat across training steps). A second backward() through the same graph
//    throws GraphError, unless the first one was called with retain_graph = true, in which case
//    the second adds into the leaves again, exactly like PyTorch.
//  * Intermediate gradients are dropped after use; call retain_grad() on a tensor to keep its own.
//
// Rule for op authors: a backward closure may capture arrays it saved, never a Tensor that has
// parents (reach inputs through node.parents instead), so teardown of long graphs stays iterative.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/array.hpp"
#include "core/error.hpp"
#include "core/random.hpp"

namespace attnlab {

template <class T>
struct Node;
template <class T>
using NodePtr = std::shared_ptr<Node<T>>;
template <class T>
using BackwardFn = std::function<void(Node<T>&)>;

// Recording on/off for this thread. NoGrad records nothing while it lives (evaluation, optimizer
// steps, decoding).
bool grad_enabled();
class NoGrad {
 public:
  NoGrad();
  ~NoGrad();
  NoGrad(const NoGrad&) = delete;
  NoGrad& operator=(const NoGrad&) = delete;

 private:
  bool previous_;
};

template <class T>
struct Node {
  Array<T> value;
  Array<T> grad;               // dL/dvalue, valid when has_grad
  bool requires_grad = false;
  bool has_grad = false;
  bool retains_grad = false;   // keep an intermediate's gradient after backward
  bool graph_freed = false;    // backward already ran through here and released the graph
  std::uint64_t visit = 0;     // traversal stamp
  const char* op = "leaf";
  std::vector<NodePtr<T>> parents;
  BackwardFn<T> backward;      // empty for leaves

  Node();
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  bool is_leaf() const { return parents.empty() && !graph_freed; }
  // This node's gradient, for the last reader in its backward: moved out, since the tape drops an
  // intermediate's gradient as soon as its backward has run, or copied when retain_grad() keeps it.
  Array<T> take_grad() { return retains_grad ? Array<T>(grad) : std::move(grad); }
  const Array<T>& input(std::size_t i) const { return parents[i]->value; }
  bool needs_grad(std::size_t i) const { return parents[i]->requires_grad; }

  // dL/d(parent i) += g, where g already has the parent's shape. Does nothing if the parent
  // does not require a gradient.
  template <class E>
  void add_grad(std::size_t i, E&& g) {
    Node& p = *parents[i];
    if (p.requires_grad) p.accumulate(std::forward<E>(g));
  }
  // The same for g in the broadcast (output) shape: summed back to the parent's shape first.
  void add_grad_unbroadcast(std::size_t i, Array<T>&& g);
  // dL/d(parent i) += this node's own gradient, which stays for another parent (y = a + b gives
  // dy to both): added in place where the parent already has a gradient of that shape (a residual
  // stream's, which the layer's branch reached first), else copied, on the thread pool. The same
  // sums, in the same order, as adding a copy.
  void add_grad_kept(std::size_t i);

  // grad += g, allocating on first use. Checks the shape: a mismatch is a bug in an op's backward.
  template <class E>
  void accumulate(E&& g) {
    if (!has_grad) {
      grad = std::forward<E>(g);
      has_grad = true;
      check_grad_shape();
    } else if constexpr (std::is_same_v<std::decay_t<E>, Array<T>>) {
      add_to_grad(g);
    } else {
      add_to_grad(Array<T>(std::forward<E>(g)));
    }
  }
  void check_grad_shape() const;
  // grad += g for a g of grad's shape, in one pass: xtensor's `grad += g` builds the sum in a
  // temporary and copies it back (a memmove that was 4 % of a Bahdanau training step).
  void add_to_grad(const Array<T>& g);

  static long live();  // nodes alive right now, for the memory tests
};

template <class T>
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Array<T> value, bool requires_grad = false);
  explicit Tensor(NodePtr<T> node) : node_(std::move(node)) {}

  // Creation.
  static Tensor scalar(T v, bool requires_grad = false);
  static Tensor zeros(const Shape& shape, bool requires_grad = false);
  static Tensor ones(const Shape& shape, bool requires_grad = false);
  static Tensor full(const Shape& shape, T v, bool requires_grad = false);
  static Tensor arange(T stop);
  static Tensor arange(T start, T stop, T step = T(1));
  static Tensor randn(const Shape& shape, Generator& gen, double mean = 0.0, double std = 1.0,
                      bool requires_grad = false);
  static Tensor rand(const Shape& shape, Generator& gen, double lo = 0.0, double hi = 1.0,
                     bool requires_grad = false);

  bool defined() const { return static_cast<bool>(node_); }
  const Array<T>& value() const { return checked().value; }
  // In-place access for optimizers and initializers. Not recorded: do it under NoGrad.
  Array<T>& mutable_value() const { return checked().value; }
  const Array<T>& grad() const;       // throws GraphError if no gradient reached this tensor
  bool has_grad() const { return defined() && node_->has_grad; }
  Array<T>& mutable_grad() const;     // for clipping; throws if there is none

  Shape shape() const { return shape_of(value()); }
  std::size_t ndim() const { return value().dimension(); }
  std::size_t size() const { return value().size(); }
  std::size_t dim(long axis) const;
  bool requires_grad() const { return defined() && node_->requires_grad; }
  Tensor& set_requires_grad(bool on);
  const char* op() const { return checked().op; }

  T item() const;                     // the single value; throws unless size() == 1
  Tensor detach() const;              // same value (copied), no history, no grad
  void backward(bool retain_graph = false) const;  // from a scalar
  void backward(const Array<T>& upstream, bool retain_graph = false) const;
  void zero_grad() const;             // drop this tensor's gradient
  void retain_grad() const;           // keep this intermediate's gradient after backward

  const NodePtr<T>& node() const { return node_; }

 private:
  Node<T>& checked() const;
  NodePtr<T> node_;
};

// Record the result of an op. If grad mode is on and any input requires a gradient, the result
// keeps the inputs as parents and `fn` as its backward; otherwise it is a plain constant and
// `fn` is dropped unrun.
template <class T>
Tensor<T> record(const char* op, Array<T>&& value, std::initializer_list<const Tensor<T>*> inputs,
                 BackwardFn<T> fn);
template <class T>
Tensor<T> record(const char* op, Array<T>&& value, const std::vector<Tensor<T>>& inputs,
                 BackwardFn<T> fn);

// Whether an op's result will be recorded (lets ops skip saving state they would not need).
template <class T>
bool will_record(std::initializer_list<const Tensor<T>*> inputs);

// The op's name for error messages when an input is an empty handle.
template <class T>
const Tensor<T>& need(const char* op, const Tensor<T>& t, const char* what = "input");

}  // namespace attnlab
