// Tiled attention with an online softmax (FlashAttention's algorithm, on the CPU), and local
// attention on the same kernel.
//
// Forward, one tile of queries i at a time, the key tiles j in order. Per query row keep
//   m  = the largest score seen so far,  l = sum of exp(s - m) so far,  acc = sum of exp(s - m) v.
// A new tile of scores S_j = scale Q_i K_j^T updates them (the online softmax):
//   m' = max(m, max_j S_j)
//   l' = l exp(m - m') + sum_j exp(S_j - m')          (old terms rescaled to the new max)
//   acc' = acc exp(m - m') + exp(S_j - m') V_j
// After the last tile, O = acc / l, exactly softmax(S) V: every term carries the factor
// exp(-m_final) once the rescalings are multiplied out. Saved for backward: the output O and the
// log-sum-exp L = m + log l of every row, n numbers instead of n^2 weights.
//
// Backward. P = exp(S - L) is the softmax again, recomputed one tile at a time from S and L.
// With dO = dL/dO and D_i = sum_c dO_ic O_ic = sum_j P_ij dP_ij (because O_i = sum_j P_ij V_j):
//   dV_j += P^T dO_i,   dP = dO_i V_j^T,   dS = P * (dP - D_i)   (the softmax rule of
//   scaled_dot_product_attention, its row sum read from D instead of summed over the row),
//   dQ_i += scale dS K_j,   dK_j += scale dS^T Q_i.
// Hidden entries get S = -inf, so P = 0 and dS = 0 there; a row with nothing visible has P = 0
// everywhere: a zero output and zero gradient, never NaN.
//
// A mask that allows nothing in a whole tile makes the kernel skip that tile, forward and backward
// (block-sparse attention: a sliding window with global tokens visits only the band's tiles and
// the global rows and columns). Same bits as visiting it: an empty tile adds exact zeros to every
// sum. Finding the empty tiles reads the mask once, n^2 bytes against the n^2 d products skipped.
// sparse_attention gives the pattern as a description instead, and no mask exists: a tile is
// visited when the window band crosses it, a global position falls among its rows or columns (a
// binary search), or its offsets i - j hold a multiple of the stride; hide() decides each entry
// from the same description. The entries hidden are those of the written-out mask, the tiles
// visited differ only by empty ones: the same bits, in O(n) memory.
//
// Threads, with the same bits at any thread count. Forward: tiles of queries are independent.
// Backward: the key tiles of a batch block are dealt to G groups (tile t to group t mod G, G fixed
// by the sizes alone); each group owns its tiles' rows of dK and dV and adds dQ into its own
// buffer, and the buffers are summed in group order at the end (G - 1 extra copies of dQ: linear
// memory).
#include "core/ops/tiled_attention.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/ops/attention_common.hpp"
#include "core/ops/broadcast_map.hpp"
#include "core/runtime/gemm_plan.hpp"
#include "core/runtime/parallel.hpp"
#include "core/runtime/vmath.hpp"
#include "core/ops/transpose.hpp"

namespace attnlab {

namespace {

// Where a key tile stands to a query tile: outside the band (nothing visible), inside it (every
// entry visible by position), or across its edge (entry by entry).
enum class Overlap { none, whole, part };

template <class T>
struct Tiling {
  std::size_t B = 0, Lq = 0, Lk = 0, d = 0, dv = 0;  // B: the leading dims flattened
  std::size_t bq = 0, bk = 0;                         // rows of Q and of K per tile
  T scale = T(1);
  bool causal = false;
  std::optional<std::size_t> window;
  std::shared_ptr<const Allowed> allowed;  // one copy of the caller's mask, shared with the backward
  detail::BroadcastMap mask_map;
  std::vector<char> tile_allows;  // with a mask: [b][qt][kt] whether it allows an entry of that tile
  // A sparse pattern (sparse_attention): entries outside the window band are visible too where
  // the query or the key is global, or (stride > 0) where |i - j| is a multiple of the stride.
  struct Pattern {
    std::size_t window = 0, stride = 0;
    std::size_t blocks = 1;            // 1: the same global positions for every batch block
    std::vector<char> global;          // [block][position] over max(Lq, Lk) positions
    std::vector<std::size_t> sorted;   // [block] ... the global positions in order, for the tile test
    std::vector<std::size_t> begin;    // [block]: where block's positions start in `sorted` (blocks + 1 entries)
  };
  std::shared_ptr<const Pattern> pattern;
  std::size_t positions = 0;  // max(Lq, Lk): the length of a block's global flags

  const char* global_flags(std::size_t b) const {
    return pattern->global.data() + (pattern->blocks == 1 ? 0 : b) * positions;
  }
  // Whether tile (qt, kt) of block b can hold an entry the pattern allows (an empty tile adds
  // exact zeros: visiting one the test lets through changes no bit).
  bool pattern_visits(std::size_t b, std::size_t qt, std::size_t kt) const {
    if (!pattern) return true;
    const std::size_t i0 = qt * bq, i1 = i0 + rows_q(qt), j0 = kt * bk, j1 = j0 + rows_k(kt), w = pattern->window;
    if (j0 <= i1 - 1 + w && j1 - 1 + w >= i0) return true;  // the band crosses the tile
    const std::size_t blk = pattern->blocks == 1 ? 0 : b;
    const auto first = pattern->sorted.begin() + long(pattern->begin[blk]),
               last = pattern->sorted.begin() + long(pattern->begin[blk + 1]);
    const auto any_in = [&](std::size_t lo, std::size_t hi) {
      const auto it = std::lower_bound(first, last, lo);
      return it != last && *it < hi;
    };
    if (any_in(i0, i1) || any_in(j0, j1)) return true;  // a global row or column
    if (pattern->stride == 0) return false;
    // i - j over the tile runs through the integers [i0 - j1 + 1, i1 - 1 - j0]: is a multiple of
    // the stride among them (|i - j| % s == 0 exactly when i - j is a multiple of s)?
    const long lo = long(i0) - long(j1) + 1, hi = long(i1) - 1 - long(j0), s = long(pattern->stride);
    const long below = hi >= 0 ? hi / s * s : -((-hi + s - 1) / s) * s;  // the largest multiple <= hi
    return below >= lo;
  }

  bool visits(std::size_t b, std::size_t qt, std::size_t kt) const {
    return (tile_allows.empty() || tile_allows[(b * q_tiles() + qt) * k_tiles() + kt]) && pattern_visits(b, qt, kt);
  }

