// Scaled dot-product attention, fused into one node so that its backward is derived by hand.
//
// Forward, per batch block (leading dims flattened into b):
//   S   = scale * Q K^T + bias          (Lq x Lk; one GEMM, K transposed by a BLAS flag)
//   P   = softmax of each row of S over its allowed keys; a disallowed key gets P = 0 exactly,
//         a row with no allowed key is all zero (and so is its output row). No -inf fill: that
//         gives exp(-inf - (-inf)) = NaN on a fully masked row.
//   P'  = P * keep / (1 - p)            (dropout; P' = P without it)
//   O   = P' V                          (Lq x dv)
//
// Backward. With dO = dL/dO:
//   dV  = P'^T dO
//   dP' = dO V^T,   dP = dP' * keep / (1 - p)
//   the softmax Jacobian is dP_ij / dS_il = P_ij (delta_jl - P_il), hence
//   dS  = P * (dP - rowsum(dP * P))
//   dQ  = scale * dS K,   dK = scale * dS^T Q,   dbias = dS summed over bias's broadcast axes.
// Where a key is disallowed P = 0, so dS = 0 exactly there: masked positions and fully masked
// rows receive exactly zero gradient. Saved: P (held by the weights tensor's node, which has no
// parents) and the dropout keep mask; Q, K, V are read back through the node's parents.
#include "core/ops/attention.hpp"

#include <limits>

#include "core/vmath.hpp"

#include <algorithm>
#include <cmath>

#include <xtensor/xbuilder.hpp>

#include "core/blas.hpp"
#include "core/broadcast.hpp"

namespace attnlab {

namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

// Where an operand broadcast to (lead..., Lq, Lk) lives: the element offset of each batch
// block's (0, 0) entry, and the strides of a row step and a column step (0 along stretched axes).
struct BroadcastMap {
  std::vector<std::size_t> base;  // one per flattened batch block
  std::size_t row_stride = 0, col_stride = 0;
  std::size_t at(std::size_t b, std::size_t i, std::size_t j) const {
    return base[b] + i * row_stride + j * col_stride;
  }
};

BroadcastMap broadcast_map(const Shape& from, const Shape& full) {
  const std::size_t rank = full.size();
  const std::vector<std::ptrdiff_t> strides = broadcast_strides(from, full);
  BroadcastMap m;
  m.row_stride = static_cast<std::size_t>(strides[rank - 2]);
  m.col_stride = static_cast<std::size_t>(strides[rank - 1]);
  std::size_t blocks = 1;
  for (std::size_t a = 0; a + 2 < rank; ++a) blocks *= full[a];
  m.base.resize(blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    std::size_t rest = b, off = 0;
    for (std::size_t a = rank - 2; a-- > 0;) {
      off += (rest % full[a]) * static_cast<std::size_t>(strides[a]);
      rest /= full[a];
    }
    m.base[b] = off;
  }
  return m;
}

// Leading dimensions below the matrix axes.
Shape leading(const Shape& s) { return Shape(s.begin(), s.end() - 2); }

// C (m x n) = alpha op(A) op(B) on dense row-major blocks, overwriting C. An empty inner
// dimension (d = 0, dv = 0 or no keys) is an empty sum, C = 0; BLAS would leave C untouched
// (and rejects the zero leading dimensions).
template <class T>
void gemm_to(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, T alpha, const T* a,
             const T* b, T* c) {
  if (k == 0) {
    std::fill(c, c + m * n, T(0));
    return;
  }
  gemm<T>(ta, tb, m, n, k, alpha, a, ta ? m : k, b, tb ? k : n, T(0), c, n);
}

}  // namespace

