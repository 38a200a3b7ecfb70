#include "core/ops/gru_cell.hpp"

#include <memory>

#include "core/runtime/vmath.hpp"

namespace attnlab {

// Forward, per row (M rows of the flattened leading dims), saving g = [r, z, n] (M, 3H):
//   r, z = sigmoid(gi_rz + gh_rz);  n = tanh(gi_n + r gh_n);  h' = n + z (h - n)
// Backward, with dy = dL/dh':
//   dh = dy z;  dz = dy (h - n);  dn = dy (1 - z)
//   da_n = dn (1 - n^2)                       (a_n = gi_n + r gh_n, the tanh's argument)
//   dr = da_n gh_n;  da_r = dr r (1 - r);  da_z = dz z (1 - z)
//   dgi = [da_r, da_z, da_n];  dgh = [da_r, da_z, da_n r]
namespace {

// One row of the backward. Every pointer restrict: the compiler may then run the loop on whole
// vectors without checking whether the nine arrays overlap (a GRU cell's backward was one tenth of
// a Bahdanau training step, at about 4 ns an entry, before).
template <class T>
void gru_backward_row(std::size_t H, const T* __restrict r, const T* __restrict z, const T* __restrict n,
                      const T* __restrict dy, const T* __restrict h, const T* __restrict ghn, T* __restrict di,
                      T* __restrict dg, T* __restrict dh) {
  for (std::size_t j = 0; j < H; ++j) {
    const T dan = dy[j] * (T(1) - z[j]) * (T(1) - n[j] * n[j]);
    const T dar = dan * ghn[j] * r[j] * (T(1) - r[j]);
    const T daz = dy[j] * (h[j] - n[j]) * z[j] * (T(1) - z[j]);
    di[j] = dar;
    di[H + j] = daz;
    di[2 * H + j] = dan;
    dg[j] = dar;
    dg[H + j] = daz;
    dg[2 * H + j] = dan * r[j];
  }
  if (dh)
    for (std::size_t j = 0; j < H; ++j) dh[j] = dy[j] * z[j];
}

}  // namespace

template <class T>
Tensor<T> gru_cell(const Tensor<T>& gi, const Tensor<T>& gh, const Tensor<T>& h) {
  const char* op = "gru_cell";
  need(op, gi, "gi");
  need(op, gh, "gh");
  need(op, h, "h");
  const Shape gs = gi.shape(), hs = h.shape();
  check(!hs.empty() && hs.back() > 0, op, "h must be (..., H) with H > 0, got ", shape_str(hs));
  const std::size_t H = hs.back();
  Shape want = hs;
  want.back() = 3 * H;
  check(gs == want && gh.shape() == want, op, "gi and gh must be (..., 3H) = ", shape_str(want),
        " for h ", shape_str(hs), ", got gi ", shape_str(gs), " and gh ", shape_str(gh.shape()));
  const std::size_t M = shape_size(hs) / H;
  const T* pi = gi.value().data();
  const T* pg = gh.value().data();
  const T* ph = h.value().data();
  auto saved = std::make_shared<Array<T>>(Array<T>::from_shape({M, 3 * H}));
  Array<T> y = Array<T>::from_shape(hs);
  T* py = y.data();
  for (std::size_t m = 0; m < M; ++m) {
    const T* a = pi + m * 3 * H;
    const T* b = pg + m * 3 * H;
    T* g = saved->data() + m * 3 * H;
    for (std::size_t j = 0; j < 2 * H; ++j) g[j] = a[j] + b[j];
    vmath::sigmoid_n(g, g, 2 * H);
    const T* r = g;
    T* n = g + 2 * H;
    for (std::size_t j = 0; j < H; ++j) n[j] = a[2 * H + j] + r[j] * b[2 * H + j];
    vmath::tanh_n(n, n, H);
    const T* z = g + H;
    const T* hr = ph + m * H;
    T* yr = py + m * H;
    for (std::size_t j = 0; j < H; ++j) yr[j] = n[j] + z[j] * (hr[j] - n[j]);
  }
  return record<T>(op, std::move(y), {&gi, &gh, &h}, [saved, M, H](Node<T>& nd) {
    const bool need_i = nd.needs_grad(0), need_g = nd.needs_grad(1), need_h = nd.needs_grad(2);
    const T* dy = nd.grad.data();
    const T* ghv = nd.input(1).data();
    const T* hv = nd.input(2).data();
    Array<T> dgi = Array<T>::from_shape({M, 3 * H});
    Array<T> dgh = Array<T>::from_shape({M, 3 * H});
    Array<T> dh;
    if (need_h) dh = Array<T>::from_shape(nd.input(2).shape());
    for (std::size_t m = 0; m < M; ++m) {
      const T* g = saved->data() + m * 3 * H;
      gru_backward_row(H, g, g + H, g + 2 * H, dy + m * H, hv + m * H, ghv + m * 3 * H + 2 * H,
                       dgi.data() + m * 3 * H, dgh.data() + m * 3 * H, need_h ? dh.data() + m * H : nullptr);
    }
    if (need_i) {
      dgi.reshape(nd.input(0).shape());
      nd.add_grad(0, std::move(dgi));
    }
    if (need_g) {
      dgh.reshape(nd.input(1).shape());
      nd.add_grad(1, std::move(dgh));
    }
    if (need_h) nd.add_grad(2, std::move(dh));
  });
}

template Tensor<float> gru_cell<float>(const Tensor<float>&, const Tensor<float>&,
                                       const Tensor<float>&);
template Tensor<double> gru_cell<double>(const Tensor<double>&, const Tensor<double>&,
                                         const Tensor<double>&);

}  // namespace attnlab