  std::size_t q_tiles() const { return (Lq + bq - 1) / bq; }
  std::size_t k_tiles() const { return (Lk + bk - 1) / bk; }
  std::size_t rows_q(std::size_t tile) const { return std::min(bq, Lq - tile * bq); }
  std::size_t rows_k(std::size_t tile) const { return std::min(bk, Lk - tile * bk); }
  // By position, query i sees keys [first_key(i), end_key(i)); both grow with i.
  std::size_t first_key(std::size_t i) const { return window && i > *window ? i - *window : 0; }
  std::size_t end_key(std::size_t i) const {
    if (causal) return std::min(Lk, i + 1);
    if (window) return std::min(Lk, i + *window + 1);
    return Lk;
  }
  Overlap overlap(std::size_t qt, std::size_t kt) const {
    const std::size_t i0 = qt * bq, i1 = i0 + rows_q(qt), j0 = kt * bk, j1 = j0 + rows_k(kt);
    if (j0 >= end_key(i1 - 1) || j1 <= first_key(i0)) return Overlap::none;
    return first_key(i1 - 1) <= j0 && j1 <= end_key(i0) ? Overlap::whole : Overlap::part;
  }
  // Sets the hidden scores of tile (qt, kt) of batch block b to -inf; S has rows bk apart.
  void hide(std::size_t b, std::size_t qt, std::size_t kt, Overlap o, T* S) const {
    const bool* mask = allowed ? allowed->mask().data() : nullptr;
    if (o == Overlap::whole && !mask && !pattern) return;
    const T hidden = -std::numeric_limits<T>::infinity();
    const std::size_t i0 = qt * bq, j0 = kt * bk, nk = rows_k(kt);
    const std::size_t stride = pattern ? pattern->stride : 0;
    for (std::size_t r = 0; r < rows_q(qt); ++r) {
      const std::size_t i = i0 + r, lo = first_key(i), hi = end_key(i);
      T* s = S + r * bk;
      // The pattern, entry by entry: a global row sees everything; otherwise the band, a global
      // key, or j = i mod the stride (|i - j| a multiple of it), its residue stepped along the row.
      const char* g = pattern ? global_flags(b) : nullptr;
      const bool all = !pattern || g[i];
      const std::size_t i_mod = stride ? i % stride : 0;
      std::size_t j_mod = stride ? j0 % stride : 0;
      for (std::size_t c = 0; c < nk; ++c) {
        const std::size_t j = j0 + c;
        const bool by_pattern =
            all || (i > j ? i - j : j - i) <= pattern->window || g[j] || (stride && j_mod == i_mod);
        if (stride) j_mod = j_mod + 1 == stride ? 0 : j_mod + 1;
        if (j < lo || j >= hi || !by_pattern || (mask && !mask[mask_map.at(b, i, j)])) s[c] = hidden;
      }
    }
  }
};

// One product for every tile shape: full tiles, and the shorter last tile of Q and/or of K.
template <class T>
struct TilePlans {
  GemmPlan<T> plan[2][2];  // [last query tile is short][last key tile is short]
  template <class Make>
  TilePlans(const Tiling<T>& t, Make make) {
    const std::size_t nq[2] = {t.bq, t.rows_q(t.q_tiles() - 1)}, nk[2] = {t.bk, t.rows_k(t.k_tiles() - 1)};
    for (int a = 0; a < 2; ++a)
      for (int c = 0; c < 2; ++c) plan[a][c] = make(nq[a], nk[c]);
  }
  const GemmPlan<T>& operator()(const Tiling<T>& t, std::size_t qt, std::size_t kt) const {
    return plan[t.rows_q(qt) < t.bq][t.rows_k(kt) < t.bk];
  }
};

template <class T>
void tiled_forward(const Tiling<T>& t, const T* Q, const T* K, const T* V, T* O, T* lse) {
  // scale K^T per batch block (d x Lk): the right operand of S = Q (scale K^T).
  std::vector<T> kt_all(t.B * t.d * t.Lk);
  parallel_for(t.B, 1, [&](std::size_t first, std::size_t last) {
    for (std::size_t b = first; b < last; ++b)
      detail::transpose_scaled(K + b * t.Lk * t.d, t.Lk, t.d, t.d, t.scale, kt_all.data() + b * t.d * t.Lk,
                               t.Lk);
  });
  const TilePlans<T> scores(t, [&](std::size_t nq, std::size_t nk) {
    return GemmPlan<T>(false, nq, nk, t.d, t.d, t.Lk, t.bk);
  });
  const TilePlans<T> weigh(t, [&](std::size_t nq, std::size_t nk) {
    return GemmPlan<T>(false, nq, t.dv, nk, t.bk, t.dv, t.dv, /*accumulate=*/true);
  });
  const std::size_t per_item = t.bq * t.Lk * std::max<std::size_t>(t.d + t.dv, 1);
  const std::size_t grain = grain_for(per_item, std::size_t(1) << 16);
  const T neg_inf = -std::numeric_limits<T>::infinity();
  parallel_for(t.B * t.q_tiles(), grain, [&](std::size_t first, std::size_t last) {
    std::vector<T> S(t.bq * t.bk), acc(t.bq * t.dv), m(t.bq), l(t.bq);
    for (std::size_t item = first; item < last; ++item) {
      const std::size_t b = item / t.q_tiles(), qt = item % t.q_tiles(), i0 = qt * t.bq, nq = t.rows_q(qt);
      const T* Qi = Q + (b * t.Lq + i0) * t.d;
      std::fill(m.begin(), m.end(), neg_inf);
      std::fill(l.begin(), l.end(), T(0));
      std::fill(acc.begin(), acc.end(), T(0));
      for (std::size_t kt = 0; kt < t.k_tiles(); ++kt) {
        const Overlap o = t.overlap(qt, kt);
        if (o == Overlap::none || !t.visits(b, qt, kt)) continue;
        const std::size_t j0 = kt * t.bk, nk = t.rows_k(kt);
        scores(t, qt, kt)(Qi, kt_all.data() + b * t.d * t.Lk + j0, S.data());
        t.hide(b, qt, kt, o, S.data());
        for (std::size_t r = 0; r < nq; ++r) {
          T* s = S.data() + r * t.bk;
          const T mx = vmath::max(s, nk);
          if (mx == neg_inf) {  // nothing visible in this tile: it adds nothing to the row
            std::fill(s, s + nk, T(0));
            continue;
          }
          const T m_new = std::max(m[r], mx);
          const T alpha = std::exp(m[r] - m_new);  // 0 while the row was empty (m = -inf)
          for (std::size_t c = 0; c < nk; ++c) s[c] -= m_new;
          vmath::exp_nonpositive_n(s, s, nk);  // s - m <= 0; hidden: exp(-inf) = 0
          l[r] = l[r] * alpha + vmath::sum(s, nk);
          if (alpha != T(1))
            for (std::size_t c = 0; c < t.dv; ++c) acc[r * t.dv + c] *= alpha;
          m[r] = m_new;
        }
        weigh(t, qt, kt)(S.data(), V + (b * t.Lk + j0) * t.dv, acc.data());
      }
      for (std::size_t r = 0; r < nq; ++r) {
        T* o_row = O + (b * t.Lq + i0 + r) * t.dv;
        const T inv = l[r] > T(0) ? T(1) / l[r] : T(0);  // l = 0: no key visible, a zero row
        for (std::size_t c = 0; c < t.dv; ++c) o_row[c] = acc[r * t.dv + c] * inv;
        lse[b * t.Lq + i0 + r] = l[r] > T(0) ? m[r] + std::log(l[r]) : T(0);
      }
    }
  });
}

// For each batch block and tile, whether the mask allows any of its entries (the kernel skips the
// tiles it does not): one pass over the mask, a row of a tile at a time.
static_assert(sizeof(bool) == 1, "tiles_the_mask_allows searches a mask's bools as bytes");

template <class T>
std::vector<char> tiles_the_mask_allows(const Tiling<T>& t) {
  std::vector<char> allows(t.B * t.q_tiles() * t.k_tiles(), 0);
  const bool* mask = t.allowed->mask().data();
  parallel_for(t.B * t.q_tiles(), 1, [&](std::size_t first, std::size_t last) {
    for (std::size_t item = first; item < last; ++item) {
      const std::size_t b = item / t.q_tiles(), qt = item % t.q_tiles();
      for (std::size_t kt = 0; kt < t.k_tiles(); ++kt) {
        char& any = allows[item * t.k_tiles() + kt];
        const std::size_t nk = t.mask_map.col_stride == 0 ? 1 : t.rows_k(kt);  // a stretched row: one entry
        for (std::size_t r = 0; r < t.rows_q(qt) && !any; ++r) {
          const bool* row = mask + t.mask_map.at(b, qt * t.bq + r, kt * t.bk);
          if (t.mask_map.col_stride <= 1)  // contiguous (or one entry): a byte search
            any = std::memchr(row, 1, nk) != nullptr;
          else
            for (std::size_t c = 0; c < nk && !any; ++c) any = row[c * t.mask_map.col_stride];
        }
      }
    }
  });
  return allows;
}

// Groups of key tiles per batch block in the backward: two work items even with one batch block
// (this machine's two cores; tiles are dealt in turn, so a causal mask loads both alike), one
// with more, so that there is at most one extra dQ buffer. Sizes alone decide it (same bits at
// any thread count).
template <class T>
std::size_t key_groups(const Tiling<T>& t) {
  return std::max<std::size_t>(1, std::min(t.k_tiles(), (2 + t.B - 1) / t.B));
}

// dQ, dK, dV are written whole (null: not wanted).
template <class T>
void tiled_backward(const Tiling<T>& t, const T* Q, const T* K, const T* V, const T* O, const T* dO,
                    const T* lse, T* dQ, T* dK, T* dV) {
  const std::size_t G = key_groups(t), n_k = t.Lk * t.d, n_v = t.Lk * t.dv, n_q = t.Lq * t.d;
  if (dK) std::fill(dK, dK + t.B * n_k, T(0));
  if (dV) std::fill(dV, dV + t.B * n_v, T(0));
  // dQ of group 0 goes to dQ itself, of group g > 0 to extra[(b (G - 1) + g - 1) n_q ...].
  std::vector<T> extra(dQ ? t.B * (G - 1) * n_q : 0, T(0));
  if (dQ) std::fill(dQ, dQ + t.B * n_q, T(0));
  std::vector<T> D(t.B * t.Lq);  // D_i = dO_i . O_i
  for (std::size_t i = 0; i < D.size(); ++i) D[i] = vmath::dot(dO + i * t.dv, O + i * t.dv, t.dv);

  const TilePlans<T> scores(t, [&](std::size_t nq, std::size_t nk) {
    return GemmPlan<T>(false, nq, nk, t.d, t.d, t.bk, t.bk);
  });
  const TilePlans<T> grad_v(t, [&](std::size_t nq, std::size_t nk) {  // dV_j += P^T dO_i
    return GemmPlan<T>(true, nk, t.dv, nq, t.bk, t.dv, t.dv, true);
  });
  const TilePlans<T> grad_p(t, [&](std::size_t nq, std::size_t nk) {  // dP = dO_i V_j^T
    return GemmPlan<T>(false, nq, nk, t.dv, t.dv, t.bk, t.bk);
  });
  const TilePlans<T> grad_q(t, [&](std::size_t nq, std::size_t nk) {  // dQ_i += dS K_j
    return GemmPlan<T>(false, nq, t.d, nk, t.bk, t.d, t.d, true);
  });
  const TilePlans<T> grad_k(t, [&](std::size_t nq, std::size_t nk) {  // dK_j += dS^T Q_i
    return GemmPlan<T>(true, nk, t.d, nq, t.bk, t.d, t.d, true);
  });
  const bool need_dS = dQ || dK;
  parallel_for(t.B * G, 1, [&](std::size_t first, std::size_t last) {
    std::vector<T> kt(t.d * t.bk), vt(t.dv * t.bk), P(t.bq * t.bk), dS(t.bq * t.bk);
    for (std::size_t item = first; item < last; ++item) {
      const std::size_t b = item / G, g = item % G;
      T* dQ_g = !dQ ? nullptr : g == 0 ? dQ + b * n_q : extra.data() + (b * (G - 1) + g - 1) * n_q;
      for (std::size_t ktile = g; ktile < t.k_tiles(); ktile += G) {
        const std::size_t j0 = ktile * t.bk, nk = t.rows_k(ktile);
        const T* Kj = K + b * n_k + j0 * t.d;
        const T* Vj = V + b * n_v + j0 * t.dv;
        for (std::size_t r = 0; r < nk; ++r) {
          for (std::size_t c = 0; c < t.d; ++c) kt[c * t.bk + r] = t.scale * Kj[r * t.d + c];
          for (std::size_t c = 0; c < t.dv; ++c) vt[c * t.bk + r] = Vj[r * t.dv + c];
        }
        for (std::size_t qt = 0; qt < t.q_tiles(); ++qt) {
          const Overlap o = t.overlap(qt, ktile);
          if (o == Overlap::none || !t.visits(b, qt, ktile)) continue;
          const std::size_t i0 = qt * t.bq, nq = t.rows_q(qt);
          const T* Qi = Q + b * n_q + i0 * t.d;
          const T* dOi = dO + (b * t.Lq + i0) * t.dv;
          scores(t, qt, ktile)(Qi, kt.data(), P.data());
          t.hide(b, qt, ktile, o, P.data());
          for (std::size_t r = 0; r < nq; ++r) {  // P = exp(S - L), 0 where hidden
            T* p = P.data() + r * t.bk;
            const T L = lse[b * t.Lq + i0 + r];
            for (std::size_t c = 0; c < nk; ++c) p[c] -= L;
            vmath::exp_nonpositive_n(p, p, nk);  // S - L <= 0: L = m + log l >= m
          }
          if (dV) grad_v(t, qt, ktile)(P.data(), dOi, dV + b * n_v + j0 * t.dv);
          if (!need_dS) continue;
          grad_p(t, qt, ktile)(dOi, vt.data(), dS.data());
          for (std::size_t r = 0; r < nq; ++r)  // dS = P (dP - D) scale
            detail::softmax_backward_row(dS.data() + r * t.bk, P.data() + r * t.bk, D[b * t.Lq + i0 + r], t.scale, nk);
          if (dQ) grad_q(t, qt, ktile)(dS.data(), Kj, dQ_g + i0 * t.d);
          if (dK) grad_k(t, qt, ktile)(dS.data(), Qi, dK + b * n_k + j0 * t.d);
        }
      }
    }
  });
  if (dQ && G > 1)  // the groups' dQ in group order
    parallel_for(t.B, 1, [&](std::size_t first, std::size_t last) {
      for (std::size_t b = first; b < last; ++b)
        for (std::size_t g = 1; g < G; ++g) {
          const T* add = extra.data() + (b * (G - 1) + g - 1) * n_q;
          T* to = dQ + b * n_q;
          for (std::size_t e = 0; e < n_q; ++e) to[e] += add[e];
        }
    });
}

// The tile size along K: the largest of 64, 32, 16, 8 for which a tile product (64 query rows x
// bk keys x max(d, dv)) stays within the generated kernels' range (core/runtime/gemm_plan.hpp).
std::size_t default_key_rows(std::size_t bq, std::size_t width) {
  for (std::size_t bk : {64, 32, 16, 8})
    if (bq * bk * width < small_gemm_limit) return bk;
  return 64;  // wide heads: BLAS does the products
}

// The pattern checked against the shapes and laid out for the kernel: O(B n) flags at most.
template <class T>
std::shared_ptr<const typename Tiling<T>::Pattern> described_pattern(const char* op, const SparsePattern& p,
                                                                    const Tiling<T>& t, const std::string& shapes) {
  check(p.window >= 0, op, "the window must be >= 0, got ", p.window, " for ", shapes);
  check(p.stride >= 0, op, "the stride must be >= 0 (0: none), got ", p.stride, " for ", shapes);
  check(p.global_by_block.empty() || p.global.empty(), op,
        "global positions given both for every block and block by block, for ", shapes);
  check(p.global_by_block.empty() || p.global_by_block.size() == t.B, op, "global_by_block holds ",
        p.global_by_block.size(), " lists for ", t.B, " batch blocks of ", shapes);
  auto out = std::make_shared<typename Tiling<T>::Pattern>();
  out->window = std::size_t(p.window), out->stride = std::size_t(p.stride);
  out->blocks = p.global_by_block.empty() ? 1 : t.B;
  const std::size_t n = std::max(t.Lq, t.Lk), limit = std::min(t.Lq, t.Lk);
  out->global.assign(out->blocks * n, 0);
  out->begin.push_back(0);
  for (std::size_t b = 0; b < out->blocks; ++b) {
    const std::vector<long>& list = p.global_by_block.empty() ? p.global : p.global_by_block[b];
    for (long i : list) {
      check(i >= 0 && std::size_t(i) < limit, op, "global position ", i, out->blocks > 1 ? " of block " + std::to_string(b) : "",
            " is not a position of both the queries and the keys (0 .. ", long(limit) - 1, ") for ", shapes);
      check(!out->global[b * n + std::size_t(i)], op, "global position ", i, " given twice", " for ", shapes);
      out->global[b * n + std::size_t(i)] = 1;
      out->sorted.push_back(std::size_t(i));
    }
    std::sort(out->sorted.begin() + long(out->begin.back()), out->sorted.end());
    out->begin.push_back(out->sorted.size());
  }
  return out;
}

template <class T>
Tensor<T> run(const char* op, const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v,
              std::optional<std::size_t> window, const TiledAttentionOptions<T>& options,
              const SparsePattern* pattern = nullptr) {
  const detail::AttentionShapes sh = detail::attention_shapes(op, q, k, v);
  const std::string& shapes = sh.text;
  Tiling<T> t;
  t.B = sh.B;
  t.Lq = sh.Lq;
  t.Lk = sh.Lk;
  t.d = sh.d;
  t.dv = sh.dv;
  const Shape score_shape = sh.scores(), out_shape = sh.output();
  if (options.allowed) {
    t.mask_map = detail::allowed_map(op, *options.allowed, score_shape, shapes);
    t.allowed = std::make_shared<const Allowed>(*options.allowed);
  }
  t.causal = options.causal;
  t.window = window;
  t.scale = T(detail::attention_scale(options.scale, t.d));
  t.bq = options.block_q ? options.block_q : 64;
  t.bk = options.block_k ? options.block_k : default_key_rows(t.bq, std::max(t.d, t.dv));
  t.bq = std::max<std::size_t>(1, std::min(t.bq, t.Lq));
  t.bk = std::max<std::size_t>(1, std::min(t.bk, t.Lk));
  if (t.allowed && t.Lq > 0 && t.Lk > 0 && t.B > 0) t.tile_allows = tiles_the_mask_allows(t);
  if (pattern) t.pattern = described_pattern(op, *pattern, t, shapes), t.positions = std::max(t.Lq, t.Lk);

  Array<T> out = Array<T>::from_shape(out_shape);
  Array<T> lse = Array<T>::from_shape({t.B * t.Lq});
  if (t.Lq > 0 && t.Lk > 0 && t.B > 0)
    tiled_forward(t, q.value().data(), k.value().data(), v.value().data(), out.data(), lse.data());
  else
    out.fill(T(0));  // no keys: every row empty

  BackwardFn<T> backward = [t, lse = std::move(lse)](Node<T>& n) {
    detail::InputGradients<T> grads(n, 3);
    if (t.Lq > 0 && t.Lk > 0 && t.B > 0)
      tiled_backward(t, n.input(0).data(), n.input(1).data(), n.input(2).data(), n.value.data(), n.grad.data(),
                     lse.data(), grads.ptr(0), grads.ptr(1), grads.ptr(2));
    else
      grads.zero();
    grads.add_to(n);
  };
  return record<T>(op, std::move(out), {&q, &k, &v}, std::move(backward));
}

}  // namespace

template <class T>
Tensor<T> tiled_attention(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v,
                          const TiledAttentionOptions<T>& options) {
  return run("tiled_attention", q, k, v, std::nullopt, options);
}

template <class T>
Tensor<T> local_attention(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, std::size_t window,
                          const TiledAttentionOptions<T>& options) {
  return run("local_attention", q, k, v, window, options);
}

template <class T>
Tensor<T> sparse_attention(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v, const SparsePattern& pattern,
                           const TiledAttentionOptions<T>& options) {
  return run("sparse_attention", q, k, v, std::nullopt, options, &pattern);
}

#define ATTNLAB_INSTANTIATE(T)                                                                       \
  template Tensor<T> sparse_attention<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>&,       \
                                         const SparsePattern&, const TiledAttentionOptions<T>&);      \
  template Tensor<T> tiled_attention<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>&,        \
                                        const TiledAttentionOptions<T>&);                             \
  template Tensor<T> local_attention<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>&,        \
                                        std::size_t, const TiledAttentionOptions<T>&);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab
