// Elementwise ops. Each forward is one line of math; each backward is its derivative times the
// upstream gradient dy, summed back over the axes that broadcasting stretched.
#include "core/ops/elementwise.hpp"

#include "core/broadcast.hpp"

namespace attnlab {

namespace {
template <class T>
void check_broadcast(const char* op, const Tensor<T>& a, const Tensor<T>& b) {
  need(op, a, "left operand");
  need(op, b, "right operand");
  broadcast_shapes(op, a.shape(), b.shape());
}
}  // namespace

// y = a + b;  da = dy,  db = dy
template <class T>
Tensor<T> add(const Tensor<T>& a, const Tensor<T>& b) {
  check_broadcast("add", a, b);
  return record<T>("add", Array<T>(a.value() + b.value()), {&a, &b}, [](Node<T>& n) {
    n.add_grad_unbroadcast(0, Array<T>(n.grad));
    n.add_grad_unbroadcast(1, Array<T>(n.grad));
  });
}

// y = a * b;  da = dy * b,  db = dy * a
template <class T>
Tensor<T> mul(const Tensor<T>& a, const Tensor<T>& b) {
  check_broadcast("mul", a, b);
  return record<T>("mul", Array<T>(a.value() * b.value()), {&a, &b}, [](Node<T>& n) {
    if (n.needs_grad(0)) n.add_grad_unbroadcast(0, Array<T>(n.grad * n.input(1)));
    if (n.needs_grad(1)) n.add_grad_unbroadcast(1, Array<T>(n.grad * n.input(0)));
  });
}

#define ATTNLAB_INSTANTIATE(T)                                          \
  template Tensor<T> add<T>(const Tensor<T>&, const Tensor<T>&);        \
  template Tensor<T> mul<T>(const Tensor<T>&, const Tensor<T>&);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab
