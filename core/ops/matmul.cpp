// Matrix products as GEMM calls on contiguous row-major blocks. Transposes stay BLAS flags in the
// forward and in the backward: for Y = op(A) op(B),
//   dop(A) = dY op(B)^T   ->  dA = dY op(B)^T          (A stored as is)
//                             dA = op(B) dY^T          (A stored transposed: dA = (dop(A))^T)
//   dop(B) = op(A)^T dY   ->  dB = op(A)^T dY  or  dB = dY^T op(A)
// Every right-hand side above is a single gemm with flags, never a materialized transpose.
#include "core/ops/matmul.hpp"

#include <algorithm>
#include <memory>

#include "core/runtime/blas.hpp"
#include "core/runtime/parallel.hpp"
#include "core/runtime/panel_gemm.hpp"
#include "core/runtime/tall_gemm.hpp"

namespace attnlab {

namespace {

// Lines (rows or columns) per parallel chunk of a pass over a matrix, so small layers run inline.
std::size_t lines_per_chunk(std::size_t length) { return grain_for(length, pass_grain); }

// sum[j] += sum over r < rows of x[r * stride + j], j < width, each sum in row order. Restrict:
// the sums and the rows do not overlap, so the loop over j runs on whole vectors (with plain
// pointers it did not, and a Linear layer's bias gradient cost 4 % of a GPT step).
template <class T>
void add_rows(const T* __restrict x, std::size_t rows, std::size_t stride, std::size_t width, T* __restrict sum) {
  for (std::size_t r = 0; r < rows; ++r) {
    const T* row = x + r * stride;
    for (std::size_t j = 0; j < width; ++j) sum[j] += row[j];
  }
}

// C (m x n) = op(A) op(B) + beta C on dense row-major blocks (row strides follow from the flags).
// k == 0 is an empty sum: C = beta C (BLAS would also reject the zero leading dimension).
template <class T>
void gemm_block(bool ta, bool tb, std::size_t m, std::size_t n, std::size_t k, const T* a,
                const T* b, T beta, T* c) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (beta == T(0)) std::fill(c, c + m * n, T(0));
    return;
  }
  gemm<T>(ta, tb, m, n, k, T(1), a, ta ? m : k, b, tb ? k : n, beta, c, n);
}

// Runs one(i) for blocks i < count on the pool, a chunk at least 2^16 multiply-adds (a decoder
// step's context is 64 blocks of 1 x 25 x 128). Only for blocks that write disjoint outputs.
template <class F>
void each_block(std::size_t count, std::size_t block_work, F&& one) {
  parallel_for(count, grain_for(block_work, std::size_t(1) << 16), [&](std::size_t first, std::size_t last) {
    for (std::size_t i = first; i < last; ++i) one(i);
  });
}

// How one matmul maps onto gemm calls: which block of A and of B feeds each output block.
struct MatmulPlan {
  bool ta = false, tb = false;
  std::size_t m = 0, n = 0, k = 0;
  std::size_t a_blocks = 1, b_blocks = 1, out_blocks = 1;
  std::vector<std::size_t> a_of, b_of;  // per output block: index of its A block and B block
  // B has a single block and A is not transposed: A's batch folds into M, one gemm of
  // (a_blocks * m) rows. (The mirror case, A single, cannot fold in row-major: the rows of
  // dY_i B_i interleave.) Broadcast batch dims otherwise loop, one gemm per output block.
  bool fold = false;
  Shape out_shape;
};

std::string flags_str(bool ta, bool tb) {
  if (!ta && !tb) return "";
  return std::string(" (") + (ta ? "transpose_a" : "") + (ta && tb ? ", " : "") +
         (tb ? "transpose_b" : "") + ")";
}

MatmulPlan plan_matmul(const Shape& as, const Shape& bs, bool ta, bool tb) {
  check(!as.empty() && !bs.empty(), "matmul", "0-D operand: ", shape_str(as), " x ",
        shape_str(bs), "; use mul for a scalar factor");
  check(!(as.size() == 1 && ta), "matmul", "transpose_a given for the 1-D operand ", shape_str(as));
  check(!(bs.size() == 1 && tb), "matmul", "transpose_b given for the 1-D operand ", shape_str(bs));
  // numpy promotion: a vector on the left is a row (1, k), on the right a column (k, 1).
  Shape a2 = as.size() == 1 ? Shape{1, as[0]} : as;
  Shape b2 = bs.size() == 1 ? Shape{bs[0], 1} : bs;

  MatmulPlan p;
  p.ta = ta;
  p.tb = tb;
  const std::size_t ar = a2[a2.size() - 2], ac = a2.back();
  const std::size_t br = b2[b2.size() - 2], bc = b2.back();
  p.m = ta ? ac : ar;
  const std::size_t ka = ta ? ar : ac;
  const std::size_t kb = tb ? bc : br;
  p.n = tb ? br : bc;
  check(ka == kb, "matmul", "inner dimensions differ: ", shape_str(as), " x ", shape_str(bs),
        flags_str(ta, tb));
  p.k = ka;

  // Batch dims, right-aligned, numpy broadcasting.
  const Shape ab(a2.begin(), a2.end() - 2), bb(b2.begin(), b2.end() - 2);
  const std::size_t nd = std::max(ab.size(), bb.size());
  Shape pa(nd, 1), pb(nd, 1), ob(nd, 1);
  std::copy(ab.begin(), ab.end(), pa.begin() + (nd - ab.size()));
  std::copy(bb.begin(), bb.end(), pb.begin() + (nd - bb.size()));
  for (std::size_t d = 0; d < nd; ++d) {
    check(pa[d] == pb[d] || pa[d] == 1 || pb[d] == 1, "matmul", "batch dims ", shape_str(ab),
          " and ", shape_str(bb), " do not broadcast: ", shape_str(as), " x ", shape_str(bs));
    ob[d] = pa[d] == 1 ? pb[d] : pa[d];
  }
  p.a_blocks = shape_size(ab);
  p.b_blocks = shape_size(bb);
  p.out_blocks = shape_size(ob);
  p.fold = p.b_blocks == 1 && !ta && p.a_blocks == p.out_blocks;

  if (!p.fold) {
    // Walk the output batch index like an odometer; a broadcast dim (size 1) does not advance
    // its operand's block index.
    p.a_of.resize(p.out_blocks);
    p.b_of.resize(p.out_blocks);
    std::vector<std::size_t> sa(nd), sb(nd), idx(nd, 0);
    std::size_t stride_a = 1, stride_b = 1;
    for (std::size_t d = nd; d-- > 0;) {
      sa[d] = pa[d] == 1 ? 0 : stride_a;
      sb[d] = pb[d] == 1 ? 0 : stride_b;
      stride_a *= pa[d];
      stride_b *= pb[d];
    }
    std::size_t ia = 0, ib = 0;
    for (std::size_t i = 0; i < p.out_blocks; ++i) {
      p.a_of[i] = ia;
      p.b_of[i] = ib;
      for (std::size_t d = nd; d-- > 0;) {
        ia += sa[d];
        ib += sb[d];
        if (++idx[d] < ob[d]) break;
        ia -= sa[d] * ob[d];
        ib -= sb[d] * ob[d];
        idx[d] = 0;
      }
    }
  }

  p.out_shape = ob;
  if (as.size() > 1) p.out_shape.push_back(p.m);
  if (bs.size() > 1) p.out_shape.push_back(p.n);
  return p;
}

}  // namespace

// Y = op(A) op(B), per batch block.
template <class T>
Tensor<T> matmul(const Tensor<T>& a, const Tensor<T>& b, bool transpose_a, bool transpose_b) {
  need("matmul", a, "left operand");
  need("matmul", b, "right operand");
  auto plan = std::make_shared<const MatmulPlan>(
      plan_matmul(a.shape(), b.shape(), transpose_a, transpose_b));
  const MatmulPlan& p = *plan;
  const std::size_t ablk = p.m * p.k, bblk = p.k * p.n, cblk = p.m * p.n;

  Array<T> out = Array<T>::from_shape(p.out_shape);
  const T* A = a.value().data();
  const T* B = b.value().data();
  T* C = out.data();
  if (p.fold) {
    gemm_block(false, p.tb, p.a_blocks * p.m, p.n, p.k, A, B, T(0), C);
  } else {
    each_block(p.out_blocks, p.m * p.n * p.k, [&](std::size_t i) {
      gemm_block(p.ta, p.tb, p.m, p.n, p.k, A + p.a_of[i] * ablk, B + p.b_of[i] * bblk, T(0), C + i * cblk);
    });
  }

  return record<T>("matmul", std::move(out), {&a, &b}, [plan, ablk, bblk, cblk](Node<T>& nd) {
    const MatmulPlan& p = *plan;
    const T* dY = nd.grad.data();
    const T* A = nd.input(0).data();
    const T* B = nd.input(1).data();
    // One gradient block, op(A)-shaped or op(B)-shaped, written with beta (0 first, then 1 to
    // accumulate blocks that broadcasting shared among several outputs).
    auto da_block = [&](std::size_t rows, const T* dy, const T* b, T beta, T* da) {
      if (!p.ta) gemm_block(false, !p.tb, rows, p.k, p.n, dy, b, beta, da);  // dY op(B)^T
      else gemm_block(p.tb, true, p.k, rows, p.n, b, dy, beta, da);          // op(B) dY^T
    };
    auto db_block = [&](std::size_t rows, const T* a, const T* dy, T beta, T* db) {
      if (!p.tb) gemm_block(!p.ta, false, p.k, p.n, rows, a, dy, beta, db);  // op(A)^T dY
      else gemm_block(true, p.ta, p.n, p.k, rows, dy, a, beta, db);          // dY^T op(A)
    };
    // Per-block accumulation for the looping case; blocks no output used get zero. Without
    // broadcasting each gradient block comes from one output block: the blocks run in parallel.
    auto looped = [&](std::size_t nblocks, std::size_t blk, const std::vector<std::size_t>& of,
                      Array<T>& g, auto&& one) {
      if (nblocks == p.out_blocks) {
        each_block(nblocks, p.m * p.n * p.k, [&](std::size_t i) { one(i, of[i], T(0), g.data() + of[i] * blk); });
        return;
      }
      std::vector<char> touched(nblocks, 0);
      for (std::size_t i = 0; i < p.out_blocks; ++i) {
        const std::size_t j = of[i];
        one(i, j, touched[j] ? T(1) : T(0), g.data() + j * blk);
        touched[j] = 1;
      }
      for (std::size_t j = 0; j < nblocks; ++j)
        if (!touched[j]) std::fill(g.data() + j * blk, g.data() + (j + 1) * blk, T(0));
    };

    if (nd.needs_grad(0)) {
      Array<T> da = Array<T>::from_shape(nd.input(0).shape());
      if (p.fold) {
        da_block(p.a_blocks * p.m, dY, B, T(0), da.data());
      } else {
        looped(p.a_blocks, ablk, p.a_of, da, [&](std::size_t i, std::size_t, T beta, T* g) {
          da_block(p.m, dY + i * cblk, B + p.b_of[i] * bblk, beta, g);
        });
      }
      nd.add_grad(0, std::move(da));
    }
    if (nd.needs_grad(1)) {
      Array<T> db = Array<T>::from_shape(nd.input(1).shape());
      if (p.fold) {
        db_block(p.a_blocks * p.m, A, dY, T(0), db.data());  // K = all rows of the batch
      } else {
        looped(p.b_blocks, bblk, p.b_of, db, [&](std::size_t i, std::size_t, T beta, T* g) {
          db_block(p.m, A + p.a_of[i] * ablk, dY + i * cblk, beta, g);
        });
      }
      nd.add_grad(1, std::move(db));
    }
  });
}

