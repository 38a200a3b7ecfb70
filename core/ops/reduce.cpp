// Reductions. Reducing over a set of axes is the transpose of broadcasting the result back:
// every input entry maps to one result entry, at an offset found with result strides that are 0
// along the reduced axes. One row-major walk over the input (visit) serves every forward and
// every backward here.
#include "core/ops/reduce.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <xtensor/xbuilder.hpp>

namespace attnlab {

namespace {

struct Plan {
  Shape in;                             // input shape
  Shape out;                            // result shape (with or without the kept 1s)
  std::vector<std::ptrdiff_t> ostride;  // per input axis: stride into the result, 0 if reduced
  std::size_t n = 1;                    // input entries per result entry
  // When the reduced axes are one contiguous run (one axis, trailing axes, all axes: nearly
  // always), the input is (outer, n, inner) with the result (outer, inner): plain loops.
  bool block = false;
  std::size_t outer = 1, inner = 1;
};

std::string axes_str(const Axes& axes) {
  std::string s = "(";
  for (std::size_t i = 0; i < axes.size(); ++i) s += (i ? "," : "") + std::to_string(axes[i]);
  return s + ")";
}

// Normalizes the axes (negative count from the end); out of range or repeated axes throw.
// An empty list reduces nothing, as numpy's axis=().
Plan make_plan(const char* op, const Shape& in, const Axes* axes, bool keepdims) {
  std::vector<bool> reduced(in.size(), axes == nullptr);
  if (axes) {
    for (long ax : *axes) {
      const std::size_t a = norm_axis(op, ax, in);
      if (reduced[a])
        fail(op, "axes ", axes_str(*axes), " name axis ", a, " twice (shape ", shape_str(in), ")");
      reduced[a] = true;
    }
  }
  Plan p;
  p.in = in;
  p.ostride.assign(in.size(), 0);
  std::ptrdiff_t stride = 1;
  for (std::size_t i = in.size(); i-- > 0;) {
    if (reduced[i]) {
      p.n *= in[i];
    } else {
      p.ostride[i] = stride;
      stride *= static_cast<std::ptrdiff_t>(in[i]);
    }
  }
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (!reduced[i]) p.out.push_back(in[i]);
    else if (keepdims) p.out.push_back(1);
  }
  const auto lo = std::find(reduced.begin(), reduced.end(), true);
  const auto hi = std::find(lo, reduced.end(), false);
  if (lo != reduced.end() && std::find(hi, reduced.end(), true) == reduced.end()) {
    p.block = true;
    for (auto it = reduced.begin(); it != lo; ++it) p.outer *= in[static_cast<std::size_t>(it - reduced.begin())];
    for (auto it = hi; it != reduced.end(); ++it) p.inner *= in[static_cast<std::size_t>(it - reduced.begin())];
  }
  return p;
}

// f(input offset, result offset) for every input entry, in row-major input order (so within each
// result entry's group, in that group's row-major order too).
template <class F>
void visit(const Plan& p, F f) {
  const std::size_t total = shape_size(p.in);
  if (total == 0) return;
  const std::size_t nd = p.in.size();
  if (nd == 0) {
    f(std::size_t(0), std::ptrdiff_t(0));
    return;
  }
  const std::size_t inner = p.in[nd - 1];
  const std::ptrdiff_t is = p.ostride[nd - 1];
  std::vector<std::size_t> idx(nd, 0);
  std::ptrdiff_t off = 0;
  for (std::size_t k = 0; k < total; k += inner) {
    for (std::size_t j = 0; j < inner; ++j) f(k + j, off + static_cast<std::ptrdiff_t>(j) * is);
    for (std::size_t ax = nd - 1; ax-- > 0;) {
      off += p.ostride[ax];
      if (++idx[ax] < p.in[ax]) break;
      off -= p.ostride[ax] * static_cast<std::ptrdiff_t>(p.in[ax]);
      idx[ax] = 0;
    }
  }
}

// y[r] += term(i, r) over each result entry r's group of input entries i (y starts at zero).
// A reduction into one entry keeps four partial sums in registers: no store-to-load chain
// through memory, and less rounding error than one running sum.
template <class T, class Term>
void accumulate(const Plan& p, T* y, Term term) {
  if (!p.block) {
    visit(p, [&](std::size_t i, std::ptrdiff_t r) { y[r] += term(i, static_cast<std::size_t>(r)); });
    return;
  }
  if (p.inner == 1) {
    for (std::size_t o = 0; o < p.outer; ++o) {
      const std::size_t base = o * p.n;
      T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
      std::size_t j = 0;
      for (; j + 4 <= p.n; j += 4) {
        s0 += term(base + j, o);
        s1 += term(base + j + 1, o);
        s2 += term(base + j + 2, o);
        s3 += term(base + j + 3, o);
      }
      for (; j < p.n; ++j) s0 += term(base + j, o);
      y[o] = (s0 + s1) + (s2 + s3);
    }
    return;
  }
  for (std::size_t o = 0; o < p.outer; ++o)
    for (std::size_t j = 0; j < p.n; ++j) {
      const std::size_t base = (o * p.n + j) * p.inner, r0 = o * p.inner;
      for (std::size_t k = 0; k < p.inner; ++k) y[r0 + k] += term(base + k, r0 + k);
    }
}

template <class T>
Array<T> sum_values(const Plan& p, const Array<T>& x, T scale) {
  Array<T> y = xt::zeros<T>(p.out);
  const T* xv = x.data();
  accumulate(p, y.data(), [xv](std::size_t i, std::size_t) { return xv[i]; });
  if (scale != T(1))
    for (auto& v : y) v *= scale;
  return y;
}

// dx[i] = scale * dy[r(i)]: the result's gradient broadcast back over the reduced axes.
template <class T>
Array<T> spread(const Plan& p, const Array<T>& dy, T scale) {
  Array<T> dx = Array<T>::from_shape(p.in);
  T* d = dx.data();
  const T* g = dy.data();
  visit(p, [&](std::size_t i, std::ptrdiff_t r) { d[i] = scale * g[r]; });
  return dx;
}

// ---- each reduction over a plan

// y = sum x over the group;  dx = dy (broadcast back)
template <class T>
Tensor<T> sum_impl(const Tensor<T>& a, const Plan& p) {
  return record<T>("sum", sum_values(p, a.value(), T(1)), {&a}, [p](Node<T>& n) {
    n.add_grad(0, spread(p, n.grad, T(1)));
  });
}

// y = sum x / n;  dx = dy / n
template <class T>
Tensor<T> mean_impl(const Tensor<T>& a, const Plan& p) {
  const T inv = T(1) / static_cast<T>(p.n);
  return record<T>("mean", sum_values(p, a.value(), inv), {&a}, [p, inv](Node<T>& n) {
    n.add_grad(0, spread(p, n.grad, inv));
  });
}

// y = max x over the group;  dx = dy at the group's first arg-max, 0 elsewhere.
// NaN propagates like numpy: a group holding a NaN has the (first) NaN as its max.
template <class T>
Tensor<T> max_impl(const Tensor<T>& a, const Plan& p) {
  const std::size_t m = shape_size(p.out);
  if (p.n == 0 && m > 0)
    fail("max", "cannot reduce over a zero-length axis of shape ", shape_str(p.in));
  constexpr std::size_t none = std::numeric_limits<std::size_t>::max();
  std::vector<std::size_t> arg(m, none);
  Array<T> y = Array<T>::from_shape(p.out);
  T* o = y.data();
  const T* xv = a.value().data();
  visit(p, [&](std::size_t i, std::ptrdiff_t r) {
    const T v = xv[i];
    if (arg[r] == none || (!std::isnan(o[r]) && (v > o[r] || std::isnan(v)))) {
      o[r] = v;
      arg[r] = i;
    }
  });
  if (!will_record<T>({&a})) return Tensor<T>(std::move(y));
  return record<T>("max", std::move(y), {&a}, [arg = std::move(arg), in = p.in](Node<T>& n) {
    Array<T> dx = xt::zeros<T>(in);
    const T* g = n.grad.data();
    for (std::size_t r = 0; r < arg.size(); ++r) dx.data()[arg[r]] += g[r];
    n.add_grad(0, std::move(dx));
  });
}

// y = sum (x - m)^2 / d with m the group mean, d = n (population) or n - 1 (unbiased);
// dx = dy * 2 (x - m) / d  (the path through m adds dy * sum(-2 (x - m)) / (n d) = 0).
template <class T>
Tensor<T> var_impl(const Tensor<T>& a, const Plan& p, bool unbiased) {
  const T d = static_cast<T>(p.n) - (unbiased ? T(1) : T(0));  // 0 gives inf/NaN, as numpy
  Array<T> m = sum_values(p, a.value(), T(1) / static_cast<T>(p.n));
  Array<T> y = xt::zeros<T>(p.out);
  const T* xv = a.value().data();
  const T* mv = m.data();
  accumulate(p, y.data(), [xv, mv](std::size_t i, std::size_t r) {
    const T c = xv[i] - mv[r];
    return c * c;
  });
  for (auto& v : y) v /= d;
  if (!will_record<T>({&a})) return Tensor<T>(std::move(y));
  return record<T>("var", std::move(y), {&a}, [p, d, m = std::move(m)](Node<T>& n) {
    Array<T> dx = Array<T>::from_shape(p.in);
    T* dv = dx.data();
    const T* x = n.input(0).data();
    const T* g = n.grad.data();
    const T* mv = m.data();
    const T s = T(2) / d;
    visit(p, [&](std::size_t i, std::ptrdiff_t r) { dv[i] = s * g[r] * (x[i] - mv[r]); });
    n.add_grad(0, std::move(dx));
  });
}

}  // namespace

