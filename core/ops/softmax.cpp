// The softmax family and the losses built on it. Each forward subtracts the lane maximum before
// exponentiating (softmax is shift invariant, and exp of a value <= 0 cannot overflow); each
// backward is the fused, hand-derived formula, one pass over the (outer, n, inner) split.
#include "core/ops/softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include <xtensor/xbroadcast.hpp>

#include "core/broadcast.hpp"
#include "core/ops/softmax_row.hpp"
#include "core/runtime/parallel.hpp"
#include "core/runtime/vmath.hpp"

namespace attnlab {

namespace {

// Lanes of a row-major array along one axis: lane (o, i) is x[o, 0..n-1, i], stride `inner`.
// Kernels loop over j (the axis) outermost within each o and over i innermost, so memory is read
// in order and the i loop vectorizes; inner == 1 (the last axis, the common case) takes a plain
// contiguous row loop instead.
template <class T, bool Log>
void softmax_lanes(const T* x, T* y, const AxisSplit& s) {
  const std::size_t n = s.n, in = s.inner;
  if (in == 1) {
    for (std::size_t o = 0; o < s.outer; ++o) {
      const T* xr = x + o * n;
      T* yr = y + o * n;
      const T mx = vmath::max(xr, n);
      // e_j = exp(x_j - max) in one vectorized pass (vmath), written to y as scratch.
      for (std::size_t j = 0; j < n; ++j) yr[j] = xr[j] - mx;
      vmath::exp_nonpositive_n(yr, yr, n);  // x - max <= 0: exp's bits at half the work
      const T sum = vmath::sum(yr, n);
      if (Log) {
        const T shift = mx + std::log(sum);
        for (std::size_t j = 0; j < n; ++j) yr[j] = xr[j] - shift;
      } else {
        const T r = T(1) / sum;
        for (std::size_t j = 0; j < n; ++j) yr[j] *= r;
      }
    }
    return;
  }
  std::vector<T> mx(in), sum(in);
  for (std::size_t o = 0; o < s.outer; ++o) {
    const T* xo = x + o * n * in;
    T* yo = y + o * n * in;
    std::copy(xo, xo + in, mx.begin());
    for (std::size_t j = 1; j < n; ++j)
      for (std::size_t i = 0; i < in; ++i) mx[i] = std::max(mx[i], xo[j * in + i]);
    std::fill(sum.begin(), sum.end(), T(0));
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < in; ++i) {
        const T e = std::exp(xo[j * in + i] - mx[i]);
        if (!Log) yo[j * in + i] = e;
        sum[i] += e;
      }
    if (Log) {
      for (std::size_t i = 0; i < in; ++i) mx[i] += std::log(sum[i]);  // mx becomes the shift
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < in; ++i) yo[j * in + i] = xo[j * in + i] - mx[i];
    } else {
      for (std::size_t i = 0; i < in; ++i) sum[i] = T(1) / sum[i];
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t i = 0; i < in; ++i) yo[j * in + i] *= sum[i];
    }
  }
}

// softmax:     dx = y * (dy - sum(dy * y))        (Jacobian diag(y) - y y^T applied to dy)
// log_softmax: dx = dy - exp(y) * sum(dy)         (Jacobian I - 1 softmax^T, transposed)
template <class T, bool Log>
void softmax_lanes_backward(const T* y, const T* dy, T* dx, const AxisSplit& s) {
  const std::size_t n = s.n, in = s.inner;
  if (in == 1) {  // contiguous rows: one lane-parallel reduction per row
    for (std::size_t o = 0; o < s.outer; ++o) {
      const T* yr = y + o * n;
      const T* dyr = dy + o * n;
      T* dxr = dx + o * n;
      const T acc = Log ? vmath::sum(dyr, n) : vmath::dot(dyr, yr, n);
      for (std::size_t j = 0; j < n; ++j)
        dxr[j] = Log ? dyr[j] - std::exp(yr[j]) * acc : yr[j] * (dyr[j] - acc);
    }
    return;
  }
  std::vector<T> acc(in);
  for (std::size_t o = 0; o < s.outer; ++o) {
    const std::size_t base = o * n * in;
    std::fill(acc.begin(), acc.end(), T(0));
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < in; ++i) {
        const std::size_t q = base + j * in + i;
        acc[i] += Log ? dy[q] : dy[q] * y[q];
      }
    for (std::size_t j = 0; j < n; ++j)
      for (std::size_t i = 0; i < in; ++i) {
        const std::size_t q = base + j * in + i;
        dx[q] = Log ? dy[q] - std::exp(y[q]) * acc[i] : y[q] * (dy[q] - acc[i]);
      }
  }
}

