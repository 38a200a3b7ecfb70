// lessons/kit/attention_spectra: named spectra with the energy segment means keep, the attention
// matrices of a band, and their figure.
#include <doctest/doctest.h>

#include <cmath>

#include <xtensor/xbuilder.hpp>

#include "core/error.hpp"
#include "lessons/kit/attention_spectra.hpp"
#include "nn/attention/structure.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

TEST_CASE("named_spectrum: the summary and the mean energy kept by segment means") {
  // Uniform attention (rank 1) is kept whole by segment means; the identity (4 x 4, two segments)
  // keeps half: each row 1 at one key becomes 1/2 at the two keys of its segment, energy 1/2.
  const xt::xarray<double> uniform = xt::ones<double>({4, 4}) / 4.0, identity = xt::eye<double>(4);
  const NamedSpectrum u = named_spectrum("uniform", {uniform}, 2);
  CHECK(u.name == "uniform");
  CHECK(u.summary.rank_for_share == doctest::Approx(1.0));
  CHECK(u.segment_share == doctest::Approx(1.0));
  const NamedSpectrum both = named_spectrum("both", {uniform, identity}, 2);
  CHECK(both.segment_share == doctest::Approx(0.75));  // the mean of 1 and 1/2
  CHECK(both.summary.share_in_rank == doctest::Approx(summarize_spectra({uniform, identity}, 2).share_in_rank));
  CHECK_THROWS_AS(named_spectrum("none", {}, 2), ShapeError);
  CHECK_THROWS_AS(named_spectrum("too many segments", {uniform}, 5), ShapeError);
}

TEST_CASE("banded_attention_matrices: one matrix for a band, count fresh ones for iid queries and keys") {
  Generator gen(4);
  const auto band = banded_attention_matrices(16, 8, 2.0, 3, gen);
  REQUIRE(band.size() == 1);
  REQUIRE(band[0].shape() == std::vector<std::size_t>{16, 16});
  for (std::size_t i = 0; i < 16; ++i) {  // rows are distributions, peaked on the diagonal
    double sum = 0;
    for (std::size_t j = 0; j < 16; ++j) sum += band[0](i, j);
    CHECK(sum == doctest::Approx(1.0));
    for (std::size_t j = 0; j < 16; ++j) CHECK(band[0](i, j) <= band[0](i, i) + 1e-12);
  }
  const auto iid = banded_attention_matrices(16, 8, 0.0, 3, gen);
  REQUIRE(iid.size() == 3);
  CHECK(iid[0] != iid[1]);  // drawn afresh
  Generator again(4);
  CHECK(banded_attention_matrices(16, 8, 2.0, 3, again)[0] == band[0]);  // the same generator, the same matrix
}

TEST_CASE("singular_value_figure: two panels, and no spectra refused") {
  const NamedSpectrum u = named_spectrum("identity", {xt::eye<double>(8)}, 2);
  plots::Figure fig = singular_value_figure({u}, 8, 2);
  CHECK(fig.cols() == 2);
  CHECK(fig.panel(0).plot() != nullptr);
  CHECK(fig.panel(1).plot() != nullptr);
  CHECK(fig.panel(1).title().find("r = 2") != std::string::npos);
  CHECK_THROWS_WITH_AS(singular_value_figure({}, 8, 2), doctest::Contains("singular_value_figure: no spectra"),
                       plots::PlotError);
}
