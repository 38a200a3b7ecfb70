// Scaled dot-product attention, fused into one node so that its backward is derived by hand.
//
// Forward, per (batch, head) block:
//   S   = Q (scale K^T) + bias        (Lq x Lk; one product against a scaled transposed copy of K)
//   P   = softmax of each row of S over its allowed keys (the row kernel of masked_softmax): a
//         hidden key gets P = 0 exactly, a row with no allowed key is all zero (and so is its
//         output row).
//   P'  = P * keep / (1 - p)            (dropout; P' = P without it)
//   O   = P' V                          (Lq x dv)
//
// Backward (derived step by step, and checked three ways, in lesson 06: lessons/06_attention_backward.cpp).
// With dO = dL/dO:
//   dV  = P'^T dO
//   dP' = dO V^T,   dP = dP' * keep / (1 - p)
//   the softmax Jacobian is dP_ij / dS_il = P_ij (delta_jl - P_il), hence
//   dS  = P * (dP - rowsum(dP * P))
//   dQ  = scale * dS K,   dK = scale * dS^T Q,   dbias = dS summed over bias's broadcast axes.
// Where a key is disallowed P = 0, so dS = 0 exactly there: masked positions and fully masked
// rows receive exactly zero gradient. Saved: P (held by the weights tensor's node, which has no
// parents) and the dropout keep mask; Q, K, V are read back through the node's parents.
//
// One kernel serves three layouts. A block's rows need not be contiguous: BLAS takes a row
// stride, so the multi-head entry points read head h of a (B, L, h*dk) projection in place
// (columns h*dk .. h*dk+dk-1, rows h*dk apart) and write the output already merged. That saves
// the split-heads and merge-heads transposes and their backward copies; the packed self-attention
// entry point also lets one GEMM make Q, K and V together.
#include "core/ops/attention.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include <xtensor/xbuilder.hpp>

#include "core/runtime/gemm_plan.hpp"
#include "core/broadcast.hpp"
#include "core/ops/attention_common.hpp"
#include "core/ops/broadcast_map.hpp"
#include "core/runtime/parallel.hpp"
#include "core/runtime/vmath.hpp"
#include "core/ops/softmax_row.hpp"
#include "core/ops/transpose.hpp"

namespace attnlab {

namespace {

using detail::BroadcastMap;
using detail::broadcast_map;

// Where block (b, h) of an operand starts (an element offset) and how far apart its rows are.
// Its gradient has the same layout.
struct Layout {
  std::size_t offset = 0, batch = 0, head = 0, row = 0;
  std::size_t at(std::size_t b, std::size_t h) const { return offset + b * batch + h * head; }
};

// (..., L, w): leading dims flattened into the batch, one head, rows w apart.
Layout dense(std::size_t L, std::size_t w) { return {0, L * w, 0, w}; }
// Head h of (B, L, stride) holds columns offset + h*w .. offset + h*w + w - 1.
Layout interleaved(std::size_t offset, std::size_t L, std::size_t w, std::size_t stride) {
  return {offset, L * stride, w, stride};
}

// Everything the kernels need to know about one call.
template <class T>
struct Problem {
  std::size_t B = 0, H = 0, Lq = 0, Lk = 0, d = 0, dv = 0;
  Layout q, k, v, o;
  T scale = T(1);
  bool causal = false;
  std::optional<Allowed> allowed;  // none: every key (up to the causal limit) is allowed
  BroadcastMap mask_map, bias_map;
  Shape bias_shape;  // the bias's shape, when options.bias is defined
  double dropout = 0.0;
  bool has_dropout() const { return dropout > 0.0; }
  std::size_t block_size() const { return Lq * Lk; }
  // Lk rounded up to a multiple of 8: the row length of the scratch blocks of scores and of dS,
  // and of the transposed copies of K and V, whose padding is zero. Their products run over the
  // whole padded width: in whole vectors, with no masked edge, a generated 17 x 24 x 16 product
  // takes 150 ns against 216 for 17 x 17 x 16, and the columns past Lk are never read.
  std::size_t padded_keys() const { return (Lk + 7) / 8 * 8; }
  // Without a mask the scores go to a padded scratch block, whose softmax runs in whole vectors
  // (detail::softmax_rows_padded) and writes P; with a mask, to P itself (Lk columns).
  bool padded_scores() const { return !allowed; }
  std::size_t score_row() const { return padded_scores() ? padded_keys() : Lk; }
};

// The six products of a block, planned once per call (core/runtime/gemm_plan.hpp). Generated
// kernels take no scale and no transposed right operand, so K and V are copied transposed into
// scratch (d x Lk, rows padded_keys() apart: a small fraction of a product's Lq x Lk x d work)
// and the scale rides on those copies and on dS:
//   S  = Q (scale K^T)        O  = P' V
//   dV = P'^T dO              dP = dO V^T
//   dQ = (scale dS) K         dK = (scale dS)^T Q
// Without AVX-512 the four that sum over 128 or more keys or queries go to OpenBLAS, one thread
// inside the block (block_limit_over_keys).
template <class T>
struct BlockProducts {
  GemmPlan<T> scores, output, dV, dP, dQ, dK;
  explicit BlockProducts(const Problem<T>& pr)
      : scores(false, pr.Lq, pr.score_row(), pr.d, pr.q.row, pr.padded_keys(), pr.score_row(),
               false, block_gemm_limit),
        output(false, pr.Lq, pr.dv, pr.Lk, pr.Lk, pr.v.row, pr.o.row, false,
               block_limit_over_keys(pr.Lk)),
        dV(true, pr.Lk, pr.dv, pr.Lq, pr.Lk, pr.o.row, pr.v.row, false, block_limit_over_keys(pr.Lq)),
        dP(false, pr.Lq, pr.padded_keys(), pr.dv, pr.o.row, pr.padded_keys(), pr.padded_keys(),
           false, block_gemm_limit),
        dQ(false, pr.Lq, pr.d, pr.Lk, pr.padded_keys(), pr.k.row, pr.q.row, false,
           block_limit_over_keys(pr.Lk)),
        dK(true, pr.Lk, pr.d, pr.Lq, pr.padded_keys(), pr.q.row, pr.k.row, false,
           block_limit_over_keys(pr.Lq)) {}
};

// P = the softmax of each row of the block's scores S, over the keys row i may see
// (core/ops/softmax_row.hpp: a hidden key gets exactly 0, a row with no key left is all zero).
// With a mask S is P itself; without one, S is the padded scratch (rows pr.score_row() apart).
template <class T>
void masked_softmax_rows(const Problem<T>& pr, const T* bias, std::size_t blk, T* S, T* P) {
  // Keys past min(i, Lk-1) are causally hidden; the mask hides more.
  auto end = [&](std::size_t i) { return pr.causal ? std::min(i + 1, pr.Lk) : pr.Lk; };
  const std::size_t ld = pr.score_row();
  if (bias)
    for (std::size_t i = 0; i < pr.Lq; ++i)
      for (std::size_t j = 0; j < end(i); ++j) S[i * ld + j] += bias[pr.bias_map.at(blk, i, j)];
  if (pr.allowed) {
    const bool* mask = pr.allowed->mask().data();
    detail::softmax_rows(P, pr.Lq, pr.Lk, end,
                         [&](std::size_t i, std::size_t j) { return mask[pr.mask_map.at(blk, i, j)]; });
  } else {
    detail::softmax_rows_padded(S, ld, pr.Lq, pr.Lk, end, P);
  }
}

// P' = P * keep / (1 - p) for one block.
template <class T>
void apply_dropout(const T* P, const bool* keep, T inv_keep, std::size_t n, T* out) {
  for (std::size_t i = 0; i < n; ++i) out[i] = keep[i] ? P[i] * inv_keep : T(0);
}

// Asks for a block of an operand (rows x width, rows ld apart) to be brought into L2: the next
// block's, while this one computes. A head's rows in a packed (B, L, 3 heads d) tensor are one
// 64-byte line each at d = 16, 768 bytes apart, and the hardware prefetcher does not run ahead of
// them: at the ViT's 50 keys the op ran 4 to 10 % faster with this (bench_core c).
template <class T>
void prefetch_block(const T* p, std::size_t rows, std::size_t width, std::size_t ld) {
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t c = 0; c < width; c += 64 / sizeof(T)) __builtin_prefetch(p + i * ld + c, 0, 2);
}
// Block blk's Q, K and V.
template <class T>
void prefetch_operands(const Problem<T>& pr, std::size_t blk, const T* Q, const T* K, const T* V) {
  const std::size_t b = blk / pr.H, h = blk % pr.H;
  prefetch_block(Q + pr.q.at(b, h), pr.Lq, pr.d, pr.q.row);
  prefetch_block(K + pr.k.at(b, h), pr.Lk, pr.d, pr.k.row);
  prefetch_block(V + pr.v.at(b, h), pr.Lk, pr.dv, pr.v.row);
}

// Blocks per parallel chunk: enough multiply-adds (about 2^16) to be worth a thread's wake-up.
// Blocks whose products are too large for generated kernels (block_gemm_limit, 2^23 multiply-adds;
// with generated kernels off, small_gemm_limit) are left to OpenBLAS, which threads a GEMM that
// size itself: they run one after another on the caller, so the two kinds of threads never stack
// up on the same cores. Below it every block is one thread's work.
template <class T>
std::size_t block_grain(const Problem<T>& pr) {
  const std::size_t gemm = pr.Lq * pr.Lk * std::max<std::size_t>(std::max(pr.d, pr.dv), 1);
  if (gemm >= (small_gemm_enabled() ? block_gemm_limit : small_gemm_limit)) return pr.B * pr.H;
  const std::size_t per_block = 2 * std::max<std::size_t>(gemm, 1);  // Lk = 0: no work at all
  return grain_for(per_block, std::size_t(1) << 16);
}

// Blocks are independent: chunks of them run in parallel (core/runtime/parallel), each chunk with its
// own scratch.
template <class T>
void attention_forward(const Problem<T>& pr, const T* Q, const T* K, const T* V, const T* bias,
                       const Mask& keep, T* P_all, T* O) {
  const T inv_keep = T(1.0 / (1.0 - pr.dropout));
  const BlockProducts<T> products(pr);
  parallel_for(pr.B * pr.H, block_grain(pr), [&](std::size_t first, std::size_t last) {
    std::vector<T> dropped(pr.has_dropout() ? pr.block_size() : 0);
    std::vector<T> kt(pr.d * pr.padded_keys());
    std::vector<T> scores(pr.padded_scores() ? pr.Lq * pr.score_row() : 0);
    for (std::size_t blk = first; blk < last; ++blk) {
      const std::size_t b = blk / pr.H, h = blk % pr.H;
      if (blk + 1 < last) prefetch_operands(pr, blk + 1, Q, K, V);
      T* P = P_all + blk * pr.block_size();
      T* S = pr.padded_scores() ? scores.data() : P;
      detail::transpose_scaled(K + pr.k.at(b, h), pr.Lk, pr.d, pr.k.row, pr.scale, kt.data(),
                               pr.padded_keys());
      products.scores(Q + pr.q.at(b, h), kt.data(), S);
      masked_softmax_rows(pr, bias, blk, S, P);
      const T* Pd = P;
      if (pr.has_dropout()) {
        apply_dropout(P, keep.data() + blk * pr.block_size(), inv_keep, pr.block_size(),
                      dropped.data());
        Pd = dropped.data();
      }
      products.output(Pd, V + pr.v.at(b, h), O + pr.o.at(b, h));
    }
  });
}

// Gradients are written (not added) into dQ, dK, dV (null: not wanted), whose blocks tile them;
// dbias is added into.
template <class T>
void attention_backward(const Problem<T>& pr, const T* Q, const T* K, const T* V, const T* dO,
                        const T* P_all, const Mask& keep, T* dQ, T* dK, T* dV, T* dbias) {
  const T inv_keep = T(1.0 / (1.0 - pr.dropout));
  const std::size_t n = pr.block_size();
  const bool need_dS = dQ || dK || dbias;
  // Blocks write disjoint parts of dQ, dK, dV, but a broadcast bias sums over blocks: with a
  // bias gradient the blocks run in one chunk, in order.
  const std::size_t grain = dbias ? pr.B * pr.H : block_grain(pr);
  const BlockProducts<T> products(pr);
  parallel_for(pr.B * pr.H, grain, [&](std::size_t first, std::size_t last) {
    std::vector<T> dropped(pr.has_dropout() && dV ? n : 0);
    const std::size_t w = pr.padded_keys();  // dS's row length
    std::vector<T> dS(need_dS ? pr.Lq * w : 0);
    std::vector<T> vt(need_dS ? pr.dv * w : 0);
    for (std::size_t blk = first; blk < last; ++blk) {
      const std::size_t b = blk / pr.H, h = blk % pr.H;
      if (blk + 1 < last) {  // and its dO and P
        prefetch_operands(pr, blk + 1, Q, K, V);
        prefetch_block(dO + pr.o.at((blk + 1) / pr.H, (blk + 1) % pr.H), pr.Lq, pr.dv, pr.o.row);
        prefetch_block(P_all + (blk + 1) * n, 1, n, n);
      }
      const T* P = P_all + blk * n;
      const bool* keep_b = pr.has_dropout() ? keep.data() + blk * n : nullptr;
      const T* dO_b = dO + pr.o.at(b, h);
      if (dV) {  // dV = P'^T dO
        const T* Pd = P;
        if (keep_b) {
          apply_dropout(P, keep_b, inv_keep, n, dropped.data());
          Pd = dropped.data();
        }
        products.dV(Pd, dO_b, dV + pr.v.at(b, h));
      }
      if (!need_dS) continue;
      // dP = (dO V^T) * keep / (1 - p), then dS = P * (dP - rowsum(dP * P)) in place.
      detail::transpose_scaled(V + pr.v.at(b, h), pr.Lk, pr.dv, pr.v.row, T(1), vt.data(), w);
      products.dP(dO_b, vt.data(), dS.data());
      // The scale rides along here, unless dS is first summed into dbias unscaled (times 1 is exact).
      const T scale_now = dbias ? T(1) : pr.scale;
      for (std::size_t i = 0; i < pr.Lq; ++i) {
        T* row = dS.data() + i * w;
        const T* prow = P + i * pr.Lk;
        if (keep_b) apply_dropout(row, keep_b + i * pr.Lk, inv_keep, pr.Lk, row);
        detail::softmax_backward_row(row, prow, vmath::dot(row, prow, pr.Lk), scale_now, pr.Lk);
      }
      if (dbias) {  // dS summed wherever the bias was stretched, then scaled
        for (std::size_t i = 0; i < pr.Lq; ++i)
          for (std::size_t j = 0; j < pr.Lk; ++j)
            dbias[pr.bias_map.at(blk, i, j)] += dS[i * w + j];
        if (pr.scale != T(1))
          for (T& x : dS) x *= pr.scale;
      }
      if (dQ) products.dQ(dS.data(), K + pr.k.at(b, h), dQ + pr.q.at(b, h));  // scale dS K
      if (dK) products.dK(dS.data(), Q + pr.q.at(b, h), dK + pr.k.at(b, h));  // scale dS^T Q
    }
  });
}

// Checks the options against the score shape (lead..., Lq, Lk) and fills in the mask, bias
// map, scale, causal flag and dropout draw of the problem.
template <class T>
Mask prepare(const char* op, const std::string& shapes, const Shape& score_shape,
             const AttentionOptions<T>& options, Problem<T>& pr) {
  if (options.allowed.has_value()) {
    pr.mask_map = detail::allowed_map(op, *options.allowed, score_shape, shapes);
    pr.allowed = *options.allowed;
  }
  if (options.bias.defined()) {
    check(broadcasts_to(options.bias.shape(), score_shape), op, "bias of shape ",
          shape_str(options.bias.shape()), " does not broadcast to the scores ",
          shape_str(score_shape), " (", shapes, ")");
    pr.bias_shape = options.bias.shape();
    pr.bias_map = broadcast_map(pr.bias_shape, score_shape);
  }
  const double p = options.dropout;
  check(p >= 0.0 && p < 1.0, op, "dropout must be in [0, 1), got ", p);
  check(p == 0.0 || options.generator != nullptr, op, "dropout ", p, " needs options.generator (",
        shapes, ")");
  pr.dropout = p;
  pr.causal = options.causal;
  pr.scale = T(detail::attention_scale(options.scale, pr.d));
  // Dropout keeps each weight with probability 1 - p and scales the kept ones by 1 / (1 - p),
  // so that the expected output is unchanged. One draw per weight, in row-major order.
  Mask keep;
  if (p > 0.0) {
    keep = Mask::from_shape(score_shape);
    for (auto& x : keep) x = !(options.generator->uniform() < p);
  }
  return keep;
}

// Runs the forward and records the node. The parents are the operands (one packed tensor, or
// Q, K, V) followed by the bias if there is one.
template <class T>
AttentionResult<T> run(const char* op, Problem<T> pr, Mask keep, const Shape& score_shape,
                       const Shape& out_shape, std::vector<Tensor<T>> inputs, bool packed,
                       const AttentionOptions<T>& options) {
  const T* Q = inputs[0].value().data();
  const T* K = inputs[packed ? 0 : 1].value().data();
  const T* V = inputs[packed ? 0 : 2].value().data();
  const bool has_bias = options.bias.defined();
  const T* bias = has_bias ? options.bias.value().data() : nullptr;
  Array<T> weights = Array<T>::from_shape(score_shape);
  Array<T> out = Array<T>::from_shape(out_shape);
  attention_forward(pr, Q, K, V, bias, keep, weights.data(), out.data());

  Tensor<T> weights_t(std::move(weights), false);
  const std::size_t operands = packed ? 1 : 3;
  if (has_bias) inputs.push_back(options.bias);
  pr.allowed.reset();  // the backward needs no mask: P is exactly 0 wherever it hid a key
  BackwardFn<T> backward = [P_node = weights_t.node(), keep = std::move(keep), pr = std::move(pr),
                            operands, packed](Node<T>& n) {
    const T* Q = n.input(0).data();
    const T* K = n.input(packed ? 0 : 1).data();
    const T* V = n.input(packed ? 0 : 2).data();
    // Gradients take the layout of their inputs; a packed input's gradient is tiled by the
    // three operands' blocks, so every entry is written.
    detail::InputGradients<T> grads(n, operands);
    const bool want_bias = n.parents.size() > operands && n.needs_grad(operands);
    Array<T> dbias = want_bias ? Array<T>(xt::zeros<T>(pr.bias_shape)) : Array<T>();
    attention_backward(pr, Q, K, V, n.grad.data(), P_node->value.data(), keep, grads.ptr(0),
                       grads.ptr(packed ? 0 : 1), grads.ptr(packed ? 0 : 2),
                       want_bias ? dbias.data() : nullptr);
    grads.add_to(n);
    if (want_bias) n.add_grad(operands, std::move(dbias));
  };
  Tensor<T> output = record<T>(op, std::move(out), inputs, std::move(backward));
  return {std::move(output), std::move(weights_t)};
}

}  // namespace

template <class T>
AttentionResult<T> scaled_dot_product_attention(const Tensor<T>& q, const Tensor<T>& k,
                                                const Tensor<T>& v,
                                                const AttentionOptions<T>& options) {
  const char* op = "scaled_dot_product_attention";
  const detail::AttentionShapes sh = detail::attention_shapes(op, q, k, v);
  const std::string& shapes = sh.text;
  Problem<T> pr;
  pr.Lq = sh.Lq;
  pr.d = sh.d;
  pr.Lk = sh.Lk;
  pr.dv = sh.dv;
  pr.B = sh.B;
  pr.H = 1;
  pr.q = dense(pr.Lq, pr.d);
  pr.k = dense(pr.Lk, pr.d);
  pr.v = dense(pr.Lk, pr.dv);
  pr.o = dense(pr.Lq, pr.dv);

  const Shape score_shape = sh.scores(), out_shape = sh.output();
  Mask keep = prepare(op, shapes, score_shape, options, pr);
  return run(op, std::move(pr), std::move(keep), score_shape, out_shape, {q, k, v},
             /*packed=*/false, options);
}

template <class T>
AttentionResult<T> multi_head_attention(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v,
                                        std::size_t heads, const AttentionOptions<T>& options) {
  const char* op = "multi_head_attention";
  need(op, q, "query");
  need(op, k, "key");
  need(op, v, "value");
  const Shape qs = q.shape(), ks = k.shape(), vs = v.shape();
  const std::string shapes = "Q " + shape_str(qs) + ", K " + shape_str(ks) + ", V " +
                             shape_str(vs) + ", heads " + std::to_string(heads);
  check(qs.size() == 3 && ks.size() == 3 && vs.size() == 3, op,
        "Q, K and V must be (B, L, heads * d): ", shapes);
  check(qs[0] == ks[0] && ks[0] == vs[0], op, "batch sizes differ: ", shapes);
  check(ks[1] == vs[1], op, "Lk of K and V differ: ", shapes);
  check(qs[2] == ks[2], op, "widths of Q and K differ: ", shapes);
  check(heads > 0 && qs[2] % heads == 0 && vs[2] % heads == 0, op,
        "the widths are not divisible by the number of heads: ", shapes);
  Problem<T> pr;
  pr.B = qs[0];
  pr.H = heads;
  pr.Lq = qs[1];
  pr.Lk = ks[1];
  pr.d = qs[2] / heads;
  pr.dv = vs[2] / heads;
  pr.q = interleaved(0, pr.Lq, pr.d, qs[2]);
  pr.k = interleaved(0, pr.Lk, pr.d, ks[2]);
  pr.v = interleaved(0, pr.Lk, pr.dv, vs[2]);
  pr.o = interleaved(0, pr.Lq, pr.dv, vs[2]);
  const Shape score_shape{pr.B, heads, pr.Lq, pr.Lk};
  Mask keep = prepare(op, shapes, score_shape, options, pr);
  return run(op, std::move(pr), std::move(keep), score_shape, Shape{pr.B, pr.Lq, vs[2]},
             {q, k, v}, /*packed=*/false, options);
}