template <class T, bool Log>
Tensor<T> softmax_op(const char* op, const Tensor<T>& x, long axis) {
  need(op, x);
  const Shape xs = x.shape();
  const std::size_t ax = norm_axis(op, axis, xs);
  check(xs[ax] > 0, op, "axis ", axis, " has size 0 in shape ", shape_str(xs));
  const AxisSplit s = split_at(xs, ax);
  Array<T> y = Array<T>::from_shape(xs);
  softmax_lanes<T, Log>(x.value().data(), y.data(), s);
  // The backward reads y from the node's own value: nothing extra to save.
  return record<T>(op, std::move(y), {&x}, [s](Node<T>& nd) {
    Array<T> dx = Array<T>::from_shape(nd.value.shape());
    softmax_lanes_backward<T, Log>(nd.value.data(), nd.grad.data(), dx.data(), s);
    nd.add_grad(0, std::move(dx));
  });
}

}  // namespace

template <class T>
Tensor<T> softmax(const Tensor<T>& x, long axis) {
  return softmax_op<T, false>("softmax", x, axis);
}

template <class T>
Tensor<T> log_softmax(const Tensor<T>& x, long axis) {
  return softmax_op<T, true>("log_softmax", x, axis);
}

// Each lane is copied into a contiguous row with its allowed flags, softmaxed there by the row
// kernel the attention ops share (core/ops/softmax_row.hpp), and copied back. The backward is
// softmax's: y is exactly 0 at every hidden entry, so dx is too.
template <class T>
Tensor<T> masked_softmax(const Tensor<T>& x, const Allowed& allowed, long axis) {
  const char* op = "masked_softmax";
  need(op, x);
  const Shape xs = x.shape();
  const std::size_t ax = norm_axis(op, axis, xs);
  check(broadcasts_to(allowed.shape(), xs), op, "allowed entries of shape ", shape_str(allowed.shape()),
        " do not broadcast to the input's shape ", shape_str(xs));
  const Mask full = xt::broadcast(allowed.mask(), xs);
  const AxisSplit s = split_at(xs, ax);
  Array<T> y = Array<T>::from_shape(xs);
  std::vector<T> row(s.n);
  std::vector<char> ok(s.n);
  for (std::size_t o = 0; o < s.outer; ++o)
    for (std::size_t i = 0; i < s.inner; ++i) {
      const std::size_t base = o * s.n * s.inner + i;
      for (std::size_t j = 0; j < s.n; ++j) {
        row[j] = x.value().data()[base + j * s.inner];
        ok[j] = full.data()[base + j * s.inner];
      }
      detail::softmax_rows(row.data(), 1, s.n, [&](std::size_t) { return s.n; },
                           [&](std::size_t, std::size_t j) { return ok[j] != 0; });
      for (std::size_t j = 0; j < s.n; ++j) y.data()[base + j * s.inner] = row[j];
    }
  return record<T>(op, std::move(y), {&x}, [s](Node<T>& nd) {
    Array<T> dx = Array<T>::from_shape(nd.value.shape());
    softmax_lanes_backward<T, false>(nd.value.data(), nd.grad.data(), dx.data(), s);
    nd.add_grad(0, std::move(dx));
  });
}

// Cross-entropy against q = (1 - eps) onehot(t) + eps / C, per row r with lse = logsumexp(z):
//   loss_r = -sum_j q_j log p_j = (1 - eps) (lse - z_t) + eps (lse - mean_j z_j)
//   dloss_r / dz_j = p_j - q_j                       (since sum_j q_j = 1)
// Mean divides by the number of rows whose target is not ignore_index (none: loss 0, grad 0).
// Logits of -inf are masked classes (p = 0); a row with no finite logit, or with +inf, is an error.
// When recording, the forward keeps p = softmax(z) (as PyTorch keeps log_softmax), so the
// backward needs no second pass of exp.
template <class T>
Tensor<T> cross_entropy(const Tensor<T>& logits, const IndexArray& targets,
                        const CrossEntropyOptions& options) {
  const char* op = "cross_entropy";
  need(op, logits, "logits");
  const Shape ls = logits.shape();
  check(!ls.empty(), op, "0-D logits; expected (..., C) with classes on the last axis");
  const std::size_t C = ls.back();
  check(C > 0, op, "logits ", shape_str(ls), " have no classes");
  const Shape rows_shape(ls.begin(), ls.end() - 1);
  check(shape_of(targets) == rows_shape, op, "targets ", shape_str(targets.shape()),
        " do not match logits ", shape_str(ls), "; expected ", shape_str(rows_shape));
  const double eps = options.label_smoothing;
  check(eps >= 0.0 && eps <= 1.0, op, "label_smoothing ", eps, " outside [0, 1]");
  const Index ignore = options.ignore_index;
  const std::size_t N = shape_size(rows_shape);
  const Index* t = targets.data();
  for (std::size_t r = 0; r < N; ++r)
    check(t[r] == ignore || (t[r] >= 0 && static_cast<std::size_t>(t[r]) < C), op, "target ",
          t[r], " at row ", r, " is outside [0, ", C, ") and is not ignore_index ", ignore);

  const bool recording = will_record<T>({&logits});
  // p: all rows when recording (ignored rows stay unwritten and unread), else one row per chunk.
  auto probs = std::make_shared<Array<T>>(Array<T>::from_shape(recording ? ls : Shape{0}));
  const T* z = logits.value().data();
  // Rows are independent: chunks of them run on the thread pool, each row's two loss terms kept
  // and then added in row order, so the total has the same bits at any thread count.
  std::vector<double> hit(N, 0.0), smoothing(N, 0.0);
  const std::size_t rows_per_chunk = grain_for(C, std::size_t(1) << 14);
  parallel_for(N, rows_per_chunk, [&](std::size_t first, std::size_t last) {
    std::vector<T> row(recording ? 0 : C);
    for (std::size_t r = first; r < last; ++r) {
      if (t[r] == ignore) continue;
      const T* zr = z + r * C;
      T* pr = recording ? probs->data() + r * C : row.data();
      const T mx = vmath::max(zr, C);
      check(std::isfinite(double(mx)), op, "row ", r, " has ", mx > 0 ? "a logit of +inf" : "no finite logit",
            ": its softmax is undefined");
      for (std::size_t j = 0; j < C; ++j) pr[j] = zr[j] - mx;
      vmath::exp_nonpositive_n(pr, pr, C);  // z - max <= 0: exp's bits at half the work
      const T esum = vmath::sum(pr, C), zsum = vmath::sum(zr, C);
      const T inv = T(1) / esum;
      for (std::size_t j = 0; j < C; ++j) pr[j] *= inv;
      const T l = mx + std::log(esum);
      // A logit of -inf (a masked class) has p = 0: harmless in the first term, but it makes the
      // smoothing term's mean -inf, so that term is added only when it is weighed (0 * inf is NaN).
      hit[r] = (1.0 - eps) * double(l - zr[t[r]]);
      if (eps > 0) smoothing[r] = eps * (double(l) - double(zsum) / double(C));
    }
  });
  double total = 0.0;
  std::size_t count = 0;
  for (std::size_t r = 0; r < N; ++r) {
    if (t[r] == ignore) continue;
    total += hit[r];
    if (eps > 0) total += smoothing[r];
    ++count;
  }
  const bool mean = options.reduction == Reduction::Mean;
  const double scale = mean ? (count ? 1.0 / double(count) : 0.0) : 1.0;
  Array<T> loss = Array<T>::from_shape(Shape{});
  loss.data()[0] = static_cast<T>(total * scale);

  if (!recording) return record<T>(op, std::move(loss), {&logits}, nullptr);
  auto saved_t = std::make_shared<IndexArray>(targets);
  return record<T>(op, std::move(loss), {&logits}, [probs, saved_t, scale, eps, ignore, N, C, rows_per_chunk](Node<T>& nd) {
    const T g = static_cast<T>(scale) * nd.grad.data()[0];
    const T smooth = static_cast<T>(eps / double(C)), onehot = static_cast<T>(1.0 - eps);
    const Index* t = saved_t->data();
    Array<T> dz = Array<T>::from_shape(nd.input(0).shape());
    parallel_for(N, rows_per_chunk, [&](std::size_t first, std::size_t last) {
      for (std::size_t r = first; r < last; ++r) {
        T* dr = dz.data() + r * C;
        if (t[r] == ignore) {
          std::fill(dr, dr + C, T(0));
          continue;
        }
        const T* pr = probs->data() + r * C;
        for (std::size_t j = 0; j < C; ++j) dr[j] = (pr[j] - smooth) * g;
        dr[t[r]] -= onehot * g;
      }
    });
    nd.add_grad(0, std::move(dz));
  });
}

// y = mean((a - b)^2) over N entries;  da = 2 (a - b) dy / N,  db = -da
template <class T>
Tensor<T> mse(const Tensor<T>& a, const Tensor<T>& b) {
  need("mse", a, "left operand");
  need("mse", b, "right operand");
  check(a.shape() == b.shape(), "mse", "shapes differ: ", shape_str(a.shape()), " and ",
        shape_str(b.shape()));
  const std::size_t N = a.size();
  check(N > 0, "mse", "empty inputs ", shape_str(a.shape()), " have no mean");
  const T* pa = a.value().data();
  const T* pb = b.value().data();
  double total = 0.0;
  for (std::size_t i = 0; i < N; ++i) {
    const double d = double(pa[i]) - double(pb[i]);
    total += d * d;
  }
  Array<T> y = Array<T>::from_shape(Shape{});
  y.data()[0] = static_cast<T>(total / double(N));
  return record<T>("mse", std::move(y), {&a, &b}, [N](Node<T>& nd) {
    const T g = T(2) * nd.grad.data()[0] / static_cast<T>(N);
    const T* pa = nd.input(0).data();
    const T* pb = nd.input(1).data();
    Array<T> da = Array<T>::from_shape(nd.input(0).shape());
    for (std::size_t i = 0; i < N; ++i) da.data()[i] = g * (pa[i] - pb[i]);
    if (nd.needs_grad(1)) nd.add_grad(1, Array<T>(-da));
    nd.add_grad(0, std::move(da));
  });
}

#define ATTNLAB_INSTANTIATE(T)                                                               \
  template Tensor<T> softmax<T>(const Tensor<T>&, long);                                     \
  template Tensor<T> log_softmax<T>(const Tensor<T>&, long);                                 \
  template Tensor<T> masked_softmax<T>(const Tensor<T>&, const Allowed&, long);             \
  template Tensor<T> cross_entropy<T>(const Tensor<T>&, const IndexArray&,                   \
                                      const CrossEntropyOptions&);                           \
  template Tensor<T> mse<T>(const Tensor<T>&, const Tensor<T>&);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab
