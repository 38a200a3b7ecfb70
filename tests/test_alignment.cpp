// Alignment error rate and the hard alignment of attention maps, on cases computed by hand.
#include <doctest/doctest.h>

#include "core/error.hpp"
#include "nn/alignment.hpp"

using namespace attnlab;
using namespace attnlab::nn;

namespace {
// A (T, S) link matrix from (target, source) pairs.
Mask links(std::size_t t, std::size_t s, const std::vector<std::pair<std::size_t, std::size_t>>& on) {
  Mask m = Mask::from_shape({t, s});
  std::fill(m.begin(), m.end(), false);
  for (auto [j, i] : on) m(j, i) = true;
  return m;
}
}  // namespace

TEST_CASE("alignment_error_rate: 0 for the truth, 1 for nothing right, 1 - F1 when P = S") {
  const Mask truth = links(3, 3, {{0, 2}, {1, 0}, {2, 1}});
  CHECK(alignment_error_rate({truth}, {truth}) == doctest::Approx(0.0));
  CHECK(alignment_error_rate({links(3, 3, {{0, 0}, {1, 1}, {2, 2}})}, {truth}) == doctest::Approx(1.0));
  // Two of three right, one missing: |A| = 2, |S| = 3, |A & S| = 2: 1 - 4/5.
  CHECK(alignment_error_rate({links(3, 3, {{0, 2}, {1, 0}})}, {truth}) == doctest::Approx(0.2));
  // Nothing hypothesised: 1 - 0 / 3.
  CHECK(alignment_error_rate({links(3, 3, {})}, {truth}) == doctest::Approx(1.0));
  // Pooled over a corpus, not averaged: sentence 1 all right (3 links), sentence 2 (1 link) wrong.
  const Mask one = links(1, 2, {{0, 1}});
  CHECK(alignment_error_rate({truth, links(1, 2, {{0, 0}})}, {truth, one}) == doctest::Approx(1.0 - 6.0 / 8.0));
}

TEST_CASE("count_links: possible links count for A & P only (Och & Ney)") {
  // S = {(0,0)}, P = S + {(1,1)}; A = {(0,0), (1,1), (1,0)}.
  const Mask s = links(2, 2, {{0, 0}}), p = links(2, 2, {{0, 0}, {1, 1}});
  const AlignmentCounts c = count_links(links(2, 2, {{0, 0}, {1, 1}, {1, 0}}), s, p);
  CHECK(c.hypothesis == 3);
  CHECK(c.sure == 1);
  CHECK(c.hit_sure == 1);
  CHECK(c.hit_possible == 2);
  // 1 - (1 + 2) / (3 + 1)
  CHECK(c.error_rate() == doctest::Approx(0.25));
  AlignmentCounts total;
  total += c;
  total += c;
  CHECK(total.error_rate() == doctest::Approx(0.25));
  CHECK_THROWS_AS(count_links(s, p, s), ShapeError);  // a sure link that is not possible
  CHECK_THROWS_AS(count_links(s, links(2, 3, {}), s), ShapeError);
  CHECK_THROWS_AS(AlignmentCounts{}.error_rate(), ShapeError);
  CHECK_THROWS_AS(alignment_error_rate({s}, {}), ShapeError);
}

TEST_CASE("peak_links: each row's largest weight; a peak on the <eos> column links nothing") {
  // 3 target rows over 2 words and an <eos> column.
  const Array<float> attn = {{0.1f, 0.7f, 0.2f}, {0.4f, 0.4f, 0.2f}, {0.1f, 0.2f, 0.7f}};
  const Mask m = peak_links(attn, 2);
  REQUIRE(m.shape() == std::vector<std::size_t>{3, 2});
  CHECK(m == links(3, 2, {{0, 1}, {1, 0}}));  // row 1: a tie goes to the first; row 2 peaks on <eos>
  CHECK(peak_links(Array<double>{{0.2, 0.8}}, 2) == links(1, 2, {{0, 1}}));
  CHECK_THROWS_AS(peak_links(attn, 4), ShapeError);
  CHECK_THROWS_AS(peak_links(Array<float>{1.0f, 2.0f}, 1), ShapeError);
}
