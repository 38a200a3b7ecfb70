// sparse_attention (core/ops/tiled_attention.hpp): a sparse pattern given as a description (window,
// global positions, stride) and decided tile by tile, against tiled_attention with the same pattern
// written out as an n x n mask: the same bits in the output and in every gradient, on several
// patterns, shapes and tilings; memory that grows like n where the mask's grows like n^2; and the
// errors for patterns that cannot be.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <vector>

#include "core/ops.hpp"
#include "core/runtime/allocator.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;
using TD = Tensor<double>;
using TF = Tensor<float>;

namespace {

template <class T>
struct Grads {
  Array<T> out, dq, dk, dv;
};

template <class T>
Grads<T> run(const std::function<Tensor<T>(const Tensor<T>&, const Tensor<T>&, const Tensor<T>&)>& op,
             const Array<T>& q, const Array<T>& k, const Array<T>& v, std::uint64_t seed) {
  Tensor<T> Q(q, true), K(k, true), V(v, true);
  const Tensor<T> out = op(Q, K, V);
  out.backward(Array<T>(rand_array(out.shape(), seed)));
  return {out.value(), Q.grad(), K.grad(), V.grad()};
}

template <class T>
double max_abs(const Array<T>& a, const Array<T>& b) {
  REQUIRE(a.shape() == b.shape());
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a.data()[i]) - double(b.data()[i])));
  return m;
}

// The pattern written out: (B, Lq, Lk) over the batch blocks flattened (the reshape the caller's
// leading dims take), query i and key j allowed as sparse_attention's header says.
Mask written_out(const SparsePattern& p, std::size_t B, std::size_t Lq, std::size_t Lk, bool causal) {
  Mask m = Mask::from_shape({B, Lq, Lk});
  for (std::size_t b = 0; b < B; ++b) {
    const std::vector<long>& g = p.global_by_block.empty() ? p.global : p.global_by_block[b];
    const auto global = [&g](std::size_t i) {
      for (long x : g)
        if (std::size_t(x) == i) return true;
      return false;
    };
    for (std::size_t i = 0; i < Lq; ++i)
      for (std::size_t j = 0; j < Lk; ++j) {
        const std::size_t d = i > j ? i - j : j - i;
        const bool by_pattern = d <= std::size_t(p.window) || global(i) || global(j) ||
                                (p.stride > 0 && d % std::size_t(p.stride) == 0);
        m(b, i, j) = by_pattern && (!causal || j <= i);
      }
  }
  return m;
}

struct Case {
  const char* name;
  Shape q, k, v;
  SparsePattern pattern;
  bool causal = false;
  std::size_t bq = 0, bk = 0;
};

std::size_t blocks_of(const Shape& s) {
  std::size_t b = 1;
  for (std::size_t i = 0; i + 2 < s.size(); ++i) b *= s[i];
  return b;
}

}  // namespace

TEST_CASE("sparse_attention equals tiled_attention under the pattern's mask, bit for bit, in double and float") {
  const std::vector<Case> cases{
      {"window 2 + global {0, 5}", {2, 23, 4}, {2, 23, 4}, {2, 23, 3}, {2, {0, 5}, {}, 0}, false, 4, 4},
      {"window 1 + stride 4", {1, 30, 3}, {1, 30, 3}, {1, 30, 2}, {1, {}, {}, 4}, false, 3, 5},
      {"window 0 alone, default tiles", {1, 70, 8}, {1, 70, 8}, {1, 70, 8}, {0, {}, {}, 0}},
      {"window 3 + global + stride, default tiles", {2, 150, 8}, {2, 150, 8}, {2, 150, 4}, {3, {0, 1, 77}, {}, 16}},
      {"global by block (4-D)", {2, 3, 17, 4}, {2, 3, 17, 4}, {2, 3, 17, 2},
       {1, {}, {{0}, {}, {3, 9}, {16}, {5}, {}}, 0}, false, 4, 3},
      {"causal + window 2 + global {3} + stride 5", {2, 21, 4}, {2, 21, 4}, {2, 21, 3}, {2, {3}, {}, 5}, true, 4, 4},
      {"queries beyond the keys: rows that see nothing", {2, 19, 3}, {2, 11, 3}, {2, 11, 2}, {1, {}, {{}, {4}}, 0}, false, 4, 4},
      {"one-row tiles", {1, 12, 3}, {1, 12, 3}, {1, 12, 3}, {1, {6}, {}, 3}, false, 1, 1},
  };
  std::uint64_t seed = 500;
  for (const Case& c : cases) {
    CAPTURE(c.name);
    const std::size_t B = blocks_of(c.q), Lq = c.q[c.q.size() - 2], Lk = c.k[c.k.size() - 2];
    Shape mask_shape = c.q;
    mask_shape.back() = Lk;
    const Mask m = written_out(c.pattern, B, Lq, Lk, c.causal);
    const Array<double> q = rand_array(c.q, ++seed, -2, 2), k = rand_array(c.k, ++seed, -2, 2), v = rand_array(c.v, ++seed);
    TiledAttentionOptions<double> o;
    o.causal = c.causal, o.block_q = c.bq, o.block_k = c.bk;
    TiledAttentionOptions<double> with_mask = o;
    with_mask.causal = false;  // written into the mask
    with_mask.allowed = Allowed::where(Mask(xt::reshape_view(m, mask_shape)));
    const auto got = run<double>([&](const TD& Q, const TD& K, const TD& V) { return sparse_attention(Q, K, V, c.pattern, o); },
                                 q, k, v, ++seed);
    const auto want = run<double>([&](const TD& Q, const TD& K, const TD& V) { return tiled_attention(Q, K, V, with_mask); },
                                  q, k, v, seed);
    CHECK(max_abs(got.out, want.out) == 0.0);
    CHECK(max_abs(got.dq, want.dq) == 0.0);
    CHECK(max_abs(got.dk, want.dk) == 0.0);
    CHECK(max_abs(got.dv, want.dv) == 0.0);
    // and in float
    TiledAttentionOptions<float> of;
    of.causal = c.causal, of.block_q = c.bq, of.block_k = c.bk;
    TiledAttentionOptions<float> of_mask = of;
    of_mask.causal = false;
    of_mask.allowed = with_mask.allowed;
    const Array<float> qf = q, kf = k, vf = v;
    const auto got_f = run<float>([&](const TF& Q, const TF& K, const TF& V) { return sparse_attention(Q, K, V, c.pattern, of); },
                                  qf, kf, vf, seed);
    const auto want_f = run<float>([&](const TF& Q, const TF& K, const TF& V) { return tiled_attention(Q, K, V, of_mask); },
                                   qf, kf, vf, seed);
    CHECK(max_abs(got_f.out, want_f.out) == 0.0);
    CHECK(max_abs(got_f.dq, want_f.dq) == 0.0);
    CHECK(max_abs(got_f.dk, want_f.dk) == 0.0);
    CHECK(max_abs(got_f.dv, want_f.dv) == 0.0);
  }
}