template <class T>
Tensor<T> sum(const Tensor<T>& a) {
  return sum_impl(a, make_plan("sum", need("sum", a).shape(), nullptr, false));
}
template <class T>
Tensor<T> sum(const Tensor<T>& a, const Axes& axes, bool keepdims) {
  return sum_impl(a, make_plan("sum", need("sum", a).shape(), &axes, keepdims));
}
template <class T>
Tensor<T> mean(const Tensor<T>& a) {
  return mean_impl(a, make_plan("mean", need("mean", a).shape(), nullptr, false));
}
template <class T>
Tensor<T> mean(const Tensor<T>& a, const Axes& axes, bool keepdims) {
  return mean_impl(a, make_plan("mean", need("mean", a).shape(), &axes, keepdims));
}
template <class T>
Tensor<T> max(const Tensor<T>& a) {
  return max_impl(a, make_plan("max", need("max", a).shape(), nullptr, false));
}
template <class T>
Tensor<T> max(const Tensor<T>& a, const Axes& axes, bool keepdims) {
  return max_impl(a, make_plan("max", need("max", a).shape(), &axes, keepdims));
}
template <class T>
Tensor<T> var(const Tensor<T>& a, bool unbiased) {
  return var_impl(a, make_plan("var", need("var", a).shape(), nullptr, false), unbiased);
}
template <class T>
Tensor<T> var(const Tensor<T>& a, const Axes& axes, bool keepdims, bool unbiased) {
  return var_impl(a, make_plan("var", need("var", a).shape(), &axes, keepdims), unbiased);
}

#define ATTNLAB_INSTANTIATE(T)                                                 \
  template Tensor<T> sum<T>(const Tensor<T>&);                                 \
  template Tensor<T> sum<T>(const Tensor<T>&, const Axes&, bool);              \
  template Tensor<T> mean<T>(const Tensor<T>&);                                \
  template Tensor<T> mean<T>(const Tensor<T>&, const Axes&, bool);             \
  template Tensor<T> max<T>(const Tensor<T>&);                                 \
  template Tensor<T> max<T>(const Tensor<T>&, const Axes&, bool);              \
  template Tensor<T> var<T>(const Tensor<T>&, bool);                           \
  template Tensor<T> var<T>(const Tensor<T>&, const Axes&, bool, bool);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab
