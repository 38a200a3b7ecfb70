// The fused additive score op against the same formula written with separate ops, the same bits
// at any thread count, and its errors.
#include <doctest/doctest.h>

#include "core/ops.hpp"
#include "core/runtime/parallel.hpp"

using namespace attnlab;

namespace {

template <class T>
Tensor<T> rand_t(const Shape& s, std::uint64_t seed) {
  Generator g(seed);
  return Tensor<T>(random_uniform<T>(s, g, -1.5, 1.5), true);
}

// s = v^T tanh(pq_i + pk_j), op by op: (B, Lq, 1, H) + (B, 1, Lk, H), tanh, times v, summed over H.
template <class T>
Tensor<T> composed(const Tensor<T>& pq, const Tensor<T>& pk, const Tensor<T>& v) {
  return sum(mul(attnlab::tanh(add(unsqueeze(pq, 2), unsqueeze(pk, 1))), v), Axes{-1});
}

template <class T>
void compare(const Shape& qs, const Shape& ks, double tol) {
  const Shape vs{qs[2]};
  Tensor<T> pq = rand_t<T>(qs, 1), pk = rand_t<T>(ks, 2), v = rand_t<T>(vs, 3);
  Tensor<T> pq2 = rand_t<T>(qs, 1), pk2 = rand_t<T>(ks, 2), v2 = rand_t<T>(vs, 3);
  Generator g(4);
  const Array<T> up = random_uniform<T>({qs[0], qs[1], ks[1]}, g, -1.0, 1.0);
  Tensor<T> y = additive_score(pq, pk, v), y2 = composed(pq2, pk2, v2);
  y.backward(up);
  y2.backward(up);
  REQUIRE(y.shape() == y2.shape());
  for (std::size_t i = 0; i < y.size(); ++i)
    CHECK(double(y.value().data()[i]) == doctest::Approx(double(y2.value().data()[i])).epsilon(tol));
  const std::pair<Tensor<T>, Tensor<T>> pairs[] = {{pq, pq2}, {pk, pk2}, {v, v2}};
  for (const auto& [a, b] : pairs)
    for (std::size_t i = 0; i < a.size(); ++i)
      CHECK(double(a.grad().data()[i]) == doctest::Approx(double(b.grad().data()[i])).epsilon(tol).scale(1.0));
}

}  // namespace

TEST_CASE("additive_score matches the composed formula, value and every gradient") {
  compare<double>({2, 3, 5}, {2, 4, 5}, 1e-12);
  compare<double>({3, 1, 4}, {3, 7, 4}, 1e-12);  // one query per batch row: a decoder step
  compare<float>({4, 2, 16}, {4, 9, 16}, 1e-4);
}

TEST_CASE("additive_score gives the same bits at 1 and 2 threads") {
  // 64 rows of (1 query, 25 keys, 64 features), a Bahdanau step: enough work to split.
  auto run = [](int n) {
    set_threads(n);
    Tensor<float> pq = rand_t<float>({64, 1, 64}, 5), pk = rand_t<float>({64, 25, 64}, 6),
                  v = rand_t<float>({1, 64}, 7);
    Tensor<float> s = additive_score(pq, pk, v);
    sum(mul(s, s)).backward();
    set_threads(1);
    return std::vector<Array<float>>{s.value(), pq.grad(), pk.grad(), v.grad()};
  };
  CHECK(run(1) == run(2));
}

TEST_CASE("additive_score accumulates into existing gradients") {
  Tensor<double> pq = rand_t<double>({2, 2, 3}, 1), pk = rand_t<double>({2, 3, 3}, 2), v = rand_t<double>({3}, 3);
  additive_score(pq, pk, v).backward(Array<double>(xt::ones<double>({2, 2, 3})));
  const Array<double> once = v.grad();
  additive_score(pq, pk, v).backward(Array<double>(xt::ones<double>({2, 2, 3})));
  for (std::size_t i = 0; i < once.size(); ++i) CHECK(v.grad().data()[i] == doctest::Approx(2.0 * once.data()[i]));
}

TEST_CASE("additive_score rejects mismatched shapes, naming the op and the shapes") {
  const Tensor<double> pq = rand_t<double>({2, 3, 4}, 1), pk = rand_t<double>({2, 5, 4}, 2);
  CHECK_THROWS_WITH_AS(additive_score(pq, rand_t<double>({2, 5, 3}, 2), rand_t<double>({4}, 3)),
                       "additive_score: pk must be (B = 2, Lk, H = 4) for pq (2,3,4), got (2,5,3)", ShapeError);
  CHECK_THROWS_WITH_AS(additive_score(pq, rand_t<double>({3, 5, 4}, 2), rand_t<double>({4}, 3)),
                       doctest::Contains("additive_score: pk must be"), ShapeError);
  CHECK_THROWS_WITH_AS(additive_score(pq, pk, rand_t<double>({4, 1}, 3)),
                       "additive_score: v must be (H) or (1, H) with H = 4, got (4,1)", ShapeError);
  CHECK_THROWS_WITH_AS(additive_score(rand_t<double>({2, 4}, 1), pk, rand_t<double>({4}, 3)),
                       doctest::Contains("additive_score: pq must be (B, Lq, H)"), ShapeError);
}
