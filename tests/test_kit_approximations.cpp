// lessons/kit/approximations: the approximations as AttentionFn, each against its engine op; the
// errors against exact attention on cases worked out by hand; the sweep figure; bad input named.
#include <doctest/doctest.h>

#include <xtensor/xbuilder.hpp>

#include "core/error.hpp"
#include "core/ops.hpp"
#include "lessons/kit/approximations.hpp"
#include "nn/recall_model.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

namespace {
Array<float> normal(std::size_t n, std::size_t d, std::uint64_t seed) {
  Generator gen(seed);
  return random_normal<float>({1, n, d}, gen);
}
}  // namespace

TEST_CASE("the AttentionFn of each approximation is its op") {
  const Tensor<float> q(normal(12, 4, 1)), k(normal(12, 4, 2)), v(normal(12, 4, 3));
  CHECK(local_fn(2)(q, k, v).value() == local_attention(q, k, v, 2).value());
  CHECK(linear_fn()(q, k, v).value() == linear_attention(q, k, v).value());
  CHECK(linear_fn(true)(q, k, v).value() == linear_attention(q, k, v, {true}).value());
  // A sparse pattern is the tiled kernel under nn::sparse_pattern's mask; with the window wide
  // enough to see everything it is exact attention.
  std::vector<bool> global(12, false);
  global[0] = true;
  TiledAttentionOptions<float> o;
  o.allowed = Allowed::where(nn::sparse_pattern(12, 2, global, false));
  CHECK(sparse_pattern_fn(12, 2, 1, false)(q, k, v).value() == tiled_attention(q, k, v, o).value());
  CHECK(sparse_pattern_fn(12, 12, 0, false)(q, k, v).value() == tiled_attention(q, k, v).value());
  // Linformer of full rank at the segment means of n segments of one key each: E = F = I, exact.
  const Array<float> lin = linformer_fn(12, 12)(q, k, v).value(), exact = scaled_dot_product_attention(q, k, v).output.value();
  CHECK(xt::allclose(lin, exact, 1e-5, 1e-6));
}

TEST_CASE("approximation_errors: zero where an approximation is exact, the shares of the exact weights") {
  // Window n: local is exact, and every weight is within it; n segments of one key keep every
  // weight: Linformer is exact too. Linear attention is not.
  const Array<float> q = normal(8, 4, 5), k = normal(8, 4, 6), v = normal(8, 3, 7);
  const ApproximationErrors e = approximation_errors(q, k, v, 8);
  CHECK(e.local == doctest::Approx(0.0).epsilon(1e-6));
  CHECK(e.linformer == doctest::Approx(0.0).epsilon(1e-5));
  CHECK(e.linear > 0.01);
  CHECK(e.weight_in_band == doctest::Approx(1.0));
  CHECK(e.segment_share == doctest::Approx(1.0));
  const ApproximationErrors narrow = approximation_errors(q, k, v, 1);
  CHECK(narrow.local > 0.01);
  CHECK(narrow.weight_in_band < 1.0);
  CHECK_THROWS_WITH_AS(approximation_errors(normal(8, 4, 1), normal(7, 4, 2), v, 2),
                       doctest::Contains("approximation_errors: needs q, k, v of one sequence (1, n, d)"), ShapeError);
}

TEST_CASE("error_sweep_figure: two panels; counts that differ refused") {
  const std::vector<ApproximationErrors> e = {{0.1, 0.2, 0.3, 0.9, 0.8}, {0.2, 0.3, 0.4, 0.8, 0.7}};
  const plots::Figure fig = error_sweep_figure({0.5, 1.0}, e, 64, 8);
  CHECK(fig.cols() == 2);
  CHECK(fig.panel(0, 0).plot() != nullptr);
  CHECK(fig.panel(0, 1).plot() != nullptr);
  CHECK_THROWS_AS(error_sweep_figure({0.5}, e, 64, 8), plots::PlotError);
  CHECK_THROWS_AS(error_sweep_figure({}, {}, 64, 8), plots::PlotError);
}