TEST_CASE("sparse_attention: a row that sees nothing is zero with zero gradient; a pattern on a mask adds to it") {
  // Queries 12 .. 18 lie beyond the 11 keys and the window of 1: nothing visible, in block 0.
  const SparsePattern p{1, {}, {{}, {4}}, 0};
  const Array<double> q = rand_array({2, 19, 3}, 61, -2, 2), k = rand_array({2, 11, 3}, 62, -2, 2), v = rand_array({2, 11, 2}, 63);
  TD Q(q, true), K(k, true), V(v, true);
  const TD out = sparse_attention(Q, K, V, p);
  out.backward(rand_array({2, 19, 2}, 64));
  for (std::size_t i = 0; i < 19; ++i) {
    CAPTURE(i);
    const bool empty = i >= 12;
    CHECK((out.value()(0, i, 0) == 0.0 && out.value()(0, i, 1) == 0.0) == empty);
    CHECK(std::isfinite(Q.grad()(0, i, 0)));
    if (empty) CHECK(Q.grad()(0, i, 0) == 0.0);
    CHECK(out.value()(1, i, 0) != 0.0);  // block 1: global key 4 is seen by every query
  }
  // options.allowed (padding here) narrows the pattern further: the same as the two masks' AND.
  Mask pad = Mask::from_shape({2, 1, 11});
  for (std::size_t j = 0; j < 11; ++j) pad(0, 0, j) = pad(1, 0, j) = j < 9;
  TiledAttentionOptions<double> o;
  o.allowed = Allowed::where(pad);
  TiledAttentionOptions<double> both;
  both.allowed = Allowed::where(Mask(written_out(p, 2, 19, 11, false) && pad));
  const auto got = run<double>([&](const TD& a, const TD& b, const TD& c) { return sparse_attention(a, b, c, p, o); }, q, k, v, 65);
  const auto want = run<double>([&](const TD& a, const TD& b, const TD& c) { return tiled_attention(a, b, c, both); }, q, k, v, 65);
  CHECK(max_abs(got.out, want.out) == 0.0);
  CHECK(max_abs(got.dk, want.dk) == 0.0);
}

TEST_CASE("sparse_attention's memory grows like n, the mask's like n^2" * doctest::skip(kAddressSanitizer)) {
  REQUIRE(counting_bytes());
  const SparsePattern p{16, {0, 1, 2, 3}, {}, 0};
  const auto peak = [&](std::size_t n, bool mask) {
    const Array<float> q = rand_array({1, n, 16}, 70), k = rand_array({1, n, 16}, 71), v = rand_array({1, n, 16}, 72);
    TF Q(q, true), K(k, true), V(v, true);
    const Array<float> up = rand_array({1, n, 16}, 73);
    return double(peak_bytes_at_one_thread([&] {
      std::optional<TF> out;
      if (mask) {
        TiledAttentionOptions<float> o;
        o.allowed = Allowed::where(written_out(p, 1, n, n, false));  // built inside: the mask's bytes count
        out = tiled_attention(Q, K, V, o);
      } else {
        out = sparse_attention(Q, K, V, p);
      }
      out->backward(up);
    }));
  };
  const double s1 = peak(512, false), s2 = peak(1024, false), m1 = peak(512, true), m2 = peak(1024, true);
  CHECK(s2 / s1 < 2.2);
  CHECK(m2 / m1 > 3.0);
  CHECK(s2 < m2 / 4);
}

TEST_CASE("sparse_attention refuses a pattern that cannot be, naming it") {
  const TD q(rand_array({2, 5, 3}, 80)), k(rand_array({2, 6, 3}, 81)), v(rand_array({2, 6, 2}, 82));
  const auto error = [&](const SparsePattern& p) { return error_of<ShapeError>([&] { sparse_attention(q, k, v, p); }); };
  CHECK(contains(error({-1, {}, {}, 0}), "sparse_attention: the window must be >= 0, got -1"));
  CHECK(contains(error({1, {}, {}, -3}), "sparse_attention: the stride must be >= 0 (0: none), got -3"));
  CHECK(contains(error({1, {5}, {}, 0}), "global position 5 is not a position of both the queries and the keys (0 .. 4)"));
  CHECK(contains(error({1, {-2}, {}, 0}), "global position -2 is not a position"));
  CHECK(contains(error({1, {1, 3, 1}, {}, 0}), "global position 1 given twice"));
  CHECK(contains(error({1, {}, {{0}}, 0}), "global_by_block holds 1 lists for 2 batch blocks"));
  CHECK(contains(error({1, {}, {{0}, {7}}, 0}), "global position 7 of block 1 is not a position"));
  CHECK(contains(error({1, {0}, {{0}, {1}}, 0}), "both for every block and block by block"));
  CHECK(error({1, {}, {}, 0}) == "(no exception)");
}
