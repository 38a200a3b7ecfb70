// Shape ops move values without changing them, so every backward moves dy back the same way:
// reshape reshapes it, permute applies the inverse permutation, slice / index_select / gather
// scatter-add it into zeros of the input's shape, concat / stack / split cut or paste it.
//
// Copies run over the (outer, n, inner) split of one axis (core/array.hpp) or, for permute,
// gather and broadcast_to, over an odometer of strided reads.
#include "core/ops/shape.hpp"

#include <algorithm>
#include <string>

#include <xtensor/xbuilder.hpp>

#include "core/broadcast.hpp"

namespace attnlab {

namespace {

using Strides = std::vector<std::ptrdiff_t>;

Strides row_major_strides(const Shape& s) {
  Strides st(s.size());
  std::ptrdiff_t stride = 1;
  for (std::size_t i = s.size(); i-- > 0;) {
    st[i] = stride;
    stride *= static_cast<std::ptrdiff_t>(s[i]);
  }
  return st;
}

// f(k, offset) for the k-th entry (row-major) of `shape`, where offset = sum_d index_d * st[d].
template <class F>
void visit_strided(const Shape& shape, const Strides& st, F f) {
  const std::size_t total = shape_size(shape);
  if (total == 0) return;
  const std::size_t nd = shape.size();
  if (nd == 0) {
    f(std::size_t(0), std::ptrdiff_t(0));
    return;
  }
  const std::size_t inner = shape[nd - 1];
  const std::ptrdiff_t is = st[nd - 1];
  std::vector<std::size_t> idx(nd, 0);
  std::ptrdiff_t off = 0;
  for (std::size_t k = 0; k < total; k += inner) {
    for (std::size_t j = 0; j < inner; ++j) f(k + j, off + static_cast<std::ptrdiff_t>(j) * is);
    for (std::size_t ax = nd - 1; ax-- > 0;) {
      off += st[ax];
      if (++idx[ax] < shape[ax]) break;
      off -= st[ax] * static_cast<std::ptrdiff_t>(shape[ax]);
      idx[ax] = 0;
    }
  }
}

// A contiguous array of `shape` whose k-th entry is src[offset(k)] under strides st.
template <class T>
Array<T> strided_copy(const Array<T>& src, const Shape& shape, const Strides& st) {
  Array<T> out = Array<T>::from_shape(shape);
  T* o = out.data();
  const T* s = src.data();
  visit_strided(shape, st, [&](std::size_t k, std::ptrdiff_t off) { o[k] = s[off]; });
  return out;
}

// The strides that read x (row-major, shape `s`) with its axes permuted: out axis i is in axis perm[i].
Strides permuted_strides(const Shape& s, const std::vector<std::size_t>& perm) {
  const Strides in = row_major_strides(s);
  Strides st(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) st[i] = in[perm[i]];
  return st;
}

// y = x with axes permuted;  dx = dy with the inverse permutation.
template <class T>
Tensor<T> permute_impl(const char* op, const Tensor<T>& a, const std::vector<std::size_t>& perm) {
  const Shape in = a.shape();
  Shape out(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) out[i] = in[perm[i]];
  Array<T> y = strided_copy(a.value(), out, permuted_strides(in, perm));
  std::vector<std::size_t> inv(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inv[perm[i]] = i;
  return record<T>(op, std::move(y), {&a}, [inv, in](Node<T>& n) {
    n.add_grad(0, strided_copy(n.grad, in, permuted_strides(shape_of(n.grad), inv)));
  });
}

// Normalize an axis against ndim + 1 (where unsqueeze and stack may insert a new axis).
std::size_t insert_axis(const char* op, long axis, const Shape& shape) {
  const long nd = static_cast<long>(shape.size()) + 1;
  const long a = axis < 0 ? axis + nd : axis;
  if (a < 0 || a >= nd)
    fail(op, "axis ", axis, " out of range for inserting a new axis into shape ", shape_str(shape));
  return static_cast<std::size_t>(a);
}

// y = x with a new shape (same values, same order);  dx = dy with x's shape.
template <class T>
Tensor<T> reshape_to(const char* op, const Tensor<T>& a, const Shape& out) {
  Array<T> y = a.value();
  y.reshape(out);
  return record<T>(op, std::move(y), {&a}, [in = a.shape()](Node<T>& n) {
    Array<T> g = n.grad;
    g.reshape(in);
    n.add_grad(0, std::move(g));
  });
}

// The piece [start, start + step * count) of an axis as contiguous runs: per outer block, `runs`
// runs of `length` elements, run j starting at element (o * n + start + j * step) * inner. With
// step 1 the count entries of each outer block are one run (one copy, not count copies of inner
// elements: slicing the last axis, inner is 1).
struct RangeRuns {
  AxisSplit s;
  std::size_t start, step, runs, length;
  RangeRuns(const Shape& in, std::size_t axis, std::size_t start_, std::size_t count, std::size_t step_)
      : s(split_at(in, axis)), start(start_), step(step_), runs(step_ == 1 ? 1 : count),
        length(step_ == 1 ? count * s.inner : s.inner) {}
  std::size_t at(std::size_t o, std::size_t j) const { return (o * s.n + start + j * step) * s.inner; }
};

// The piece [start, start + step * count) of x along an axis.
template <class T>
Array<T> take_range(const Array<T>& x, std::size_t axis, std::size_t start, std::size_t count,
                    std::size_t step) {
  const Shape in = shape_of(x);
  const RangeRuns r(in, axis, start, count, step);
  Shape out = in;
  out[axis] = count;
  Array<T> y = Array<T>::from_shape(out);
  T* o = y.data();
  for (std::size_t i = 0; i < r.s.outer; ++i)
    for (std::size_t j = 0; j < r.runs; ++j, o += r.length) {
      const T* src = x.data() + r.at(i, j);
      std::copy(src, src + r.length, o);
    }
  return y;
}

// dst at the places of the range += g (g laid out as take_range gives it).
template <class T>
void add_range(T* dst, const T* g, const RangeRuns& r) {
  for (std::size_t i = 0; i < r.s.outer; ++i)
    for (std::size_t j = 0; j < r.runs; ++j, g += r.length) {
      T* d = dst + r.at(i, j);
      for (std::size_t k = 0; k < r.length; ++k) d[k] += g[k];
    }
}

// The transpose of take_range: g pasted (added) into zeros of `in` at the same places.
template <class T>
Array<T> put_range(const Array<T>& g, const Shape& in, std::size_t axis, std::size_t start,
                   std::size_t count, std::size_t step) {
  Array<T> dx = xt::zeros<T>(in);
  add_range(dx.data(), g.data(), RangeRuns(in, axis, start, count, step));
  return dx;
}

// dL/d(parent i) += put_range(g, ...), without the full-size temporary once the parent already
// holds a gradient: only the range is touched. A sequence model that slices step t out of a
// (B, L, ...) tensor at every step would otherwise pay O(L) full-size zero fills and additions
// per step, O(L^2) in all. The first contribution still allocates (zeros plus the range).
template <class T>
void add_grad_range(Node<T>& n, std::size_t i, const Shape& in, std::size_t axis,
                    std::size_t start, std::size_t count, std::size_t step) {
  Node<T>& p = *n.parents[i];
  if (!p.requires_grad) return;
  if (!p.has_grad) {
    p.accumulate(put_range(n.grad, in, axis, start, count, step));
    return;
  }
  p.check_grad_shape();
  add_range(p.grad.data(), n.grad.data(), RangeRuns(in, axis, start, count, step));
}

}  // namespace

// ---------------------------------------------------------------- views of the same values

template <class T>
Tensor<T> reshape(const Tensor<T>& a, const std::vector<long>& shape) {
  const Shape in = need("reshape", a).shape();
  std::string want = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) want += (i ? "," : "") + std::to_string(shape[i]);
  want += ")";
  Shape out(shape.size());
  std::size_t known = 1;
  long inferred = -1;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (inferred >= 0) fail("reshape", "more than one -1 in ", want);
      inferred = static_cast<long>(i);
    } else if (shape[i] < 0) {
      fail("reshape", "negative size ", shape[i], " in ", want);
    } else {
      out[i] = static_cast<std::size_t>(shape[i]);
    }
  }
  {  // the sizes given, without the inferred one, must not wrap when multiplied
    Shape given = out;
    if (inferred >= 0) given[static_cast<std::size_t>(inferred)] = 1;
    known = checked_size("reshape", given);
  }
  const std::size_t size = shape_size(in);
  if (inferred >= 0) {
    if (known == 0 || size % known != 0)
      fail("reshape", "cannot reshape ", shape_str(in), " (", size, " values) into ", want);
    out[static_cast<std::size_t>(inferred)] = size / known;
  } else if (known != size) {
    fail("reshape", "cannot reshape ", shape_str(in), " (", size, " values) into ", want, " (",
         known, " values)");
  }
  return reshape_to("reshape", a, out);
}

template <class T>
Tensor<T> unsqueeze(const Tensor<T>& a, long axis) {
  Shape s = need("unsqueeze", a).shape();
  s.insert(s.begin() + static_cast<std::ptrdiff_t>(insert_axis("unsqueeze", axis, s)), 1);
  return reshape_to("unsqueeze", a, s);
}

template <class T>
Tensor<T> squeeze(const Tensor<T>& a, long axis) {
  Shape s = need("squeeze", a).shape();
  const std::size_t ax = norm_axis("squeeze", axis, s);
  if (s[ax] != 1) fail("squeeze", "axis ", axis, " of shape ", shape_str(s), " has length ", s[ax], ", not 1");
  s.erase(s.begin() + static_cast<std::ptrdiff_t>(ax));
  return reshape_to("squeeze", a, s);
}

template <class T>
Tensor<T> transpose(const Tensor<T>& a, long axis0, long axis1) {
  const Shape s = need("transpose", a).shape();
  const std::size_t i = norm_axis("transpose", axis0, s), j = norm_axis("transpose", axis1, s);
  std::vector<std::size_t> perm(s.size());
  for (std::size_t k = 0; k < perm.size(); ++k) perm[k] = k;
  std::swap(perm[i], perm[j]);
  return permute_impl("transpose", a, perm);
}

template <class T>
Tensor<T> permute(const Tensor<T>& a, const std::vector<std::size_t>& perm) {
  const Shape s = need("permute", a).shape();
  std::string p = "(";
  for (std::size_t i = 0; i < perm.size(); ++i) p += (i ? "," : "") + std::to_string(perm[i]);
  p += ")";
  if (perm.size() != s.size())
    fail("permute", "permutation ", p, " has ", perm.size(), " axes but the shape ", shape_str(s),
         " has ", s.size());
  std::vector<bool> seen(s.size(), false);
  for (std::size_t v : perm) {
    if (v >= s.size() || seen[v]) fail("permute", p, " is not a permutation of the axes of ", shape_str(s));
    seen[v] = true;
  }
  return permute_impl("permute", a, perm);
}

// y = x broadcast to `shape` (numpy rules, one way);  dx = dy summed over the stretched axes.
template <class T>
Tensor<T> broadcast_to(const Tensor<T>& a, const Shape& shape) {
  const Shape in = need("broadcast_to", a).shape();
  if (!broadcasts_to(in, shape))
    fail("broadcast_to", "shape ", shape_str(in), " does not broadcast to ", shape_str(shape));
  return record<T>("broadcast_to", strided_copy(a.value(), shape, broadcast_strides(in, shape)), {&a}, [](Node<T>& n) {
    n.add_grad_unbroadcast(0, Array<T>(n.grad));
  });
}

// ---------------------------------------------------------------- pieces along one axis

// y = x[..., start:stop:step, ...];  dx = dy pasted into zeros at those positions.
template <class T>
Tensor<T> slice(const Tensor<T>& a, long axis, long start, long stop, long step) {
  const Shape in = need("slice", a).shape();
  const std::size_t ax = norm_axis("slice", axis, in);
  if (step <= 0) fail("slice", "step must be positive, got ", step);
  // Python rules: negative bounds count from the end, then clamp to [0, n].
  const long n = static_cast<long>(in[ax]);
  auto clamp = [n](long v) { return std::min(std::max(v < 0 ? v + n : v, 0L), n); };
  const long lo = clamp(start), hi = clamp(stop);
  const std::size_t count = hi > lo ? static_cast<std::size_t>((hi - lo + step - 1) / step) : 0;
  const std::size_t first = static_cast<std::size_t>(lo), stride = static_cast<std::size_t>(step);
  Array<T> y = take_range(a.value(), ax, first, count, stride);
  return record<T>("slice", std::move(y), {&a}, [=](Node<T>& n) {
    add_grad_range(n, 0, in, ax, first, count, stride);
  });
}

// Pieces of the given sizes along axis; each piece's dx is its dy pasted into zeros of x's shape.
template <class T>
std::vector<Tensor<T>> split(const Tensor<T>& a, const std::vector<std::size_t>& sizes, long axis) {
  const Shape in = need("split", a).shape();
  const std::size_t ax = norm_axis("split", axis, in);
  std::size_t total = 0;
  std::string list = "(";
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    total += sizes[i];
    list += (i ? "," : "") + std::to_string(sizes[i]);
  }
  list += ")";
  if (total != in[ax])
    fail("split", "sizes ", list, " add up to ", total, " but axis ", axis, " of shape ", shape_str(in),
         " has length ", in[ax]);
  std::vector<Tensor<T>> pieces;
  pieces.reserve(sizes.size());
  std::size_t start = 0;
  for (std::size_t size : sizes) {
    pieces.push_back(record<T>("split", take_range(a.value(), ax, start, size, 1), {&a},
                               [=](Node<T>& n) { add_grad_range(n, 0, in, ax, start, size, 1); }));
    start += size;
  }
  return pieces;
}