template <class T>
AttentionResult<T> scaled_dot_product_attention(const Tensor<T>& q, const Tensor<T>& k,
                                                const Tensor<T>& v,
                                                const AttentionOptions<T>& options) {
  need(kOp, q, "query");
  need(kOp, k, "key");
  need(kOp, v, "value");
  const Shape qs = q.shape(), ks = k.shape(), vs = v.shape();
  const std::string shapes = "Q " + shape_str(qs) + ", K " + shape_str(ks) + ", V " + shape_str(vs);
  check(qs.size() >= 2 && ks.size() >= 2 && vs.size() >= 2, kOp,
        "Q, K and V need rank >= 2 (..., L, d): ", shapes);
  const std::size_t rank = qs.size();
  check(ks.size() == rank && vs.size() == rank && leading(ks) == leading(qs) &&
            leading(vs) == leading(qs),
        kOp, "leading dims of Q, K and V differ: ", shapes);
  const std::size_t Lq = qs[rank - 2], d = qs[rank - 1], Lk = ks[rank - 2], dv = vs[rank - 1];
  check(ks[rank - 1] == d, kOp, "d of Q and K differ: ", shapes);
  check(vs[rank - 2] == Lk, kOp, "Lk of K and V differ: ", shapes);

  Shape score_shape = leading(qs);
  score_shape.push_back(Lq);
  score_shape.push_back(Lk);
  const bool has_mask = options.mask.has_value();
  if (has_mask)
    check(broadcasts_to(shape_of(*options.mask), score_shape), kOp, "mask of shape ",
          shape_str(shape_of(*options.mask)), " does not broadcast to the scores ",
          shape_str(score_shape), " (", shapes, ")");
  const bool has_bias = options.bias.defined();
  if (has_bias)
    check(broadcasts_to(options.bias.shape(), score_shape), kOp, "bias of shape ",
          shape_str(options.bias.shape()), " does not broadcast to the scores ",
          shape_str(score_shape), " (", shapes, ")");
  const double p = options.dropout;
  check(p >= 0.0 && p < 1.0, kOp, "dropout must be in [0, 1), got ", p);
  const bool dropout = p > 0.0;
  check(!dropout || options.generator != nullptr, kOp, "dropout ", p,
        " needs options.generator (", shapes, ")");

  const T scale = options.scale != 0.0 ? T(options.scale)
                                       : T(1.0 / std::sqrt(double(std::max<std::size_t>(d, 1))));
  const bool causal = options.causal;
  const std::size_t blocks = shape_size(leading(qs));

  const BroadcastMap mask_map = has_mask ? broadcast_map(shape_of(*options.mask), score_shape)
                                         : BroadcastMap{};
  const BroadcastMap bias_map =
      has_bias ? broadcast_map(options.bias.shape(), score_shape) : BroadcastMap{};
  const bool* mask = has_mask ? options.mask->data() : nullptr;
  const T* bias = has_bias ? options.bias.value().data() : nullptr;

  Array<T> weights = Array<T>::from_shape(score_shape);
  Shape out_shape = leading(qs);
  out_shape.push_back(Lq);
  out_shape.push_back(dv);
  Array<T> out = Array<T>::from_shape(out_shape);

  // Dropout keeps each weight with probability 1 - p and scales the kept ones by 1 / (1 - p),
  // so that the expected output is unchanged. One draw per weight, in row-major order.
  Mask keep;
  const T inv_keep = T(1.0 / (1.0 - p));
  std::vector<T> dropped;  // P' of one block
  if (dropout) {
    keep = Mask::from_shape(score_shape);
    for (auto& x : keep) x = !(options.generator->uniform() < p);
    dropped.resize(Lq * Lk);
  }

  const T* Q = q.value().data();
  const T* K = k.value().data();
  const T* V = v.value().data();
  for (std::size_t b = 0; b < blocks; ++b) {
    T* P = weights.data() + b * Lq * Lk;
    gemm_to<T>(false, true, Lq, Lk, d, scale, Q + b * Lq * d, K + b * Lk * d, P);
    for (std::size_t i = 0; i < Lq; ++i) {
      T* row = P + i * Lk;
      // Keys past min(i, Lk-1) are causally hidden; the mask hides more.
      const std::size_t end = causal ? std::min(i + 1, Lk) : Lk;
      auto allowed = [&](std::size_t j) { return !mask || mask[mask_map.at(b, i, j)]; };
      if (bias)
        for (std::size_t j = 0; j < end; ++j) row[j] += bias[bias_map.at(b, i, j)];
      T mx = T(0);
      bool any = false;
      for (std::size_t j = 0; j < end; ++j)
        if (allowed(j) && (!any || row[j] > mx)) mx = row[j], any = true;
      // Hidden keys become -inf, which the exponential maps to exactly 0; one vectorized
      // exp pass over the row (vmath: fast float exp, std::exp for double).
      for (std::size_t j = 0; j < end; ++j)
        row[j] = allowed(j) ? row[j] - mx : -std::numeric_limits<T>::infinity();
      vmath::exp_n(row, row, end);
      T sum = T(0);
      for (std::size_t j = 0; j < end; ++j) sum += row[j];
      std::fill(row + end, row + Lk, T(0));
      if (any) {
        const T inv = T(1) / sum;  // sum >= 1: the max term is exp(0)
        for (std::size_t j = 0; j < end; ++j) row[j] *= inv;
      }
    }
    const T* Pd = P;
    if (dropout) {
      const bool* keep_b = keep.data() + b * Lq * Lk;
      for (std::size_t i = 0; i < Lq * Lk; ++i) dropped[i] = keep_b[i] ? P[i] * inv_keep : T(0);
      Pd = dropped.data();
    }
    gemm_to<T>(false, false, Lq, dv, Lk, T(1), Pd, V + b * Lk * dv, out.data() + b * Lq * dv);
  }

  Tensor<T> weights_t(std::move(weights), false);
  std::vector<Tensor<T>> inputs{q, k, v};
  if (has_bias) inputs.push_back(options.bias);

  BackwardFn<T> backward = [P_node = weights_t.node(), keep = std::move(keep), inv_keep,
                            bias_map, bias_shape = has_bias ? options.bias.shape() : Shape{},
                            blocks, Lq, Lk, d, dv, scale, dropout](Node<T>& n) {
    const bool gq = n.needs_grad(0), gk = n.needs_grad(1), gv = n.needs_grad(2);
    const bool gb = n.parents.size() > 3 && n.needs_grad(3);
    const T* Q = n.input(0).data();
    const T* K = n.input(1).data();
    const T* V = n.input(2).data();
    const T* dO = n.grad.data();
    Array<T> dQ, dK, dV, dbias;
    if (gq) dQ = Array<T>::from_shape(shape_of(n.input(0)));
    if (gk) dK = Array<T>::from_shape(shape_of(n.input(1)));
    if (gv) dV = Array<T>::from_shape(shape_of(n.input(2)));
    if (gb) dbias = xt::zeros<T>(bias_shape);
    std::vector<T> dropped(dropout && gv ? Lq * Lk : 0);
    const bool gs = gq || gk || gb;  // whether dS is needed at all
    std::vector<T> dS(gs ? Lq * Lk : 0);
    for (std::size_t b = 0; b < blocks; ++b) {
      const T* P = P_node->value.data() + b * Lq * Lk;
      const bool* keep_b = dropout ? keep.data() + b * Lq * Lk : nullptr;
      const T* dO_b = dO + b * Lq * dv;
      if (gv) {  // dV = P'^T dO
        const T* Pd = P;
        if (dropout) {
          for (std::size_t i = 0; i < Lq * Lk; ++i) dropped[i] = keep_b[i] ? P[i] * inv_keep : T(0);
          Pd = dropped.data();
        }
        gemm_to<T>(true, false, Lk, dv, Lq, T(1), Pd, dO_b, dV.data() + b * Lk * dv);
      }
      if (!gs) continue;
      // dP = (dO V^T) * keep / (1 - p), then dS = P * (dP - rowsum(dP * P)) in place.
      gemm_to<T>(false, true, Lq, Lk, dv, T(1), dO_b, V + b * Lk * dv, dS.data());
      for (std::size_t i = 0; i < Lq; ++i) {
        T* row = dS.data() + i * Lk;
        const T* prow = P + i * Lk;
        if (keep_b)
          for (std::size_t j = 0; j < Lk; ++j)
            row[j] = keep_b[i * Lk + j] ? row[j] * inv_keep : T(0);
        T dot = T(0);
        for (std::size_t j = 0; j < Lk; ++j) dot += row[j] * prow[j];
        for (std::size_t j = 0; j < Lk; ++j) row[j] = prow[j] * (row[j] - dot);
      }
      if (gq)  // dQ = scale * dS K
        gemm_to<T>(false, false, Lq, d, Lk, scale, dS.data(), K + b * Lk * d,
                   dQ.data() + b * Lq * d);
      if (gk)  // dK = scale * dS^T Q
        gemm_to<T>(true, false, Lk, d, Lq, scale, dS.data(), Q + b * Lq * d,
                   dK.data() + b * Lk * d);
      if (gb) {  // dbias: dS summed wherever the bias was stretched
        T* db = dbias.data();
        for (std::size_t i = 0; i < Lq; ++i)
          for (std::size_t j = 0; j < Lk; ++j) db[bias_map.at(b, i, j)] += dS[i * Lk + j];
      }
    }
    if (gq) n.add_grad(0, std::move(dQ));
    if (gk) n.add_grad(1, std::move(dK));
    if (gv) n.add_grad(2, std::move(dV));
    if (gb) n.add_grad(3, std::move(dbias));
  };
  Tensor<T> output = record<T>(kOp, std::move(out), inputs, std::move(backward));
  return {std::move(output), std::move(weights_t)};
}

#define ATTNLAB_INSTANTIATE(T)                                                              \
  template AttentionResult<T> scaled_dot_product_attention<T>(                             \
      const Tensor<T>&, const Tensor<T>&, const Tensor<T>&, const AttentionOptions<T>&);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab
