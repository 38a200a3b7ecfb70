// repeat_heads: each row of x is g heads of d values; the output row is each head written r times
// in a row. Its backward reads each of those r copies of dy and adds them into the one head.
#include "core/ops/grouped_heads.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace attnlab {

template <class T>
Tensor<T> repeat_heads(const Tensor<T>& x, std::size_t heads, std::size_t repeats) {
  const char* who = "repeat_heads";
  const Shape in = need(who, x).shape();
  check(!in.empty(), who, "needs at least one axis, got a 0-D tensor");
  check(heads > 0 && repeats > 0, who, "heads and repeats must be positive, got ", heads, " and ", repeats);
  check(in.back() % heads == 0, who, "the last axis of ", shape_str(in), " is not ", heads, " heads of equal width");
  if (repeats == 1) return x;
  const std::size_t d = in.back() / heads, rows = shape_size(in) / std::max<std::size_t>(in.back(), 1);
  Shape out = in;
  out.back() = in.back() * repeats;
  Array<T> y = Array<T>::from_shape(out);
  const T* src = x.value().data();
  T* dst = y.data();
  for (std::size_t row = 0; row < rows; ++row)
    for (std::size_t i = 0; i < heads; ++i) {
      const T* head = src + (row * heads + i) * d;
      for (std::size_t s = 0; s < repeats; ++s, dst += d) std::copy(head, head + d, dst);
    }
  return record<T>(who, std::move(y), {&x}, [in, heads, repeats, d, rows](Node<T>& n) {
    Array<T> dx = xt::zeros<T>(in);
    const T* g = n.grad.data();
    T* o = dx.data();
    for (std::size_t row = 0; row < rows; ++row)
      for (std::size_t i = 0; i < heads; ++i) {
        T* head = o + (row * heads + i) * d;
        for (std::size_t s = 0; s < repeats; ++s, g += d)
          for (std::size_t k = 0; k < d; ++k) head[k] += g[k];
      }
    n.add_grad(0, std::move(dx));
  });
}

template Tensor<float> repeat_heads<float>(const Tensor<float>&, std::size_t, std::size_t);
template Tensor<double> repeat_heads<double>(const Tensor<double>&, std::size_t, std::size_t);

}  // namespace attnlab