// y = the xs laid end to end along axis;  dx_i = the block of dy where x_i went.
template <class T>
Tensor<T> concat(const std::vector<Tensor<T>>& xs, long axis) {
  if (xs.empty()) fail("concat", "empty list of tensors");
  for (std::size_t i = 0; i < xs.size(); ++i)
    need("concat", xs[i], ("tensor " + std::to_string(i)).c_str());
  const Shape first = xs[0].shape();
  const std::size_t ax = norm_axis("concat", axis, first);
  Shape out = first;
  out[ax] = 0;
  std::vector<std::size_t> lens(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) {
    Shape s = xs[i].shape();
    bool ok = s.size() == first.size();
    for (std::size_t d = 0; ok && d < s.size(); ++d) ok = d == ax || s[d] == first[d];
    if (!ok)
      fail("concat", "tensor ", i, " has shape ", shape_str(s), " but tensor 0 has shape ",
           shape_str(first), " (they must match on every axis but ", axis, ")");
    lens[i] = s[ax];
    out[ax] += s[ax];
  }
  const AxisSplit so = split_at(out, ax);
  Array<T> y = Array<T>::from_shape(out);
  std::size_t at = 0;  // where x_i starts along the axis
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const std::size_t block = lens[i] * so.inner;
    const T* src = xs[i].value().data();
    for (std::size_t o = 0; o < so.outer; ++o, src += block)
      std::copy(src, src + block, y.data() + (o * so.n + at) * so.inner);
    at += lens[i];
  }
  return record<T>("concat", std::move(y), xs, [ax, lens](Node<T>& n) {
    std::size_t at = 0;
    for (std::size_t i = 0; i < lens.size(); ++i) {
      if (n.needs_grad(i)) n.add_grad(i, take_range(n.grad, ax, at, lens[i], 1));
      at += lens[i];
    }
  });
}

// y[..., i, ...] = x_i along a new axis;  dx_i = dy[..., i, ...].
template <class T>
Tensor<T> stack(const std::vector<Tensor<T>>& xs, long axis) {
  if (xs.empty()) fail("stack", "empty list of tensors");
  for (std::size_t i = 0; i < xs.size(); ++i)
    need("stack", xs[i], ("tensor " + std::to_string(i)).c_str());
  const Shape first = xs[0].shape();
  for (std::size_t i = 1; i < xs.size(); ++i)
    if (xs[i].shape() != first)
      fail("stack", "tensor ", i, " has shape ", shape_str(xs[i].shape()), " but tensor 0 has shape ",
           shape_str(first));
  const std::size_t ax = insert_axis("stack", axis, first);
  Shape out = first;
  out.insert(out.begin() + static_cast<std::ptrdiff_t>(ax), xs.size());
  const AxisSplit so = split_at(out, ax);
  Array<T> y = Array<T>::from_shape(out);
  for (std::size_t i = 0; i < xs.size(); ++i) {
    const T* src = xs[i].value().data();
    for (std::size_t o = 0; o < so.outer; ++o, src += so.inner)
      std::copy(src, src + so.inner, y.data() + (o * so.n + i) * so.inner);
  }
  return record<T>("stack", std::move(y), xs, [ax, first](Node<T>& n) {
    for (std::size_t i = 0; i < n.parents.size(); ++i) {
      if (!n.needs_grad(i)) continue;
      Array<T> g = take_range(n.grad, ax, i, 1, 1);
      g.reshape(first);
      n.add_grad(i, std::move(g));
    }
  });
}

// ---------------------------------------------------------------- indexing

// y[o, j..., i] = x[o, idx[j...], i] over the (outer, n, inner) split of axis;
// dx[o, idx[j], i] += dy[o, j, i]: repeated indices accumulate.
template <class T>
Tensor<T> index_select(const Tensor<T>& a, long axis, const IndexArray& idx) {
  const Shape in = need("index_select", a).shape();
  const std::size_t ax = norm_axis("index_select", axis, in);
  for (Index v : idx)
    if (v < 0 || static_cast<std::size_t>(v) >= in[ax])
      fail("index_select", "index ", v, " out of range for axis ", axis, " of length ", in[ax],
           " (shape ", shape_str(in), ")");
  Shape out(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(ax));
  out.insert(out.end(), idx.shape().begin(), idx.shape().end());
  out.insert(out.end(), in.begin() + static_cast<std::ptrdiff_t>(ax) + 1, in.end());
  const AxisSplit s = split_at(in, ax);
  const std::size_t m = idx.size();
  const Index* iv = idx.data();
  Array<T> y = Array<T>::from_shape(out);
  T* o = y.data();
  const T* xv = a.value().data();
  for (std::size_t i = 0; i < s.outer; ++i)
    for (std::size_t j = 0; j < m; ++j, o += s.inner) {
      const T* src = xv + (i * s.n + static_cast<std::size_t>(iv[j])) * s.inner;
      std::copy(src, src + s.inner, o);
    }
  if (!will_record<T>({&a})) return Tensor<T>(std::move(y));
  return record<T>("index_select", std::move(y), {&a}, [in, s, idx](Node<T>& n) {
    Array<T> dx = xt::zeros<T>(in);
    const T* g = n.grad.data();
    const Index* iv = idx.data();
    for (std::size_t i = 0; i < s.outer; ++i)
      for (std::size_t j = 0; j < idx.size(); ++j, g += s.inner) {
        T* dst = dx.data() + (i * s.n + static_cast<std::size_t>(iv[j])) * s.inner;
        for (std::size_t k = 0; k < s.inner; ++k) dst[k] += g[k];
      }
    n.add_grad(0, std::move(dx));
  });
}

// y[p] = x[p with its axis coordinate replaced by idx[p]] for every position p of idx;
// dx[that position] += dy[p].
template <class T>
Tensor<T> gather(const Tensor<T>& a, long axis, const IndexArray& idx) {
  const Shape in = need("gather", a).shape();
  const std::size_t ax = norm_axis("gather", axis, in);
  const Shape is = shape_of(idx);
  bool ok = is.size() == in.size();
  for (std::size_t d = 0; ok && d < in.size(); ++d) ok = d == ax || is[d] <= in[d];
  if (!ok)
    fail("gather", "index of shape ", shape_str(is), " does not fit input of shape ", shape_str(in),
         " (same rank, no longer than the input on every axis but ", axis, ")");
  for (Index v : idx)
    if (v < 0 || static_cast<std::size_t>(v) >= in[ax])
      fail("gather", "index ", v, " out of range for axis ", axis, " of length ", in[ax]);
  Strides st = row_major_strides(in);
  const std::ptrdiff_t sa = st[ax];
  st[ax] = 0;  // the axis coordinate comes from idx
  Array<T> y = Array<T>::from_shape(is);
  T* o = y.data();
  const T* xv = a.value().data();
  const Index* iv = idx.data();
  visit_strided(is, st, [&](std::size_t k, std::ptrdiff_t off) { o[k] = xv[off + iv[k] * sa]; });
  if (!will_record<T>({&a})) return Tensor<T>(std::move(y));
  return record<T>("gather", std::move(y), {&a}, [in, is, st, sa, idx](Node<T>& n) {
    Array<T> dx = xt::zeros<T>(in);
    T* d = dx.data();
    const T* g = n.grad.data();
    const Index* iv = idx.data();
    visit_strided(is, st, [&](std::size_t k, std::ptrdiff_t off) { d[off + iv[k] * sa] += g[k]; });
    n.add_grad(0, std::move(dx));
  });
}

#define ATTNLAB_INSTANTIATE(T)                                                                  \
  template Tensor<T> reshape<T>(const Tensor<T>&, const std::vector<long>&);                     \
  template Tensor<T> unsqueeze<T>(const Tensor<T>&, long);                                       \
  template Tensor<T> squeeze<T>(const Tensor<T>&, long);                                         \
  template Tensor<T> transpose<T>(const Tensor<T>&, long, long);                                 \
  template Tensor<T> permute<T>(const Tensor<T>&, const std::vector<std::size_t>&);              \
  template Tensor<T> slice<T>(const Tensor<T>&, long, long, long, long);                         \
  template Tensor<T> concat<T>(const std::vector<Tensor<T>>&, long);                             \
  template Tensor<T> stack<T>(const std::vector<Tensor<T>>&, long);                              \
  template std::vector<Tensor<T>> split<T>(const Tensor<T>&, const std::vector<std::size_t>&, long); \
  template Tensor<T> index_select<T>(const Tensor<T>&, long, const IndexArray&);                 \
  template Tensor<T> gather<T>(const Tensor<T>&, long, const IndexArray&);                       \
  template Tensor<T> broadcast_to<T>(const Tensor<T>&, const Shape&);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab
