// Elementwise ops. Each forward is one line of math; each backward is its derivative times the
// upstream gradient dy, summed back over the axes that broadcasting stretched.
//
// Values follow IEEE like numpy: log(0) = -inf, sqrt(-1) = NaN, x / 0 = inf. Only shapes throw.
#include "core/ops/elementwise.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "core/broadcast.hpp"
#include "core/runtime/parallel.hpp"
#include "core/runtime/vmath.hpp"

namespace attnlab {

namespace {

template <class A>
bool has_shape(const A& x, const Shape& s) {
  return x.dimension() == s.size() && std::equal(s.begin(), s.end(), x.shape().begin());
}

template <class R, class F, class... A, std::size_t... I>
Array<R> map_impl(const Shape& out_shape, F& f, std::index_sequence<I...>, const A&... xs) {
  constexpr std::size_t N = sizeof...(A);
  Array<R> out = Array<R>::from_shape(out_shape);
  R* o = out.data();
  const std::size_t total = out.size();
  const std::tuple<const typename A::value_type*...> p(xs.data()...);
  // Same shapes: one flat loop over contiguous data, which the compiler vectorizes, cut into
  // chunks on the thread pool when large (each entry depends on its own inputs only, so the bits
  // do not depend on the thread count). Measured in bench_race's large encoder at 2 threads, where
  // ReLU, the residual adds and their backwards run over (2048, 2048) and (2048, 512) arrays.
  if ((has_shape(xs, out_shape) && ...)) {
    auto flat = [&](std::size_t first, std::size_t last) {
      for (std::size_t k = first; k < last; ++k) o[k] = f(std::get<I>(p)[k]...);
    };
    parallel_for(total, pass_grain, flat);
    return out;
  }
  if (total == 0) return out;
  // Broadcast: an odometer over the outer axes, a strided loop over the last one.
  const std::size_t nd = out_shape.size();  // >= 1: a 0-d output means every input is 0-d
  const std::array<std::vector<std::ptrdiff_t>, N> st{broadcast_strides(shape_of(xs), out_shape)...};
  const std::size_t inner = out_shape[nd - 1];
  const std::array<std::ptrdiff_t, N> is{st[I][nd - 1]...};
  const bool unit = ((is[I] == 1) && ...);
  std::array<std::ptrdiff_t, N> off{};
  std::vector<std::size_t> idx(nd, 0);
  for (std::size_t done = 0; done < total; done += inner, o += inner) {
    if (unit) {
      for (std::size_t j = 0; j < inner; ++j) o[j] = f(std::get<I>(p)[off[I] + j]...);
    } else {
      for (std::size_t j = 0; j < inner; ++j)
        o[j] = f(std::get<I>(p)[off[I] + static_cast<std::ptrdiff_t>(j) * is[I]]...);
    }
    for (std::size_t ax = nd - 1; ax-- > 0;) {
      ((off[I] += st[I][ax]), ...);
      if (++idx[ax] < out_shape[ax]) break;
      ((off[I] -= st[I][ax] * static_cast<std::ptrdiff_t>(out_shape[ax])), ...);
      idx[ax] = 0;
    }
  }
  return out;
}

// out[k] = f(x0[.], x1[.], ...) with every input broadcast to out_shape (numpy rules; the caller
// has checked that they broadcast).
template <class R, class F, class... A>
Array<R> map_to(const Shape& out_shape, F f, const A&... xs) {
  return map_impl<R>(out_shape, f, std::index_sequence_for<A...>{}, xs...);
}

template <class T>
Shape binary_shape(const char* op, const Tensor<T>& a, const Tensor<T>& b) {
  need(op, a, "left operand");
  need(op, b, "right operand");
  return broadcast_shapes(op, a.shape(), b.shape());
}

// dy * g(...) in the output's shape, for a backward that then sums it back to an input's shape.
template <class T, class F, class... A>
Array<T> grad_times(const Node<T>& n, F f, const A&... xs) {
  return map_to<T>(shape_of(n.grad), f, n.grad, xs...);
}

}  // namespace

// ---------------------------------------------------------------- binary, broadcasting

// y = a + b;  da = dy,  db = dy
template <class T>
Tensor<T> add(const Tensor<T>& a, const Tensor<T>& b) {
  const Shape s = binary_shape("add", a, b);
  Array<T> y = map_to<T>(s, [](T x, T z) { return x + z; }, a.value(), b.value());
  return record<T>("add", std::move(y), {&a, &b}, [](Node<T>& n) {
    if (n.needs_grad(0) && n.needs_grad(1)) n.add_grad_kept(0);
    else if (n.needs_grad(0)) n.add_grad_unbroadcast(0, n.take_grad());
    if (n.needs_grad(1)) n.add_grad_unbroadcast(1, n.take_grad());
  });
}

// y = a - b;  da = dy,  db = -dy
template <class T>
Tensor<T> sub(const Tensor<T>& a, const Tensor<T>& b) {
  const Shape s = binary_shape("sub", a, b);
  Array<T> y = map_to<T>(s, [](T x, T z) { return x - z; }, a.value(), b.value());
  return record<T>("sub", std::move(y), {&a, &b}, [](Node<T>& n) {
    if (n.needs_grad(0)) n.add_grad_kept(0);
    if (n.needs_grad(1)) n.add_grad_unbroadcast(1, grad_times(n, [](T g) { return -g; }));
  });
}

// y = a * b;  da = dy * b,  db = dy * a
template <class T>
Tensor<T> mul(const Tensor<T>& a, const Tensor<T>& b) {
  const Shape s = binary_shape("mul", a, b);
  Array<T> y = map_to<T>(s, [](T x, T z) { return x * z; }, a.value(), b.value());
  return record<T>("mul", std::move(y), {&a, &b}, [](Node<T>& n) {
    auto times = [](T g, T v) { return g * v; };
    if (n.needs_grad(0)) n.add_grad_unbroadcast(0, grad_times(n, times, n.input(1)));
    if (n.needs_grad(1)) n.add_grad_unbroadcast(1, grad_times(n, times, n.input(0)));
  });
}

// y = a / b;  da = dy / b,  db = -dy * a / b^2 = -dy * y / b
template <class T>
Tensor<T> div(const Tensor<T>& a, const Tensor<T>& b) {
  const Shape s = binary_shape("div", a, b);
  Array<T> y = map_to<T>(s, [](T x, T z) { return x / z; }, a.value(), b.value());
  return record<T>("div", std::move(y), {&a, &b}, [](Node<T>& n) {
    if (n.needs_grad(0))
      n.add_grad_unbroadcast(0, grad_times(n, [](T g, T v) { return g / v; }, n.input(1)));
    if (n.needs_grad(1))
      n.add_grad_unbroadcast(
          1, grad_times(n, [](T g, T y, T v) { return -g * y / v; }, n.value, n.input(1)));
  });
}

// y = a^e (defined for a > 0; elsewhere IEEE gives NaN, as numpy does);
// da = dy * e * a^(e-1),  de = dy * y * log(a)
template <class T>
Tensor<T> pow(const Tensor<T>& a, const Tensor<T>& e) {
  const Shape s = binary_shape("pow", a, e);
  Array<T> y = map_to<T>(s, [](T x, T p) { return std::pow(x, p); }, a.value(), e.value());
  return record<T>("pow", std::move(y), {&a, &e}, [](Node<T>& n) {
    if (n.needs_grad(0))
      n.add_grad_unbroadcast(0, grad_times(n, [](T g, T x, T p) { return g * p * std::pow(x, p - 1); },
                                           n.input(0), n.input(1)));
    if (n.needs_grad(1))
      n.add_grad_unbroadcast(1, grad_times(n, [](T g, T y, T x) { return g * y * std::log(x); },
                                           n.value, n.input(0)));
  });
}

// ---------------------------------------------------------------- scalar forms

// y = a + s;  da = dy
template <class T>
Tensor<T> add(const Tensor<T>& a, T s) {
  need("add", a);
  Array<T> y = map_to<T>(a.shape(), [s](T x) { return x + s; }, a.value());
  return record<T>("add", std::move(y), {&a}, [](Node<T>& n) { n.add_grad(0, n.take_grad()); });
}

// y = a - s;  da = dy
template <class T>
Tensor<T> sub(const Tensor<T>& a, T s) {
  need("sub", a);
  Array<T> y = map_to<T>(a.shape(), [s](T x) { return x - s; }, a.value());
  return record<T>("sub", std::move(y), {&a}, [](Node<T>& n) { n.add_grad(0, n.take_grad()); });
}

// y = s - a;  da = -dy
template <class T>
Tensor<T> sub(T s, const Tensor<T>& a) {
  need("sub", a);
  Array<T> y = map_to<T>(a.shape(), [s](T x) { return s - x; }, a.value());
  return record<T>("sub", std::move(y), {&a}, [](Node<T>& n) {
    n.add_grad(0, grad_times(n, [](T g) { return -g; }));
  });
}

// y = a * s;  da = dy * s
template <class T>
Tensor<T> mul(const Tensor<T>& a, T s) {
  need("mul", a);
  Array<T> y = map_to<T>(a.shape(), [s](T x) { return x * s; }, a.value());
  return record<T>("mul", std::move(y), {&a}, [s](Node<T>& n) {
    n.add_grad(0, grad_times(n, [s](T g) { return g * s; }));
  });
}

// y = a / s;  da = dy / s
template <class T>
Tensor<T> div(const Tensor<T>& a, T s) {
  need("div", a);
  Array<T> y = map_to<T>(a.shape(), [s](T x) { return x / s; }, a.value());
  return record<T>("div", std::move(y), {&a}, [s](Node<T>& n) {
    n.add_grad(0, grad_times(n, [s](T g) { return g / s; }));
  });
}

// y = s / a;  da = -dy * s / a^2 = -dy * y / a
template <class T>
Tensor<T> div(T s, const Tensor<T>& a) {
  need("div", a);
  Array<T> y = map_to<T>(a.shape(), [s](T x) { return s / x; }, a.value());
  return record<T>("div", std::move(y), {&a}, [](Node<T>& n) {
    n.add_grad(0, grad_times(n, [](T g, T y, T x) { return -g * y / x; }, n.value, n.input(0)));
  });
}

// ---------------------------------------------------------------- unary

// y = -a;  da = -dy
template <class T>
Tensor<T> neg(const Tensor<T>& a) {
  need("neg", a);
  Array<T> y = map_to<T>(a.shape(), [](T x) { return -x; }, a.value());
  return record<T>("neg", std::move(y), {&a}, [](Node<T>& n) {
    n.add_grad(0, grad_times(n, [](T g) { return -g; }));
  });
}

// y = e^a;  da = dy * y
template <class T>
Tensor<T> exp(const Tensor<T>& a) {
  need("exp", a);
  Array<T> y = map_to<T>(a.shape(), [](T x) { return std::exp(x); }, a.value());
  return record<T>("exp", std::move(y), {&a}, [](Node<T>& n) {
    n.add_grad(0, grad_times(n, [](T g, T y) { return g * y; }, n.value));
  });
}

// y = ln a;  da = dy / a
template <class T>
Tensor<T> log(const Tensor<T>& a) {
  need("log", a);
  Array<T> y = map_to<T>(a.shape(), [](T x) { return std::log(x); }, a.value());
  return record<T>("log", std::move(y), {&a}, [](Node<T>& n) {
    n.add_grad(0, grad_times(n, [](T g, T x) { return g / x; }, n.input(0)));
  });
}

// y = sqrt(a);  da = dy / (2 y)
template <class T>
Tensor<T> sqrt(const Tensor<T>& a) {
  need("sqrt", a);
  Array<T> y = map_to<T>(a.shape(), [](T x) { return std::sqrt(x); }, a.value());
  return record<T>("sqrt", std::move(y), {&a}, [](Node<T>& n) {
    n.add_grad(0, grad_times(n, [](T g, T y) { return g / (T(2) * y); }, n.value));
  });
}

// y = a^p;  da = dy * p * a^(p-1)  (not p * y / a, which is 0/0 at a = 0)
template <class T>
Tensor<T> pow(const Tensor<T>& a, T p) {
  need("pow", a);
  Array<T> y = map_to<T>(a.shape(), [p](T x) { return std::pow(x, p); }, a.value());
  return record<T>("pow", std::move(y), {&a}, [p](Node<T>& n) {
    n.add_grad(0, grad_times(n, [p](T g, T x) { return g * p * std::pow(x, p - T(1)); }, n.input(0)));
  });
}

// y = tanh a;  da = dy * (1 - y^2)
template <class T>
Tensor<T> tanh(const Tensor<T>& a) {
  need("tanh", a);
  // vmath: a vectorized tanh for float (about 1 ulp), std::tanh for double.
  Array<T> y = Array<T>::from_shape(a.shape());
  vmath::tanh_n(a.value().data(), y.data(), y.size());
  return record<T>("tanh", std::move(y), {&a}, [](Node<T>& n) {
    n.add_grad(0, grad_times(n, [](T g, T y) { return g * (T(1) - y * y); }, n.value));
  });
}

// y = 1 / (1 + e^-a);  da = dy * y * (1 - y).
// Stable: for a < 0 use e^a / (1 + e^a), so exp never sees a large positive argument.
template <class T>
Tensor<T> sigmoid(const Tensor<T>& a) {
  need("sigmoid", a);
  // vmath::sigmoid: that stable form for double; 1 / (1 + e^-a) with a vectorized exp for float,
  // where e^-a overflowing to inf gives exactly 0 and nothing cancels.
  Array<T> y = Array<T>::from_shape(a.shape());
  vmath::sigmoid_n(a.value().data(), y.data(), y.size());
  return record<T>("sigmoid", std::move(y), {&a}, [](Node<T>& n) {
    n.add_grad(0, grad_times(n, [](T g, T y) { return g * y * (T(1) - y); }, n.value));
  });
}

// y = max(a, 0);  da = dy where a > 0 (the subgradient 0 at the kink, as PyTorch)
template <class T>
Tensor<T> relu(const Tensor<T>& a) {
  need("relu", a);
  Array<T> y = map_to<T>(a.shape(), [](T x) { return x > T(0) ? x : T(0); }, a.value());
  return record<T>("relu", std::move(y), {&a}, [](Node<T>& n) {
    n.add_grad(0, grad_times(n, [](T g, T x) { return x > T(0) ? g : T(0); }, n.input(0)));
  });
}

// y = a where a > 0, slope * a elsewhere;  da = dy where a > 0, slope * dy elsewhere (the left
// slope at the kink, as PyTorch). A slope outside [0, 1) is refused: it would no longer be a
// leaky ReLU (1 is the identity, a negative slope folds the left half over).
template <class T>
Tensor<T> leaky_relu(const Tensor<T>& a, T slope) {
  need("leaky_relu", a);
  if (!(slope >= T(0) && slope < T(1)))
    throw std::invalid_argument("leaky_relu: slope " + std::to_string(double(slope)) + " is not in [0, 1)");
  Array<T> y = map_to<T>(a.shape(), [slope](T x) { return x > T(0) ? x : slope * x; }, a.value());
  return record<T>("leaky_relu", std::move(y), {&a}, [slope](Node<T>& n) {
    n.add_grad(0, grad_times(n, [slope](T g, T x) { return x > T(0) ? g : slope * g; }, n.input(0)));
  });
}

// Erf form:  y = a * Phi(a), Phi(a) = (1 + erf(a / sqrt 2)) / 2;
//            da = dy * (Phi(a) + a * phi(a)), phi(a) = e^(-a^2/2) / sqrt(2 pi).
// Tanh form: y = a/2 * (1 + t), t = tanh(u), u = sqrt(2/pi) (a + 0.044715 a^3);
//            da = dy * ((1 + t)/2 + a/2 * (1 - t^2) * sqrt(2/pi) (1 + 3 * 0.044715 a^2)).
constexpr std::size_t kGeluGrain = 1 << 14;  // entries per parallel chunk, at least

namespace {

// da = dy * slope, for the Erf form's slope = Phi(a) + a phi(a) kept by the forward.
template <class T>
void gelu_backward(Node<T>& n, const Array<T>& slope) {
  Array<T> dx = Array<T>::from_shape(n.value.shape());
  const T* g = n.grad.data();
  const T* d = slope.data();
  T* pdx = dx.data();
  parallel_for(dx.size(), kGeluGrain, [&](std::size_t b, std::size_t e) {
    for (std::size_t k = b; k < e; ++k) pdx[k] = g[k] * d[k];
  });
  n.add_grad(0, std::move(dx));
}

}  // namespace

template <class T>
Tensor<T> gelu(const Tensor<T>& a, GeluForm form) {
  need("gelu", a);
  const T sqrt_2_over_pi = T(0.79788456080286535588);
  const T c = T(0.044715);
  Array<T> y;
  if (form == GeluForm::Erf) {
    // y = a Phi(a) by vmath::gelu_n (vectorized for float, std::erf for double). When recording,
    // the same pass keeps dy/da = Phi(a) + a phi(a) while Phi and e^{-a^2/2} are at hand, so the
    // backward is one multiply (PyTorch recomputes Phi there; this costs one saved array, which
    // the form for a given-up input below keeps in that input's array).
    y = Array<T>::from_shape(a.shape());
    auto slope = will_record<T>({&a}) ? std::make_shared<Array<T>>(Array<T>::from_shape(a.shape()))
                                      : nullptr;
    const T* x = a.value().data();
    T* py = y.data();
    T* pd = slope ? slope->data() : nullptr;
    parallel_for(y.size(), kGeluGrain, [&](std::size_t b, std::size_t e) {
      vmath::gelu_n(x + b, py + b, pd ? pd + b : nullptr, e - b);
    });
    return record<T>("gelu", std::move(y), {&a}, [slope](Node<T>& n) { gelu_backward(n, *slope); });
  }
  y = map_to<T>(a.shape(), [=](T x) {
    return T(0.5) * x * (T(1) + std::tanh(sqrt_2_over_pi * (x + c * x * x * x)));
  }, a.value());
  return record<T>("gelu", std::move(y), {&a}, [=](Node<T>& n) {
    n.add_grad(0, grad_times(n, [=](T g, T x) {
      const T t = std::tanh(sqrt_2_over_pi * (x + c * x * x * x));
      const T du = sqrt_2_over_pi * (T(1) + T(3) * c * x * x);
      return g * (T(0.5) * (T(1) + t) + T(0.5) * x * (T(1) - t * t) * du);
    }, n.input(0)));
  });
}

// A sole owner's array is read by no recorded backward (none is recorded on it yet) and by no
// one after this call (the caller gave up its handle), so it can hold the slope: gelu_backward
// then reads it back as the node's input.
template <class T>
Tensor<T> gelu(Tensor<T>&& a, GeluForm form) {
  Tensor<T> owned = std::move(a);
  need("gelu", owned);
  if (form != GeluForm::Erf || !will_record<T>({&owned}) || owned.node().use_count() != 1)
    return gelu(owned, form);
  Array<T> y = Array<T>::from_shape(owned.shape());
  T* x = owned.mutable_value().data();
  T* py = y.data();
  parallel_for(y.size(), kGeluGrain, [&](std::size_t b, std::size_t e) {
    vmath::gelu_n_slope_over_input(x + b, py + b, e - b);
  });
  return record<T>("gelu", std::move(y), {&owned}, [](Node<T>& n) { gelu_backward(n, n.input(0)); });
}

// ---------------------------------------------------------------- selection

// y = cond ? a : b, all three broadcast together;  da = dy * cond,  db = dy * !cond
template <class T>
Tensor<T> where(const Mask& cond, const Tensor<T>& a, const Tensor<T>& b) {
  need("where", a, "first operand");
  need("where", b, "second operand");
  const Shape s = broadcast_shapes("where", shape_of(cond), broadcast_shapes("where", a.shape(), b.shape()));
  Array<T> y = map_to<T>(s, [](bool c, T x, T z) { return c ? x : z; }, cond, a.value(), b.value());
  return record<T>("where", std::move(y), {&a, &b}, [cond](Node<T>& n) {
    if (n.needs_grad(0))
      n.add_grad_unbroadcast(0, grad_times(n, [](T g, bool c) { return c ? g : T(0); }, cond));
    if (n.needs_grad(1))
      n.add_grad_unbroadcast(1, grad_times(n, [](T g, bool c) { return c ? T(0) : g; }, cond));
  });
}

// y = mask ? v : a;  da = dy where the mask is false, exactly 0 where it is true.
// The mask broadcasts to a's shape, never the other way: the output keeps a's shape.
template <class T>
Tensor<T> masked_fill(const Tensor<T>& a, const Mask& mask, T value) {
  need("masked_fill", a);
  if (!broadcasts_to(shape_of(mask), a.shape()))
    fail("masked_fill", "mask of shape ", shape_str(mask.shape()), " does not broadcast to the input's shape ",
         shape_str(a.shape()));
  Array<T> y = map_to<T>(a.shape(), [value](T x, bool m) { return m ? value : x; }, a.value(), mask);
  return record<T>("masked_fill", std::move(y), {&a}, [mask](Node<T>& n) {
    n.add_grad(0, grad_times(n, [](T g, bool m) { return m ? T(0) : g; }, mask));
  });
}

#define ATTNLAB_INSTANTIATE(T)                                                 \
  template Tensor<T> add<T>(const Tensor<T>&, const Tensor<T>&);               \
  template Tensor<T> sub<T>(const Tensor<T>&, const Tensor<T>&);               \
  template Tensor<T> mul<T>(const Tensor<T>&, const Tensor<T>&);               \
  template Tensor<T> div<T>(const Tensor<T>&, const Tensor<T>&);               \
  template Tensor<T> add<T>(const Tensor<T>&, T);                              \
  template Tensor<T> sub<T>(const Tensor<T>&, T);                              \
  template Tensor<T> sub<T>(T, const Tensor<T>&);                              \
  template Tensor<T> mul<T>(const Tensor<T>&, T);                              \
  template Tensor<T> div<T>(const Tensor<T>&, T);                              \
  template Tensor<T> div<T>(T, const Tensor<T>&);                              \
  template Tensor<T> neg<T>(const Tensor<T>&);                                 \
  template Tensor<T> exp<T>(const Tensor<T>&);                                 \
  template Tensor<T> log<T>(const Tensor<T>&);                                 \
  template Tensor<T> sqrt<T>(const Tensor<T>&);                                \
  template Tensor<T> pow<T>(const Tensor<T>&, T);                              \
  template Tensor<T> pow<T>(const Tensor<T>&, const Tensor<T>&);               \
  template Tensor<T> tanh<T>(const Tensor<T>&);                                \
  template Tensor<T> sigmoid<T>(const Tensor<T>&);                             \
  template Tensor<T> relu<T>(const Tensor<T>&);                                \
  template Tensor<T> leaky_relu<T>(const Tensor<T>&, T);                       \
  template Tensor<T> gelu<T>(const Tensor<T>&, GeluForm);                      \
  template Tensor<T> gelu<T>(Tensor<T>&&, GeluForm);                           \
  template Tensor<T> where<T>(const Mask&, const Tensor<T>&, const Tensor<T>&); \
  template Tensor<T> masked_fill<T>(const Tensor<T>&, const Mask&, T);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab
