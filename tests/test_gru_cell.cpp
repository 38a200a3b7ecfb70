// The fused GRU cell op against the same equations written with separate ops, and its errors.
#include <doctest/doctest.h>

#include "core/ops.hpp"
#include "core/ops/gru_cell.hpp"

using namespace attnlab;

namespace {

template <class T>
Tensor<T> rand_t(const Shape& s, std::uint64_t seed, double lo = -2.0, double hi = 2.0) {
  Generator g(seed);
  return Tensor<T>(random_uniform<T>(s, g, lo, hi), true);
}

// r, z = sigmoid(gi_rz + gh_rz); n = tanh(gi_n + r gh_n); h' = (1 - z) n + z h, op by op.
template <class T>
Tensor<T> composed(const Tensor<T>& gi, const Tensor<T>& gh, const Tensor<T>& h, std::size_t H) {
  auto i = split(gi, {H, H, H}, -1);
  auto g = split(gh, {H, H, H}, -1);
  Tensor<T> r = sigmoid(add(i[0], g[0]));
  Tensor<T> z = sigmoid(add(i[1], g[1]));
  Tensor<T> n = attnlab::tanh(add(i[2], mul(r, g[2])));
  return add(mul(sub(Tensor<T>::scalar(T(1)), z), n), mul(z, h));
}

template <class T>
void compare(double tol) {
  const std::size_t B = 5, H = 7;
  Tensor<T> gi = rand_t<T>({B, 3 * H}, 1), gh = rand_t<T>({B, 3 * H}, 2), h = rand_t<T>({B, H}, 3);
  Tensor<T> gi2 = rand_t<T>({B, 3 * H}, 1), gh2 = rand_t<T>({B, 3 * H}, 2), h2 = rand_t<T>({B, H}, 3);
  Generator g(9);
  const Array<T> up = random_uniform<T>({B, H}, g, -1.0, 1.0);
  Tensor<T> y = gru_cell(gi, gh, h);
  Tensor<T> y2 = composed(gi2, gh2, h2, H);
  y.backward(up);
  y2.backward(up);
  for (std::size_t k = 0; k < y.size(); ++k)
    CHECK(double(y.value().data()[k]) == doctest::Approx(double(y2.value().data()[k])).epsilon(tol));
  const std::pair<Tensor<T>, Tensor<T>> pairs[] = {{gi, gi2}, {gh, gh2}, {h, h2}};
  for (const auto& [a, b] : pairs)
    for (std::size_t k = 0; k < a.size(); ++k)
      CHECK(double(a.grad().data()[k]) ==
            doctest::Approx(double(b.grad().data()[k])).epsilon(tol).scale(1.0));
}

}  // namespace

TEST_CASE("gru_cell matches the composed equations, value and every gradient") {
  compare<double>(1e-12);
  compare<float>(1e-5);
}

TEST_CASE("gru_cell accumulates into existing gradients") {
  Tensor<double> gi = rand_t<double>({2, 6}, 1), gh = rand_t<double>({2, 6}, 2),
                 h = rand_t<double>({2, 2}, 3);
  gru_cell(gi, gh, h).backward(Array<double>(xt::ones<double>({2, 2})));
  const Array<double> once = h.grad();
  gru_cell(gi, gh, h).backward(Array<double>(xt::ones<double>({2, 2})));
  for (std::size_t k = 0; k < once.size(); ++k)
    CHECK(h.grad().data()[k] == doctest::Approx(2.0 * once.data()[k]));
}

TEST_CASE("gru_cell rejects mismatched shapes, naming the op") {
  Tensor<double> gi = rand_t<double>({2, 6}, 1), gh = rand_t<double>({2, 6}, 2);
  CHECK_THROWS_AS(gru_cell(gi, gh, rand_t<double>({2, 3}, 3)), ShapeError);
  CHECK_THROWS_AS(gru_cell(gi, rand_t<double>({2, 5}, 2), rand_t<double>({2, 2}, 3)), ShapeError);
  try {
    gru_cell(gi, gh, rand_t<double>({3, 2}, 3));
    FAIL("no throw");
  } catch (const ShapeError& e) {
    CHECK(std::string(e.what()).find("gru_cell") != std::string::npos);
  }
}