// y = x W^T + b over all rows of x at once (R = prod of x's leading dims):
//   dx = dy W,  dW = dy^T x  (a sum over the R rows),  db = column sums of dy.
// R is tall and W small: the products go through core/runtime/tall_gemm (row blocks by
// generated kernels, in parallel), or one BLAS call when W is too large for a kernel.
template <class T>
Tensor<T> linear(const Tensor<T>& x, const Tensor<T>& weight, const Tensor<T>& bias) {
  need("linear", x, "input");
  need("linear", weight, "weight");
  const Shape xs = x.shape(), ws = weight.shape();
  check(xs.size() >= 1, "linear", "0-D input ", shape_str(xs), " with weight ", shape_str(ws));
  check(ws.size() == 2, "linear", "weight must be (out, in), got ", shape_str(ws));
  const std::size_t in = ws[1], out_f = ws[0];
  check(xs.back() == in, "linear", "input ", shape_str(xs), " has ", xs.back(),
        " features but weight ", shape_str(ws), " expects ", in);
  const bool has_bias = bias.defined();
  if (has_bias)
    check(bias.ndim() == 1 && bias.dim(0) == out_f, "linear", "bias ", shape_str(bias.shape()),
          " does not match weight ", shape_str(ws), "; expected (", out_f, ")");

  const std::size_t R = shape_size(Shape(xs.begin(), xs.end() - 1));
  Shape ys = xs;
  ys.back() = out_f;
  Array<T> y = Array<T>::from_shape(ys);
  const T* W = weight.value().data();
  const T* b = has_bias ? bias.value().data() : nullptr;
  // y starts as b in every row and the products are added on top: with generated kernels each
  // block of rows gets b just before its kernel runs, else one pass over y first, on every thread.
  if (tall_gemm_generated(out_f, in)) {
    gemm_tall_weight(R, out_f, in, x.value().data(), W, y.data(), /*accumulate=*/false, b);
  } else {
    T* yp = y.data();
    if (b)
      parallel_for(R, lines_per_chunk(out_f), [b, yp, out_f](std::size_t first, std::size_t last) {
        set_rows(yp + first * out_f, last - first, out_f, out_f, b);
      });
    gemm_block(false, true, R, out_f, in, x.value().data(), W, b ? T(1) : T(0), yp);
  }

  std::vector<Tensor<T>> inputs{x, weight};
  if (has_bias) inputs.push_back(bias);
  return record<T>("linear", std::move(y), inputs, [R, in, out_f, has_bias](Node<T>& nd) {
    const T* dy = nd.grad.data();
    if (nd.needs_grad(0)) {
      Array<T> dx = Array<T>::from_shape(nd.input(0).shape());
      gemm_tall(R, in, out_f, dy, nd.input(1).data(), dx.data());
      nd.add_grad(0, std::move(dx));
    }
    if (nd.needs_grad(1)) {
      Array<T> dw = Array<T>::from_shape(nd.input(1).shape());
      gemm_tall_transposed(out_f, in, R, dy, nd.input(0).data(), dw.data());
      nd.add_grad(1, std::move(dw));
    }
    if (has_bias && nd.needs_grad(2)) {
      // db_j = sum_r dy_rj. Threads take ranges of columns, each column summed in row order: the
      // same bits at any thread count.
      Array<T> db = xt::zeros<T>({out_f});
      T* g = db.data();
      parallel_for(out_f, lines_per_chunk(R), [g, dy, R, out_f](std::size_t first, std::size_t last) {
        add_rows(dy + first, R, out_f, last - first, g + first);
      });
      nd.add_grad(2, std::move(db));
    }
  });
}

#define ATTNLAB_INSTANTIATE(T)                                                       \
  template Tensor<T> matmul<T>(const Tensor<T>&, const Tensor<T>&, bool, bool);      \
  template Tensor<T> linear<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>&);
ATTNLAB_INSTANTIATE(float)
ATTNLAB_INSTANTIATE(double)
#undef ATTNLAB_INSTANTIATE

}  // namespace attnlab
