// Layer normalization (fused, llm.c style: the forward saves only mean and 1/std per row) and
// inverted dropout (the forward saves only the keep mask).
#include "core/ops/norm.hpp"

#include <algorithm>
#include <cmath>
#include <memory>

#include "core/runtime/parallel.hpp"
#include "core/runtime/vmath.hpp"

namespace attnlab {

namespace {
// Rows per parallel chunk: about 2^14 entries.
std::size_t row_grain(std::size_t D) { return grain_for(D, std::size_t(1) << 14); }
}  // namespace

// Per row of D values: mu = mean(x), rstd = 1 / sqrt(var(x) + eps), xhat = (x - mu) rstd,
// y = xhat * gamma + beta. Backward, with dxhat = dy * gamma:
//   dx     = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat))
//            (d xhat / dx carries the two terms from mu and from var, both row means)
//   dgamma = sum over rows of dy * xhat,  dbeta = sum over rows of dy.
// xhat is recomputed in the backward from x, mu and rstd rather than stored.
template <class T>
Tensor<T> layer_norm(const Tensor<T>& x, const Tensor<T>& gamma, const Tensor<T>& beta,
                     double eps) {
  const char* op = "layer_norm";
  need(op, x);
  const Shape xs = x.shape();
  check(!xs.empty(), op, "0-D input; layer_norm normalizes over the last axis");
  const std::size_t D = xs.back();
  check(D > 0, op, "last axis of input ", shape_str(xs), " is empty");
  check(eps >= 0.0 && std::isfinite(eps), op, "eps ", eps, " must be finite and >= 0");
  const Shape want{D};
  if (gamma.defined())
    check(gamma.shape() == want, op, "gamma ", shape_str(gamma.shape()),
          " does not match the last axis of input ", shape_str(xs), "; expected ", shape_str(want));
  if (beta.defined())
    check(beta.shape() == want, op, "beta ", shape_str(beta.shape()),
          " does not match the last axis of input ", shape_str(xs), "; expected ", shape_str(want));

  const std::size_t R = x.size() / D;
  const T* px = x.value().data();
  const T* g = gamma.defined() ? gamma.value().data() : nullptr;
  const T* b = beta.defined() ? beta.value().data() : nullptr;
  auto mean = std::make_shared<std::vector<T>>(R);
  auto rstd = std::make_shared<std::vector<T>>(R);
  Array<T> y = Array<T>::from_shape(xs);
  T* py = y.data();
  const T inv_d = T(1) / static_cast<T>(D);
  // Rows of whole vectors reduce in vector registers, in sum_of's lane order (core/runtime/vmath.hpp).
  const bool whole = D % 8 == 0;
  // Rows are independent: chunks of them run in parallel (core/runtime/parallel).
  parallel_for(R, row_grain(D), [&](std::size_t first, std::size_t last) {
    for (std::size_t r = first; r < last; ++r) {
      const T* xr = px + r * D;
      T* yr = py + r * D;
      // Two passes: no cancellation from E[x^2] - E[x]^2.
      const T mu = (whole ? vmath::sum_whole_vectors(xr, D) : vmath::sum(xr, D)) * inv_d;
      const T v = whole ? vmath::sum_squared_differences_whole_vectors(xr, mu, D)
                        : vmath::sum_squared_differences(xr, mu, D);
      const T rs = T(1) / std::sqrt(v * inv_d + static_cast<T>(eps));
      (*mean)[r] = mu;
      (*rstd)[r] = rs;
      for (std::size_t j = 0; j < D; ++j) {
        const T xh = (xr[j] - mu) * rs;
        yr[j] = (g ? xh * g[j] : xh) + (b ? b[j] : T(0));
      }
    }
  });

  // Only defined tensors become parents; remember where gamma and beta landed.
  std::vector<Tensor<T>> inputs{x};
  const std::size_t gi = gamma.defined() ? inputs.size() : 0;
  if (gamma.defined()) inputs.push_back(gamma);
  const std::size_t bi = beta.defined() ? inputs.size() : 0;
  if (beta.defined()) inputs.push_back(beta);

  return record<T>(op, std::move(y), inputs, [mean, rstd, R, D, gi, bi](Node<T>& nd) {
    const T* px = nd.input(0).data();
    const T* dy = nd.grad.data();
    const T* g = gi ? nd.input(gi).data() : nullptr;
    const bool want_x = nd.needs_grad(0);
    const bool want_g = gi && nd.needs_grad(gi);
    const bool want_b = bi && nd.needs_grad(bi);
    Array<T> dx = want_x ? Array<T>::from_shape(nd.input(0).shape()) : Array<T>();
    Array<T> dg = want_g ? Array<T>(xt::zeros<T>({D})) : Array<T>();
    Array<T> db = want_b ? Array<T>(xt::zeros<T>({D})) : Array<T>();
    const T inv_d = T(1) / static_cast<T>(D);
    const bool whole = D % 8 == 0;
    // One pass over fixed blocks of rows, in parallel (core/runtime/parallel): each block writes its rows
    // of dx and its own partial sums of dgamma and dbeta, which are then added in block order.
    // The blocks depend on R and D only, so the bits do not depend on the thread count.
    const std::size_t rows = row_grain(D), blocks = (R + rows - 1) / rows;
    std::vector<T> part_g(want_g ? blocks * D : 0), part_b(want_b ? blocks * D : 0);
    parallel_for(blocks, 1, [&](std::size_t first, std::size_t last) {
      std::vector<T> xhat(D), dxhat(D);  // one row's, in plain arrays so every loop vectorizes
      for (std::size_t blk = first; blk < last; ++blk) {
        T* pg = want_g ? part_g.data() + blk * D : nullptr;
        T* pb = want_b ? part_b.data() + blk * D : nullptr;
        for (std::size_t r = blk * rows; r < std::min(R, (blk + 1) * rows); ++r) {
          const T* xr = px + r * D;
          const T* dyr = dy + r * D;
          const T mu = (*mean)[r], rs = (*rstd)[r];
          T* xh = xhat.data();
          T* dxh = dxhat.data();
          for (std::size_t j = 0; j < D; ++j) xh[j] = (xr[j] - mu) * rs;
          if (pg)
            for (std::size_t j = 0; j < D; ++j) pg[j] += dyr[j] * xh[j];
          if (pb)
            for (std::size_t j = 0; j < D; ++j) pb[j] += dyr[j];
          if (!want_x) continue;
          if (g)
            for (std::size_t j = 0; j < D; ++j) dxh[j] = dyr[j] * g[j];
          else
            std::copy(dyr, dyr + D, dxh);
          // mean(dxhat) and mean(dxhat * xhat)
          const T m1 = (whole ? vmath::sum_whole_vectors(dxh, D) : vmath::sum(dxh, D)) * inv_d;
          const T m2 = (whole ? vmath::dot_whole_vectors(dxh, xh, D) : vmath::dot(dxh, xh, D)) * inv_d;
          T* dxr = dx.data() + r * D;
          for (std::size_t j = 0; j < D; ++j) dxr[j] = rs * (dxh[j] - m1 - xh[j] * m2);
        }
      }
    }, D);
    for (std::size_t blk = 0; blk < blocks; ++blk)
      for (std::size_t j = 0; j < D; ++j) {
        if (want_g) dg.data()[j] += part_g[blk * D + j];
        if (want_b) db.data()[j] += part_b[blk * D + j];
      }
    if (want_x) nd.add_grad(0, std::move(dx));
    if (want_g) nd.add_grad(gi, std::move(dg));
    if (want_b) nd.add_grad(bi, std::move(db));
  });
}

// Inverted dropout: y = x * keep / (1 - p), keep ~ Bernoulli(1 - p) drawn from gen in row-major
// order (one uniform per entry, so a reseeded generator redraws the same mask);
// dx = dy * keep / (1 - p). Scaling at training time keeps E[y] = x, so evaluation is the
// identity. p = 1 is allowed, as in PyTorch: every entry is dropped, y = 0 and dx = 0.
template <class T>
Tensor<T> dropout(const Tensor<T>& x, double p, bool training, Generator& gen) {
  need("dropout", x);
  check(p >= 0.0 && p <= 1.0, "dropout", "p = ", p, " outside [0, 1]");
  if (!training || p == 0.0) return x;
  const std::size_t N = x.size();
  const T scale = p < 1.0 ? static_cast<T>(1.0 / (1.0 - p)) : T(0);
  auto keep = std::make_shared<std::vector<unsigned char>>(N);
  const T* px = x.value().data();
  Array<T> y = Array<T>::from_shape(x.shape());
  for (std::size_t i = 0; i < N; ++i) {
    const bool k = gen.uniform() >= p;
    (*keep)[i] = k;
    y.data()[i] = k ? px[i] * scale : T(0);
  }
  return record<T>("dropout", std::move(y), {&x}, [keep, scale, N](Node<T>& nd) {
    Array<T> dx = Array<T>::from_shape(nd.value.shape());
    const T* dy = nd.grad.data();
    const unsigned char* k = keep->data();
    for (std::size_t i = 0; i < N; ++i) dx.data()[i] = k[i] ? dy[i] * scale : T(0);
    nd.add_grad(0, std::move(dx));
  });
}

#define ATTNLAB_INSTANTIATE(T)                                                                  \
  template Tensor<T> layer_norm<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>&, double); \
  template Tensor<T> dropout<T>(const Tensor<T>&, double, bool, Generator&);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab
