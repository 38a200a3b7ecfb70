#include "core/tensor.hpp"

#include <cmath>

#include <xtensor/xbuilder.hpp>

#include "core/broadcast.hpp"
#include "core/runtime/allocator.hpp"
#include "core/runtime/parallel.hpp"
#include "core/runtime/profile.hpp"

namespace attnlab {

// ---------------------------------------------------------------- allocator policy

namespace {
const bool g_allocator_configured = [] {
  keep_freed_blocks_in_heap();  // core/runtime/allocator.hpp says why
  return true;
}();
}  // namespace

// ---------------------------------------------------------------- grad mode

namespace {
thread_local bool g_grad_enabled = true;
std::atomic<std::uint64_t> g_visit_stamp{0};
}  // namespace

bool grad_enabled() { return g_grad_enabled; }
NoGrad::NoGrad() : previous_(g_grad_enabled) { g_grad_enabled = false; }
NoGrad::~NoGrad() { g_grad_enabled = previous_; }

// ---------------------------------------------------------------- Node

namespace {
template <class T>
std::atomic<long>& live_counter() {
  static std::atomic<long> n{0};
  return n;
}
}  // namespace

template <class T>
Node<T>::Node() {
  live_counter<T>().fetch_add(1, std::memory_order_relaxed);
}

// Teardown without recursion: a chain of 100,000 nodes would otherwise destroy itself 100,000
// calls deep. Parents that only we own are unlinked here and freed one at a time.
template <class T>
Node<T>::~Node() {
  live_counter<T>().fetch_sub(1, std::memory_order_relaxed);
  if (parents.empty()) return;
  std::vector<NodePtr<T>> pending = std::move(parents);
  while (!pending.empty()) {
    NodePtr<T> p = std::move(pending.back());
    pending.pop_back();
    if (p && p.use_count() == 1) {
      for (auto& q : p->parents) pending.push_back(std::move(q));
      p->parents.clear();
      p->backward = nullptr;
    }
  }
}

template <class T>
long Node<T>::live() {
  return live_counter<T>().load(std::memory_order_relaxed);
}

template <class T>
void Node<T>::add_grad_unbroadcast(std::size_t i, Array<T>&& g) {
  Node& p = *parents[i];
  if (!p.requires_grad) return;
  p.accumulate(reduce_to_shape(std::move(g), shape_of(p.value)));
}

template <class T>
void Node<T>::add_grad_kept(std::size_t i) {
  Node& p = *parents[i];
  if (!p.requires_grad) return;
  if (p.value.shape() != grad.shape()) return add_grad_unbroadcast(i, Array<T>(grad));
  if (p.has_grad) return p.add_to_grad(grad);
  Array<T> copy = Array<T>::from_shape(grad.shape());
  T* out = copy.data();
  const T* in = grad.data();
  parallel_for(grad.size(), pass_grain, [out, in](std::size_t first, std::size_t last) {
    std::copy(in + first, in + last, out + first);
  });
  p.accumulate(std::move(copy));
}

template <class T>
void Node<T>::add_to_grad(const Array<T>& g) {
  if (g.shape() != grad.shape())
    throw GraphError(std::string(op) + ": backward produced a gradient of shape " + shape_str(g.shape()) +
                     " for a value of shape " + shape_str(value.shape()) + " (a bug in this op's backward)");
  T* out = grad.data();
  const T* in = g.data();
  // Each entry its own sum: chunks on the thread pool, the same bits at any thread count.
  parallel_for(g.size(), pass_grain, [out, in](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) out[i] += in[i];
  });
}

template <class T>
void Node<T>::check_grad_shape() const {
  if (grad.shape() != value.shape())
    throw GraphError(std::string(op) + ": backward produced a gradient of shape " +
                     shape_str(grad.shape()) + " for a value of shape " + shape_str(value.shape()) +
                     " (a bug in this op's backward)");
}

// ---------------------------------------------------------------- recording

template <class T>
bool will_record(std::initializer_list<const Tensor<T>*> inputs) {
  if (!g_grad_enabled) return false;
  for (auto* t : inputs)
    if (t->requires_grad()) return true;
  return false;
}

template <class T>
static Tensor<T> record_impl(const char* op, Array<T>&& value, bool any, std::size_t n,
                             const Tensor<T>* const* inputs, BackwardFn<T>&& fn) {
  if (OpProfiler* prof = OpProfiler::active()) prof->on_record(op);
  auto node = std::make_shared<Node<T>>();
  node->value = std::move(value);
  node->op = op;
  if (any && g_grad_enabled) {
    node->requires_grad = true;
    node->parents.reserve(n);
    for (std::size_t i = 0; i < n; ++i) node->parents.push_back(inputs[i]->node());
    node->backward = std::move(fn);
  }
  return Tensor<T>(std::move(node));
}

