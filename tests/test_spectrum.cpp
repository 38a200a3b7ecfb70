// singular_values (lessons/kit/spectrum.hpp, LAPACK through xtensor-blas) on matrices whose
// spectrum is known, rank_for_energy, and what an approximation keeps of an attention matrix.
#include <doctest/doctest.h>

#include <cmath>

#include <xtensor/xbuilder.hpp>

#include "core/error.hpp"
#include "nn/attention/structure.hpp"
#include "lessons/kit/spectrum.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::nn::segment_mean_share;
using attnlab::nn::weight_in_band;
using attnlab::nn::relative_error;
using attnlab::nn::banded_queries_keys;

TEST_CASE("singular values of known matrices, largest first") {
  // Rows permuted and signs flipped: the singular values of diag(1, 3, 2) are 3, 2, 1.
  const xt::xarray<double> m = {{0, -3, 0}, {1, 0, 0}, {0, 0, 2}};
  const std::vector<double> s = singular_values(m);
  REQUIRE(s.size() == 3);
  CHECK(s[0] == doctest::Approx(3.0));
  CHECK(s[1] == doctest::Approx(2.0));
  CHECK(s[2] == doctest::Approx(1.0));
  // u v^T has one singular value, |u| |v|; a 2 x 4 matrix has two.
  const xt::xarray<double> outer = {{1, 2, 2, 0}, {2, 4, 4, 0}};
  const std::vector<double> r = singular_values(outer);
  REQUIRE(r.size() == 2);
  CHECK(r[0] == doctest::Approx(std::sqrt(5.0) * 3.0));
  CHECK(std::abs(r[1]) < 1e-12);
  // A row-stochastic matrix with equal rows (uniform attention) has rank 1.
  const xt::xarray<double> uniform = xt::ones<double>({8, 8}) / 8.0;
  CHECK(rank_for_energy(singular_values(uniform), 0.999) == 1);
}

TEST_CASE("leading_matrices: the first matrices of a batch, in double") {
  Array<float> batch = xt::zeros<float>({3, 2, 2});
  batch(1, 0, 1) = 0.5f;
  batch(2, 1, 1) = 2.0f;
  const std::vector<xt::xarray<double>> two = leading_matrices(batch, 2);
  REQUIRE(two.size() == 2);
  CHECK(two[1](0, 1) == 0.5);
  CHECK(two[0].shape() == std::vector<std::size_t>{2, 2});
  CHECK(leading_matrices(batch, 10).size() == 3);  // all of them when fewer
  CHECK(leading_matrices(batch, 10)[2](1, 1) == 2.0);
  CHECK_THROWS_WITH_AS(leading_matrices(Array<float>(xt::zeros<float>({2, 2})), 1),
                       doctest::Contains("leading_matrices: needs a batch of matrices (B, n, m), got (2,2)"), ShapeError);
}

TEST_CASE("rank_for_energy: the fewest values holding a share of sum sigma^2") {
  const std::vector<double> s = {3, 2, 1};  // energies 9, 4, 1 of 14
  CHECK(rank_for_energy(s, 9.0 / 14) == 1);
  CHECK(rank_for_energy(s, 0.65) == 2);
  CHECK(rank_for_energy(s, 13.0 / 14) == 2);
  CHECK(rank_for_energy(s, 1.0) == 3);
  CHECK_THROWS_AS(rank_for_energy(s, 0.0), ShapeError);
  const std::vector<double> c = cumulative_energy_share(s);
  REQUIRE(c.size() == 3);
  CHECK(c[0] == doctest::Approx(9.0 / 14));
  CHECK(c[1] == doctest::Approx(13.0 / 14));
  CHECK(c[2] == doctest::Approx(1.0));
  CHECK_THROWS_WITH_AS(cumulative_energy_share({0.0, 0.0}), doctest::Contains("cumulative_energy_share: needs singular values"),
                       ShapeError);
  CHECK_THROWS_AS(cumulative_energy_share({}), ShapeError);
  CHECK_THROWS_WITH_AS(singular_values(xt::xarray<double>::from_shape({2, 2, 2})),
                       doctest::Contains("singular_values: needs a non-empty 2-D matrix, got (2,2,2)"), ShapeError);
}

TEST_CASE("summarize_spectra: means over matrices of normalized singular values, rank for a share, share in a rank") {
  const xt::xarray<double> a = {{3, 0, 0}, {0, 2, 0}, {0, 0, 1}};  // energies 9, 4, 1 of 14
  const xt::xarray<double> b = {{2, 0, 0}, {0, 2, 0}, {0, 0, 2}};  // 4, 4, 4 of 12
  const SpectrumSummary s = summarize_spectra({a, b}, 1, 0.6);
  REQUIRE(s.sigma.size() == 3);
  CHECK(s.sigma[0] == doctest::Approx(1.0));
  CHECK(s.sigma[1] == doctest::Approx((2.0 / 3 + 1.0) / 2));
  CHECK(s.sigma[2] == doctest::Approx((1.0 / 3 + 1.0) / 2));
  CHECK(s.rank_for_share == doctest::Approx((1 + 2) / 2.0));  // a: 9/14 >= 0.6 at rank 1; b: 8/12 at rank 2
  CHECK(s.share_in_rank == doctest::Approx((9.0 / 14 + 4.0 / 12) / 2));
  CHECK_THROWS_WITH_AS(summarize_spectra({}, 1), doctest::Contains("summarize_spectra: needs matrices and a rank > 0"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(summarize_spectra({a, xt::xarray<double>{{1, 2}}}, 1),
                       doctest::Contains("matrices of different shapes: (3,3) and (1,2)"), ShapeError);
}

// What an approximation keeps of an attention matrix (nn/attention/structure.hpp).
TEST_CASE("weight_in_band, segment_mean_share and relative_error on matrices worked by hand") {
  // Uniform attention over 4 keys: a window of 1 keeps 2 or 3 keys of each row.
  const xt::xarray<double> uniform = xt::ones<double>({4, 4}) / 4.0;
  CHECK(weight_in_band(uniform, 1) == doctest::Approx((2 + 3 + 3 + 2) / 16.0));
  CHECK(weight_in_band(uniform, 3) == doctest::Approx(1.0));
  // The identity is all in the band of width 0, and segment means of 2 keep half of its energy.
  const xt::xarray<double> eye = xt::eye<double>(4);
  CHECK(weight_in_band(eye, 0) == doctest::Approx(1.0));
  CHECK(segment_mean_share(eye, 2) == doctest::Approx(0.5));
  CHECK(segment_mean_share(eye, 4) == doctest::Approx(1.0));  // as many segments as keys: nothing lost
  CHECK(segment_mean_share(uniform, 1) == doctest::Approx(1.0));  // constant rows are segment means already
  // 5 keys in 2 segments: the second takes the remainder (3 keys).
  const xt::xarray<double> row = {{1, 0, 1, 1, 0}};
  CHECK(segment_mean_share(row, 2) == doctest::Approx((1.0 / 2 + 4.0 / 3) / 3.0));
  CHECK(relative_error(xt::xarray<double>{3, 4}, xt::xarray<double>{0, 5}) == doctest::Approx(std::sqrt(10.0) / 5));
  CHECK_THROWS_WITH_AS(segment_mean_share(eye, 5), doctest::Contains("segment_mean_share: needs 1 to 4 segments, got 5"),
                       ShapeError);
  CHECK_THROWS_WITH_AS(weight_in_band(xt::xarray<double>::from_shape({2, 2, 2}), 1),
                       doctest::Contains("weight_in_band: needs a non-empty 2-D matrix, got (2,2,2)"), ShapeError);
  CHECK_THROWS_WITH_AS(relative_error(xt::xarray<double>{1, 2}, xt::xarray<double>{1, 2, 3}),
                       doctest::Contains("relative_error: shapes differ: (2) and (3)"), ShapeError);
  CHECK_THROWS_WITH_AS(relative_error(xt::xarray<double>{1}, xt::xarray<double>{0}),
                       doctest::Contains("relative_error: the reference has norm 0"), ShapeError);
}

TEST_CASE("banded_queries_keys: position codes make a band that narrows with the sharpness; 0 gives iid normals") {
  Generator gen(5);
  const std::size_t n = 64, d = 16;
  const auto [q, k] = banded_queries_keys(n, d, 2.0, gen);
  REQUIRE(q.shape() == std::vector<std::size_t>{1, n, d});
  CHECK(q == k);
  // q_i . k_j depends on i - j alone and is largest at i = j.
  auto dot = [&](const Array<float>& a, std::size_t i, std::size_t j) {
    double s = 0;
    for (std::size_t c = 0; c < d; ++c) s += double(a(0, i, c)) * double(a(0, j, c));
    return s;
  };
  CHECK(dot(q, 10, 13) == doctest::Approx(dot(q, 30, 33)).epsilon(1e-4));
  for (std::size_t j = 0; j < n; ++j)
    if (j != 20) CHECK(dot(q, 20, j) < dot(q, 20, 20));
  // Twice the sharpness: the codes twice as long.
  Generator unused(0);
  const auto [q1, k1] = banded_queries_keys(n, d, 1.0, unused);
  CHECK(xt::allclose(q, 2.0f * q1));
  // Sharpness 0: independent standard normals, queries first, from the generator.
  Generator g1(9), g2(9);
  const auto [qr, kr] = banded_queries_keys(n, d, 0.0, g1);
  CHECK(qr == random_normal<float>({1, n, d}, g2));
  CHECK(kr == random_normal<float>({1, n, d}, g2));
  CHECK_THROWS_WITH_AS(banded_queries_keys(0, d, 1.0, gen), doctest::Contains("banded_queries_keys: needs n and d above 0"),
                       ShapeError);
  CHECK_THROWS_AS(banded_queries_keys(n, d, -1.0, gen), ShapeError);
}
