#include "core/ops/additive_score.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "core/runtime/parallel.hpp"
#include "core/runtime/vmath.hpp"

namespace attnlab {

namespace {
// Batch rows per parallel chunk: at least about 2^15 tanh's each, so that a small problem runs
// inline rather than paying for a thread hand-off.
std::size_t batch_grain(std::size_t per_batch) { return grain_for(per_batch, std::size_t(1) << 15); }
}  // namespace

// Forward, saving t[b, i, j, :] = tanh(pq[b, i, :] + pk[b, j, :]) (B, Lq, Lk, H):
//   s[b, i, j] = v . t[b, i, j, :]
// Backward, with g = dL/ds and e[b, i, j, h] = g[b, i, j] v[h] (1 - t[b, i, j, h]^2), the
// gradient of the tanh's argument, which pq[b, i] and pk[b, j] both enter with slope 1:
//   dpq[b, i, h] = sum_j e[b, i, j, h]     (every key the query met)
//   dpk[b, j, h] = sum_i e[b, i, j, h]     (every query that met the key)
//   dv[h]        = sum_{b, i, j} g[b, i, j] t[b, i, j, h]
// The sum over b of dv runs in b order from per-batch rows, so chunking never changes the bits.
template <class T>
Tensor<T> additive_score(const Tensor<T>& pq, const Tensor<T>& pk, const Tensor<T>& v) {
  const char* op = "additive_score";
  need(op, pq, "pq");
  need(op, pk, "pk");
  need(op, v, "v");
  const Shape qs = pq.shape(), ks = pk.shape(), vs = v.shape();
  check(qs.size() == 3 && qs[2] > 0, op, "pq must be (B, Lq, H) with H > 0, got ", shape_str(qs));
  const std::size_t B = qs[0], Lq = qs[1], H = qs[2];
  check(ks.size() == 3 && ks[0] == B && ks[2] == H, op, "pk must be (B = ", B, ", Lk, H = ", H,
        ") for pq ", shape_str(qs), ", got ", shape_str(ks));
  check((vs == Shape{H} || vs == Shape{1, H}), op, "v must be (H) or (1, H) with H = ", H, ", got ",
        shape_str(vs));
  const std::size_t Lk = ks[1], block = Lk * H;  // one query's features
  const T* q = pq.value().data();
  const T* k = pk.value().data();
  const T* w = v.value().data();
  auto t = std::make_shared<Array<T>>(Array<T>::from_shape({B, Lq, Lk, H}));
  Array<T> s = Array<T>::from_shape({B, Lq, Lk});
  T* ts = t->data();
  T* ss = s.data();
  parallel_for(B, batch_grain(Lq * block), [&](std::size_t first, std::size_t last) {
    for (std::size_t bi = first * Lq; bi < last * Lq; ++bi) {  // (b, i) pairs of the chunk
      const T* qi = q + bi * H;
      const T* kb = k + (bi / Lq) * block;
      T* tb = ts + bi * block;
      for (std::size_t j = 0; j < Lk; ++j)
        for (std::size_t h = 0; h < H; ++h) tb[j * H + h] = qi[h] + kb[j * H + h];
      vmath::tanh_n(tb, tb, block);
      for (std::size_t j = 0; j < Lk; ++j) ss[bi * Lk + j] = vmath::dot(w, tb + j * H, H);
    }
  });
  return record<T>(op, std::move(s), {&pq, &pk, &v}, [t, B, Lq, Lk, H](Node<T>& n) {
    const std::size_t block = Lk * H;
    const T* g = n.grad.data();
    const T* w = n.input(2).data();
    const T* ts = t->data();
    Array<T> dq = xt::zeros<T>({B, Lq, H}), dk = xt::zeros<T>({B, Lk, H});
    std::vector<T> dv_rows(B * H, T(0));  // dv's part from each batch row
    parallel_for(B, batch_grain(Lq * block), [&](std::size_t first, std::size_t last) {
      for (std::size_t b = first; b < last; ++b) {
        T* dkb = dk.data() + b * block;
        T* dvb = dv_rows.data() + b * H;
        for (std::size_t i = 0; i < Lq; ++i) {
          const std::size_t bi = b * Lq + i;
          T* dqi = dq.data() + bi * H;
          for (std::size_t j = 0; j < Lk; ++j) {
            const T gij = g[bi * Lk + j];
            const T* tij = ts + bi * block + j * H;
            T* dkj = dkb + j * H;
            for (std::size_t h = 0; h < H; ++h) {
              const T eh = gij * w[h] * (T(1) - tij[h] * tij[h]);
              dqi[h] += eh;
              dkj[h] += eh;
              dvb[h] += gij * tij[h];
            }
          }
        }
      }
    });
    if (n.needs_grad(0)) n.add_grad(0, std::move(dq));
    if (n.needs_grad(1)) n.add_grad(1, std::move(dk));
    if (n.needs_grad(2)) {
      Array<T> dv = Array<T>::from_shape(n.input(2).shape());
      std::fill(dv.begin(), dv.end(), T(0));
      for (std::size_t b = 0; b < B; ++b)
        for (std::size_t h = 0; h < H; ++h) dv.data()[h] += dv_rows[b * H + h];
      n.add_grad(2, std::move(dv));
    }
  });
}

template Tensor<float> additive_score<float>(const Tensor<float>&, const Tensor<float>&, const Tensor<float>&);
template Tensor<double> additive_score<double>(const Tensor<double>&, const Tensor<double>&, const Tensor<double>&);

}  // namespace attnlab
