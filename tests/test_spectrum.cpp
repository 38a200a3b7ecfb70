// singular_values (lessons/kit/spectrum.hpp, LAPACK through xtensor-blas) on matrices whose
// spectrum is known, and rank_for_energy.
#include <doctest/doctest.h>

#include <cmath>

#include <xtensor/xbuilder.hpp>

#include "core/error.hpp"
#include "lessons/kit/spectrum.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

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

TEST_CASE("rank_for_energy: the fewest values holding a share of sum sigma^2") {
  const std::vector<double> s = {3, 2, 1};  // energies 9, 4, 1 of 14
  CHECK(rank_for_energy(s, 9.0 / 14) == 1);
  CHECK(rank_for_energy(s, 0.65) == 2);
  CHECK(rank_for_energy(s, 13.0 / 14) == 2);
  CHECK(rank_for_energy(s, 1.0) == 3);
  CHECK_THROWS_AS(rank_for_energy(s, 0.0), ShapeError);
  CHECK_THROWS_WITH_AS(singular_values(xt::xarray<double>::from_shape({2, 2, 2})),
                       doctest::Contains("singular_values: needs a non-empty 2-D matrix, got (2,2,2)"), ShapeError);
}