template <class T>
Tensor<T> record(const char* op, Array<T>&& value, std::initializer_list<const Tensor<T>*> inputs,
                 BackwardFn<T> fn) {
  bool any = false;
  for (auto* t : inputs) any = any || t->requires_grad();
  return record_impl(op, std::move(value), any, inputs.size(), inputs.begin(), std::move(fn));
}

template <class T>
Tensor<T> record(const char* op, Array<T>&& value, const std::vector<Tensor<T>>& inputs,
                 BackwardFn<T> fn) {
  std::vector<const Tensor<T>*> ptrs;
  ptrs.reserve(inputs.size());
  bool any = false;
  for (auto& t : inputs) {
    ptrs.push_back(&t);
    any = any || t.requires_grad();
  }
  return record_impl(op, std::move(value), any, ptrs.size(), ptrs.data(), std::move(fn));
}

template <class T>
const Tensor<T>& need(const char* op, const Tensor<T>& t, const char* what) {
  if (!t.defined()) fail(op, what, " is an empty tensor handle");
  return t;
}

// ---------------------------------------------------------------- Tensor

template <class T>
Tensor<T>::Tensor(Array<T> value, bool requires_grad) : node_(std::make_shared<Node<T>>()) {
  node_->value = std::move(value);
  node_->requires_grad = requires_grad;
}

template <class T>
Node<T>& Tensor<T>::checked() const {
  if (!node_) throw ShapeError("Tensor: use of an empty tensor handle");
  return *node_;
}

template <class T>
Tensor<T> Tensor<T>::scalar(T v, bool rg) {
  return Tensor(Array<T>(v), rg);
}
template <class T>
Tensor<T> Tensor<T>::zeros(const Shape& s, bool rg) {
  checked_size("zeros", s);
  return Tensor(Array<T>(xt::zeros<T>(s)), rg);
}
template <class T>
Tensor<T> Tensor<T>::ones(const Shape& s, bool rg) {
  checked_size("ones", s);
  return Tensor(Array<T>(xt::ones<T>(s)), rg);
}
template <class T>
Tensor<T> Tensor<T>::full(const Shape& s, T v, bool rg) {
  checked_size("full", s);
  Array<T> a = Array<T>::from_shape(s);
  a.fill(v);
  return Tensor(std::move(a), rg);
}
template <class T>
Tensor<T> Tensor<T>::arange(T stop) {
  return arange(T(0), stop, T(1));
}
template <class T>
Tensor<T> Tensor<T>::arange(T start, T stop, T step) {
  if (!std::isfinite(double(start)) || !std::isfinite(double(stop)) || !std::isfinite(double(step)))
    fail("arange", "start ", start, ", stop ", stop, " and step ", step, " must all be finite");
  if (step == T(0)) fail("arange", "step is zero");
  const double count = std::ceil((double(stop) - double(start)) / double(step));
  if (count > double(max_elements))
    fail("arange", "start ", start, ", stop ", stop, " and step ", step, " give more than 2^48 values");
  return Tensor(Array<T>(xt::arange<T>(start, stop, step)));
}
template <class T>
Tensor<T> Tensor<T>::randn(const Shape& s, Generator& gen, double mean, double std, bool rg) {
  return Tensor(random_normal<T>(s, gen, mean, std), rg);
}
template <class T>
Tensor<T> Tensor<T>::rand(const Shape& s, Generator& gen, double lo, double hi, bool rg) {
  return Tensor(random_uniform<T>(s, gen, lo, hi), rg);
}

template <class T>
const Array<T>& Tensor<T>::grad() const {
  const Node<T>& n = checked();
  if (!n.has_grad)
    throw GraphError(std::string("grad: no gradient has reached this ") + n.op +
                     " tensor (did backward() run through it? intermediates keep theirs only "
                     "after retain_grad())");
  return n.grad;
}

template <class T>
Array<T>& Tensor<T>::mutable_grad() const {
  grad();
  return node_->grad;
}

template <class T>
std::size_t Tensor<T>::dim(long axis) const {
  const Shape s = shape();
  return s[norm_axis("dim", axis, s)];
}

template <class T>
Tensor<T>& Tensor<T>::set_requires_grad(bool on) {
  Node<T>& n = checked();
  if (!n.is_leaf() && !on)
    fail("set_requires_grad", "cannot turn off the gradient of a non-leaf (", n.op,
         ") tensor; use detach()");
  n.requires_grad = on;
  return *this;
}

template <class T>
T Tensor<T>::item() const {
  const Array<T>& v = value();
  if (v.size() != 1) fail("item", "tensor of shape ", shape_str(v.shape()), " is not a single value");
  return *v.begin();
}

template <class T>
Tensor<T> Tensor<T>::detach() const {
  return Tensor(Array<T>(value()), false);
}

template <class T>
void Tensor<T>::zero_grad() const {
  Node<T>& n = checked();
  n.grad = Array<T>();
  n.has_grad = false;
}

template <class T>
void Tensor<T>::retain_grad() const {
  checked().retains_grad = true;
}

// ---------------------------------------------------------------- backward

namespace {

// Iterative depth-first post-order over the nodes that require a gradient: parents come before
// children, so walking it backwards visits every node after all its consumers.
template <class T>
std::vector<NodePtr<T>> topological_order(const NodePtr<T>& root) {
  const std::uint64_t stamp = ++g_visit_stamp;
  std::vector<NodePtr<T>> order;
  std::vector<std::pair<Node<T>*, std::size_t>> stack;
  std::vector<const NodePtr<T>*> owners;  // the shared_ptr that reached each stacked node
  root->visit = stamp;
  stack.push_back({root.get(), 0});
  owners.push_back(&root);
  while (!stack.empty()) {
    auto& [node, next] = stack.back();
    if (node->graph_freed)
      throw GraphError(std::string("backward: the graph through this ") + node->op +
                       " node was freed by an earlier backward(); run the forward again, or "
                       "pass retain_graph = true to the first backward()");
    if (next < node->parents.size()) {
      const NodePtr<T>& p = node->parents[next++];
      if (p->requires_grad && p->visit != stamp) {
        p->visit = stamp;
        stack.push_back({p.get(), 0});
        owners.push_back(&p);
      }
    } else {
      order.push_back(*owners.back());
      stack.pop_back();
      owners.pop_back();
    }
  }
  return order;
}

template <class T>
void run_backward(const NodePtr<T>& root, Array<T>&& seed, bool retain_graph) {
  if (!root->requires_grad)
    throw GraphError(std::string("backward: this ") + root->op +
                     " tensor does not require a gradient (no input had requires_grad, or it "
                     "was made under NoGrad)");
  std::vector<NodePtr<T>> order = topological_order(root);
  root->accumulate(std::move(seed));
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    NodePtr<T> node = std::move(*it);  // our reference goes when this iteration ends
    if (node->is_leaf()) continue;     // leaves keep (and accumulate) their gradient
    if (node->has_grad) {
      if (OpProfiler* prof = OpProfiler::active()) {
        const auto start = std::chrono::steady_clock::now();
        node->backward(*node);
        prof->on_backward(node->op, std::chrono::duration<double, std::milli>(
                                        std::chrono::steady_clock::now() - start).count());
      } else {
        node->backward(*node);
      }
    }
    if (!retain_graph) {
      node->backward = nullptr;  // frees saved activations
      node->parents.clear();     // frees inputs no one else holds
      node->graph_freed = true;
    }
    if (!node->retains_grad) {
      node->grad = Array<T>();
      node->has_grad = false;
    }
  }
}

}  // namespace

template <class T>
void Tensor<T>::backward(bool retain_graph) const {
  const Node<T>& n = checked();
  if (n.value.size() != 1)
    fail("backward", "called on a tensor of shape ", shape_str(n.value.shape()),
         " without an upstream gradient; pass one of that shape, or reduce to a scalar first");
  Array<T> seed = Array<T>::from_shape(n.value.shape());
  seed.fill(T(1));
  run_backward(node_, std::move(seed), retain_graph);
}

template <class T>
void Tensor<T>::backward(const Array<T>& upstream, bool retain_graph) const {
  const Node<T>& n = checked();
  if (upstream.shape() != n.value.shape())
    fail("backward", "upstream gradient has shape ", shape_str(upstream.shape()),
         " but the tensor has shape ", shape_str(n.value.shape()));
  run_backward(node_, Array<T>(upstream), retain_graph);
}

// ---------------------------------------------------------------- instantiation

#define ATTNLAB_INSTANTIATE(T)                                                                  \
  template struct Node<T>;                                                                      \
  template class Tensor<T>;                                                                     \
  template bool will_record<T>(std::initializer_list<const Tensor<T>*>);                        \
  template Tensor<T> record<T>(const char*, Array<T>&&, std::initializer_list<const Tensor<T>*>, \
                               BackwardFn<T>);                                                  \
  template Tensor<T> record<T>(const char*, Array<T>&&, const std::vector<Tensor<T>>&,          \
                               BackwardFn<T>);                                                  \
  template const Tensor<T>& need<T>(const char*, const Tensor<T>&, const char*);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab
