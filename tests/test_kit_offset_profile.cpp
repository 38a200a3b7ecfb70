// Where each head looks, by offset (lessons/kit/offset_profile), on hand-made weights.
#include <doctest/doctest.h>

#include <stdexcept>

#include <xtensor/xbuilder.hpp>

#include "core/error.hpp"
#include "lessons/kit/heads.hpp"
#include "lessons/kit/offset_profile.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

TEST_CASE("offset_profile: a head looking 2 back peaks at offset 2, one split between 0 and 1 weighs both") {
  Array<float> w = xt::zeros<float>({2, 2, 5, 5});
  for (std::size_t b = 0; b < 2; ++b)
    for (std::size_t i = 0; i < 5; ++i) {
      w(b, 0, i, i >= 2 ? i - 2 : 0) = 1.0f;  // head 0: two back (the first two queries look at 0)
      w(b, 1, i, i) = 0.75f;                  // head 1: itself and the previous token
      w(b, 1, i, i == 0 ? 0 : i - 1) += 0.25f;
    }
  const OffsetProfile p = offset_profile(w);
  REQUIRE(p.weight.shape()[0] == 2);
  REQUIRE(p.weight.shape()[1] == 9);
  CHECK(p.peak(0).first == 2);
  CHECK(p.peak(0).second == doctest::Approx(1.0));
  CHECK(p.at(0, 1) == doctest::Approx(1.0 / 4));  // query 1 looks at 0: offset 1, one of the 4 queries that have one
  CHECK(p.at(1, 0) == doctest::Approx((0.75 * 4 + 1.0) / 5));
  CHECK(p.at(1, 1) == doctest::Approx(0.25));
  CHECK(p.at(1, -1) == doctest::Approx(0.0));
  CHECK(p.peak(1).first == 0);
  // Offsets 0 and 2 are peaks (heads 1 and 0), 1 is not; only offset 2 has a head above 0.9.
  CHECK(p.offsets_peaked({0, 1, 2}) == 2);
  CHECK(p.offsets_peaked({}) == 0);
  CHECK(p.offsets_above({0, 1, 2}, 0.9) == 1);
  CHECK(p.offsets_above({0, 2}, 0.5) == 2);  // offset 0: head 1 gives it 0.8
  CHECK(p.offsets_above({1}, 0.25) == 0);     // strictly more: head 0's and head 1's 0.25 are not
  CHECK_THROWS_AS(p.offsets_above({5}, 0.5), std::out_of_range);
  CHECK(p.offset_labels(2) == std::vector<std::string>{"-4", "", "-2", "", "0", "", "2", "", "4"});
  CHECK(p.offset_labels().front() == "-4");
  CHECK(p.offset_labels().size() == 9);
  CHECK_THROWS_WITH_AS(p.at(0, 5), doctest::Contains("offset 5"), std::out_of_range);
  CHECK_THROWS_WITH_AS(p.at(2, 0), doctest::Contains("head 2"), std::out_of_range);
  CHECK_THROWS_WITH_AS(offset_profile(Array<float>(xt::zeros<float>({2, 5, 5}))), doctest::Contains("offset_profile"),
                       ShapeError);
}

TEST_CASE("offset_profiles_figure: the heads of several profiles as the rows of one heatmap; bad input named") {
  Array<float> w = xt::zeros<float>({1, 2, 4, 4});
  for (std::size_t i = 0; i < 4; ++i) w(0, 0, i, i) = w(0, 1, i, i > 0 ? i - 1 : 0) = 1.0f;
  const OffsetProfile p = offset_profile(w);
  const plots::Figure fig = offset_profiles_figure({p, p}, {"a 1", "a 2", "b 1", "b 2"}, "Where heads look", 2, 900, 700);
  CHECK(fig.width_px() == 900);
  CHECK(fig.height_px() == 700);
  CHECK_THROWS_WITH_AS(offset_profiles_figure({p, p}, {"a 1", "a 2"}, "few labels"),
                       doctest::Contains("offset_profiles_figure: 2 labels for 4 heads in 2 profiles of 'few labels'"),
                       std::invalid_argument);
  CHECK_THROWS_AS(offset_profiles_figure({}, {}, "none"), std::invalid_argument);
  const OffsetProfile shorter = offset_profile(Array<float>(xt::zeros<float>({1, 2, 3, 3})));
  CHECK_THROWS_WITH_AS(offset_profiles_figure({p, shorter}, {"a", "b", "c", "d"}, "mixed"),
                       doctest::Contains("profiles of lengths 4 and 3"), std::invalid_argument);
}

TEST_CASE("near_offsets: every head of every layer by offset near the query, named; the figure; bad input named") {
  Array<float> a = xt::zeros<float>({1, 2, 4, 4}), b = xt::zeros<float>({1, 2, 4, 4});
  for (std::size_t i = 0; i < 4; ++i) {
    a(0, 0, i, i > 0 ? i - 1 : 0) = 1.0f;  // layer 1, head 1: the token before (query 0 itself)
    a(0, 1, i, i) = 1.0f;                  // layer 1, head 2: itself
    b(0, 0, i, i + 1 < 4 ? i + 1 : i) = 1.0f;  // layer 2, head 1: the token after (the last query itself)
    b(0, 1, i, i) = 0.5f, b(0, 1, i, i > 0 ? i - 1 : 0) += 0.5f;  // layer 2, head 2: itself and the one before
  }
  const NearOffsets n = near_offsets({Tensor<float>(a), Tensor<float>(b)}, 2);
  REQUIRE(n.weight.shape() == std::vector<std::size_t>{4, 5});
  CHECK(n.heads == std::vector<std::string>{"layer 1, head 1", "layer 1, head 2", "layer 2, head 1", "layer 2, head 2"});
  CHECK(n.offset_labels() == std::vector<std::string>{"-2", "-1", "0", "+1", "+2"});
  CHECK(n.at(0, -1) == doctest::Approx(1.0));  // the 3 queries with a key before all look there
  CHECK(n.at(1, 0) == doctest::Approx(1.0));
  CHECK(n.at(2, 1) == doctest::Approx(1.0));
  CHECK(n.at(3, -1) == doctest::Approx(0.5));
  CHECK(n.at(0, 1) == doctest::Approx(0.0));
  CHECK(n.at(0, -1) == doctest::Approx(offset_mass(a, 1)[0]));  // offset -1: offset_mass one place to the left
  CHECK(n.sharpest(-1) == 0);  // heads 0 and 3 weigh it 1 and 0.5
  CHECK(n.sharpest(1) == 2);
  CHECK(n.sharpest(2) == 0);   // nobody looks two ahead: the first row
  CHECK_THROWS_WITH_AS(n.at(4, 0), doctest::Contains("NearOffsets::at: row 4"), std::out_of_range);
  CHECK_THROWS_WITH_AS(n.at(0, 3), doctest::Contains("offset 3"), std::out_of_range);
  const plots::Figure fig = near_offsets_figure(n, "Near the query");
  CHECK(fig.width_px() == 1900);
  CHECK(fig.height_px() == 250 + 95 * 4);
  CHECK_THROWS_WITH_AS(near_offsets({}, 2), doctest::Contains("near_offsets: 0 layers"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(near_offsets({Tensor<float>(a)}, 0), doctest::Contains("reach 0"), std::invalid_argument);
  const Array<float> three_heads = xt::zeros<float>({1, 3, 4, 4});
  CHECK_THROWS_WITH_AS(near_offsets({Tensor<float>(a), Tensor<float>(three_heads)}, 2),
                       doctest::Contains("near_offsets: layer 2's weights must be (B, 2, L, L), got (1,3,4,4)"), ShapeError);
}
