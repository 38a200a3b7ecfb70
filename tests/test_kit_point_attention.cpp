// lessons/kit/point_attention: keys per query in effect, and weights over points as an explorer
// input, with bad input named.
#include <doctest/doctest.h>

#include <stdexcept>

#include "lessons/kit/point_attention.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::contains;
using attnlab::testing::error_of;

TEST_CASE("keys_per_query: n for uniform rows, 1 for one-hot rows, averaged over rows") {
  CHECK(keys_per_query(xt::xarray<double>{{0.25, 0.25, 0.25, 0.25}}) == doctest::Approx(4.0));
  CHECK(keys_per_query(xt::xarray<double>{{1.0, 0.0, 0.0, 0.0}}) == doctest::Approx(1.0));
  CHECK(keys_per_query(xt::xarray<double>{{1.0, 0.0}, {0.5, 0.5}}) == doctest::Approx(1.5));
  CHECK(contains(error_of<std::invalid_argument>([] { keys_per_query(xt::xarray<double>{0.5, 0.5}); }),
                 "keys_per_query: weights (2) are not (queries, keys)"));
}

TEST_CASE("points_input: x labels, a layer per name, heads in order, and the page accepts it") {
  const xt::xarray<double> queries{0.25, 1.5}, keys{0.0, 1.0, 2.0};
  std::vector<std::string> calls;
  const AttentionInput in = points_input("two points", queries, keys, {"near", "far"}, 2,
                                         [&](std::size_t l, std::size_t h, const xt::xarray<double>& q) {
                                           calls.push_back(std::to_string(l) + std::to_string(h));
                                           xt::xarray<double> w = xt::zeros<double>({q.size(), std::size_t(3)});
                                           for (std::size_t i = 0; i < q.size(); ++i) w(i, (l + h + i) % 3) = 1.0;
                                           return w;
                                         });
  CHECK(in.queries == std::vector<std::string>{"0.25", "1.50"});  // value_labels, two decimals
  CHECK(in.keys == std::vector<std::string>{"0.00", "1.00", "2.00"});
  CHECK(in.layers == std::vector<std::string>{"near", "far"});
  CHECK(calls == std::vector<std::string>{"00", "01", "10", "11"});
  REQUIRE(in.heads.size() == 2);
  CHECK(in.heads[1][1](0, 2) == 1.0);
  CHECK(in.q.empty());  // distances: no neuron view
  CHECK(contains(explorer_html({"Points", "queries", "keys", "", {in}}), "two points"));
  CHECK(error_of<std::invalid_argument>([&] { points_input("none", queries, keys, {}, 2, nullptr); }) ==
        "points_input: 'none' has 0 layers of 2 heads");
}
