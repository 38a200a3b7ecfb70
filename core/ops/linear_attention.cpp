// Linear attention, forward and backward by hand.
//
// Per batch block, with f = phi(q_i), g_j = phi(k_j), phi(x) = x + 1 (x > 0), e^x (x <= 0):
//   S = sum_j g_j v_j^T (d x dv),  z = sum_j g_j     (causal: over j <= i, updated row by row)
//   num_i = S^T f_i,  den_i = f_i . z + eps,  O_i = num_i / den_i.
// Backward, with dO_i = dL/dO_i:
//   dnum_i = dO_i / den_i,   dden_i = -(dO_i . num_i) / den_i^2 = -(dO_i . O_i) / den_i
//   df_i   = S dnum_i + z dden_i                       (S, z as query i saw them)
//   R = sum_i f_i dnum_i^T,  r = sum_i f_i dden_i      (causal: over i >= j, a reverse scan)
//   dg_j   = R v_j + r,   dv_j = R^T g_j               (from S = sum_j g_j v_j^T, z = sum_j g_j)
//   dq = df * phi'(q),  dk = dg * phi'(k),  phi'(x) = 1 (x > 0), e^x (x <= 0).
// Saved: den (one number per query row); O is the node's value, phi is recomputed from Q and K.
// Batch blocks run in parallel, each on its own rows: the same bits at any thread count.
#include "core/ops/linear_attention.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "core/ops/attention_common.hpp"
#include "core/runtime/parallel.hpp"
#include "core/runtime/vmath.hpp"

namespace attnlab {

namespace {

// phi of a row, and phi' if asked: e^x by the vectorized exp (core/runtime/vmath.hpp) for the
// whole row, then x + 1 and 1 where x > 0 (e^x may overflow there; it is not used).
template <class T>
void phi_row(const T* x, std::size_t n, T* out, T* slope = nullptr) {
  vmath::exp_n(x, out, n);
  if (slope)
    for (std::size_t c = 0; c < n; ++c) slope[c] = x[c] > T(0) ? T(1) : out[c];
  for (std::size_t c = 0; c < n; ++c) out[c] = x[c] > T(0) ? x[c] + T(1) : out[c];
}

struct Sizes {
  std::size_t B = 0, Lq = 0, Lk = 0, d = 0, dv = 0;
  bool causal = false;
  double eps = 0;
};

// state (d x dv) += g v^T; z += g.
template <class T>
void add_outer(const T* g, const T* v, const Sizes& s, T* state, T* z) {
  for (std::size_t a = 0; a < s.d; ++a) {
    T* row = state + a * s.dv;
    for (std::size_t c = 0; c < s.dv; ++c) row[c] += g[a] * v[c];
    z[a] += g[a];
  }
}

// num = state^T f, den = f . z + eps, O_i = num / den.
template <class T>
void read_out(const T* f, const T* state, const T* z, const Sizes& s, T* o, T& den) {
  std::fill(o, o + s.dv, T(0));
  for (std::size_t a = 0; a < s.d; ++a) {
    const T* row = state + a * s.dv;
    for (std::size_t c = 0; c < s.dv; ++c) o[c] += f[a] * row[c];
  }
  den = vmath::dot(f, z, s.d) + T(s.eps);
  const T inv = T(1) / den;
  for (std::size_t c = 0; c < s.dv; ++c) o[c] *= inv;
}

template <class T>
void forward_block(const Sizes& s, const T* Q, const T* K, const T* V, T* O, T* den) {
  std::vector<T> state(s.d * s.dv, T(0)), z(s.d, T(0)), f(s.d), g(s.d);
  if (!s.causal)
    for (std::size_t j = 0; j < s.Lk; ++j) {
      phi_row(K + j * s.d, s.d, g.data());
      add_outer(g.data(), V + j * s.dv, s, state.data(), z.data());
    }
  for (std::size_t i = 0; i < s.Lq; ++i) {
    if (s.causal) {  // key i joins the state before query i reads it
      phi_row(K + i * s.d, s.d, g.data());
      add_outer(g.data(), V + i * s.dv, s, state.data(), z.data());
    }
    phi_row(Q + i * s.d, s.d, f.data());
    read_out(f.data(), state.data(), z.data(), s, O + i * s.dv, den[i]);
  }
}

// dQ, dK, dV written whole (null: not wanted).
template <class T>
void backward_block(const Sizes& s, const T* Q, const T* K, const T* V, const T* O, const T* dO, const T* den,
                    T* dQ, T* dK, T* dV) {
  std::vector<T> state(s.d * s.dv, T(0)), z(s.d, T(0)), f(s.d), g(s.d), slope(s.d), dnum(s.dv);
  std::vector<T> dden(s.Lq);
  for (std::size_t i = 0; i < s.Lq; ++i) dden[i] = -vmath::dot(dO + i * s.dv, O + i * s.dv, s.dv) / den[i];
  // df_i = S dnum_i + z dden_i, with S and z as query i saw them.
  if (!s.causal)
    for (std::size_t j = 0; j < s.Lk; ++j) {
      phi_row(K + j * s.d, s.d, g.data());
      add_outer(g.data(), V + j * s.dv, s, state.data(), z.data());
    }
  for (std::size_t i = 0; dQ && i < s.Lq; ++i) {
    if (s.causal) {
      phi_row(K + i * s.d, s.d, g.data());
      add_outer(g.data(), V + i * s.dv, s, state.data(), z.data());
    }
    const T inv = T(1) / den[i];
    for (std::size_t c = 0; c < s.dv; ++c) dnum[c] = dO[i * s.dv + c] * inv;
    phi_row(Q + i * s.d, s.d, f.data(), slope.data());
    for (std::size_t a = 0; a < s.d; ++a) {
      const T df = vmath::dot(state.data() + a * s.dv, dnum.data(), s.dv) + z[a] * dden[i];
      dQ[i * s.d + a] = df * slope[a];
    }
  }
  if (!dK && !dV) return;
  // R = sum f_i dnum_i^T, r = sum f_i dden_i over the queries that see key j.
  std::fill(state.begin(), state.end(), T(0));  // now R
  std::fill(z.begin(), z.end(), T(0));          // now r
  auto add_query = [&](std::size_t i) {
    phi_row(Q + i * s.d, s.d, f.data());
    const T inv = T(1) / den[i];
    for (std::size_t c = 0; c < s.dv; ++c) dnum[c] = dO[i * s.dv + c] * inv;
    for (std::size_t a = 0; a < s.d; ++a) {
      T* row = state.data() + a * s.dv;
      for (std::size_t c = 0; c < s.dv; ++c) row[c] += f[a] * dnum[c];
      z[a] += f[a] * dden[i];
    }
  };
  if (!s.causal)
    for (std::size_t i = 0; i < s.Lq; ++i) add_query(i);
  for (std::size_t j = s.Lk; j-- > 0;) {
    if (s.causal) add_query(j);  // queries i >= j
    phi_row(K + j * s.d, s.d, g.data(), slope.data());
    const T* vj = V + j * s.dv;
    if (dK)
      for (std::size_t a = 0; a < s.d; ++a) {
        const T dg = vmath::dot(state.data() + a * s.dv, vj, s.dv) + z[a];
        dK[j * s.d + a] = dg * slope[a];
      }
    if (dV) {
      T* dvj = dV + j * s.dv;
      std::fill(dvj, dvj + s.dv, T(0));
      for (std::size_t a = 0; a < s.d; ++a) {
        const T* row = state.data() + a * s.dv;
        for (std::size_t c = 0; c < s.dv; ++c) dvj[c] += g[a] * row[c];
      }
    }
  }
}

}  // namespace

template <class T>
Tensor<T> linear_attention(const Tensor<T>& q, const Tensor<T>& k, const Tensor<T>& v,
                           const LinearAttentionOptions& options) {
  const char* op = "linear_attention";
  const detail::AttentionShapes sh = detail::attention_shapes(op, q, k, v);
  const std::string& shapes = sh.text;
  Sizes s;
  s.B = sh.B;
  s.Lq = sh.Lq;
  s.Lk = sh.Lk;
  s.d = sh.d;
  s.dv = sh.dv;
  s.causal = options.causal;
  s.eps = options.eps;
  check(!s.causal || s.Lq == s.Lk, op, "causal needs Lq == Lk: ", shapes);
  check(options.eps > 0.0 && std::isfinite(options.eps), op, "eps must be positive and finite, got ", options.eps);
  Array<T> out = Array<T>::from_shape(sh.output());
  Array<T> den = Array<T>::from_shape({s.B * s.Lq});
  const T *Q = q.value().data(), *K = k.value().data(), *V = v.value().data();
  parallel_for(s.B, 1, [&](std::size_t first, std::size_t last) {
    for (std::size_t b = first; b < last; ++b)
      forward_block(s, Q + b * s.Lq * s.d, K + b * s.Lk * s.d, V + b * s.Lk * s.dv, out.data() + b * s.Lq * s.dv,
                    den.data() + b * s.Lq);
  });
  BackwardFn<T> backward = [s, den = std::move(den)](Node<T>& n) {
    detail::InputGradients<T> grads(n, 3);
    auto at = [&](std::size_t i, std::size_t offset) { return grads.ptr(i) ? grads.ptr(i) + offset : nullptr; };
    const T *Q = n.input(0).data(), *K = n.input(1).data(), *V = n.input(2).data();
    parallel_for(s.B, 1, [&](std::size_t first, std::size_t last) {
      for (std::size_t b = first; b < last; ++b)
        backward_block(s, Q + b * s.Lq * s.d, K + b * s.Lk * s.d, V + b * s.Lk * s.dv,
                       n.value.data() + b * s.Lq * s.dv, n.grad.data() + b * s.Lq * s.dv, den.data() + b * s.Lq,
                       at(0, b * s.Lq * s.d), at(1, b * s.Lk * s.d), at(2, b * s.Lk * s.dv));
    });
    grads.add_to(n);
  };
  return record<T>(op, std::move(out), {&q, &k, &v}, std::move(backward));
}

template Tensor<float> linear_attention<float>(const Tensor<float>&, const Tensor<float>&, const Tensor<float>&,
                                               const LinearAttentionOptions&);
template Tensor<double> linear_attention<double>(const Tensor<double>&, const Tensor<double>&,
                                                 const Tensor<double>&, const LinearAttentionOptions&);

}  // namespace attnlab