template <class T>
AttentionResult<T> multi_head_self_attention(const Tensor<T>& qkv, std::size_t heads,
                                             const AttentionOptions<T>& options) {
  const char* op = "multi_head_self_attention";
  need(op, qkv, "qkv");
  const Shape s = qkv.shape();
  const std::string shapes = "qkv " + shape_str(s) + ", heads " + std::to_string(heads);
  check(s.size() == 3, op, "qkv must be (B, L, 3 * heads * d): ", shapes);
  check(heads > 0 && s[2] % (3 * heads) == 0, op,
        "the last axis is not 3 * heads * d for a whole d: ", shapes);
  const std::size_t width = s[2] / 3;  // heads * d
  Problem<T> pr;
  pr.B = s[0];
  pr.H = heads;
  pr.Lq = pr.Lk = s[1];
  pr.d = pr.dv = width / heads;
  pr.q = interleaved(0, pr.Lq, pr.d, s[2]);
  pr.k = interleaved(width, pr.Lk, pr.d, s[2]);
  pr.v = interleaved(2 * width, pr.Lk, pr.d, s[2]);
  pr.o = interleaved(0, pr.Lq, pr.d, width);
  const Shape score_shape{pr.B, heads, pr.Lq, pr.Lk};
  Mask keep = prepare(op, shapes, score_shape, options, pr);
  return run(op, std::move(pr), std::move(keep), score_shape, Shape{pr.B, pr.Lq, width}, {qkv},
             /*packed=*/true, options);
}

#define ATTNLAB_INSTANTIATE(T)                                                                   \
  template AttentionResult<T> scaled_dot_product_attention<T>(                                  \
      const Tensor<T>&, const Tensor<T>&, const Tensor<T>&, const AttentionOptions<T>&);        \
  template AttentionResult<T> multi_head_attention<T>(const Tensor<T>&, const Tensor<T>&,       \
                                                      const Tensor<T>&, std::size_t,            \
                                                      const AttentionOptions<T>&);              \
  template AttentionResult<T> multi_head_self_attention<T>(const Tensor<T>&, std::size_t,       \
                                                           const AttentionOptions<T>&);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab
