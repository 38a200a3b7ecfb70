// A decoded example's attention as a map, an explorer input and a figure
// (lessons/kit/decoded_attention), on a hand-made evaluation; bad input named.
#include <doctest/doctest.h>

#include <stdexcept>

#include <xtensor/xbuilder.hpp>

#include "lessons/kit/decoded_attention.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

namespace {
// Two examples decoded from "ab" and "c d": "x<eos>" and "yx<eos>", each row a distribution.
nn::rnn::Evaluation hand_decoded(nn::data::Vocab& v) {
  const Index x = v.add("x"), y = v.add("y");
  nn::rnn::Evaluation ev;
  ev.predictions = {"x", "yx"};
  ev.decoded.ids = {{x, nn::data::Vocab::eos}, {y, x, nn::data::Vocab::eos}};
  ev.decoded.attention = {xt::xarray<double>{{0.5, 0.5, 0.0}, {0.0, 0.0, 1.0}}, xt::ones<double>({3, 4}) / 4.0};
  return ev;
}
}  // namespace

TEST_CASE("decoded_map: decoded tokens down the rows, the input's characters and <eos> across") {
  nn::data::Vocab v;
  const nn::rnn::Evaluation ev = hand_decoded(v);
  const AttentionMap m = decoded_map(ev, 1, "c d", v, "yx");
  CHECK(m.keys == std::vector<std::string>{"c", "\u2423", "d", "<eos>"});  // a space shown as an open box
  CHECK(m.queries == std::vector<std::string>{"y", "x", "<eos>"});
  CHECK(m.title == "yx");
  CHECK(m.weights(2, 3) == doctest::Approx(0.25));
  CHECK_THROWS_WITH_AS(decoded_map(ev, 2, "ab", v, ""), doctest::Contains("decoded_map: example 2 of 2"), std::out_of_range);
  // The wrong source: 4 characters and <eos> for a map over 2 and <eos>.
  CHECK_THROWS_WITH_AS(decoded_map(ev, 0, "abcd", v, ""), doctest::Contains("not (2 decoded tokens, 5 characters"),
                       std::invalid_argument);
  nn::rnn::Evaluation no_attention = ev;
  no_attention.decoded.attention = {xt::xarray<double>(), xt::xarray<double>()};
  CHECK_THROWS_AS(decoded_map(no_attention, 0, "ab", v, ""), std::invalid_argument);
}

TEST_CASE("decoded_input: one layer per model, named as given, the first model's prediction in the name") {
  nn::data::Vocab v;
  const nn::rnn::Evaluation a = hand_decoded(v);
  nn::rnn::Evaluation b = a;
  b.decoded.attention[0] = xt::xarray<double>{{1.0, 0.0, 0.0}, {0.0, 1.0, 0.0}};
  const AttentionInput in = decoded_input({{"dot", &a}, {"general", &b}}, 0, "ab", v);
  CHECK(in.name == "\"ab\" -> x");
  CHECK(in.layers == std::vector<std::string>{"dot", "general"});
  REQUIRE(in.heads.size() == 2);
  REQUIRE(in.heads[1].size() == 1);
  CHECK(in.heads[0][0](1, 2) == 1.0);
  CHECK(in.heads[1][0](1, 1) == 1.0);
  CHECK(in.queries == std::vector<std::string>{"x", "<eos>"});
  CHECK(in.keys == std::vector<std::string>{"a", "b", "<eos>"});
  CHECK(decoded_input({{"cross-attention", &a}}, 1, "c d", v).layers == std::vector<std::string>{"cross-attention"});
  CHECK_THROWS_WITH_AS(decoded_input({}, 0, "ab", v), doctest::Contains("decoded_input: no models for \"ab\""),
                       std::invalid_argument);
  CHECK_THROWS_AS(decoded_input({{"dot", &a}}, 0, "abc", v), std::invalid_argument);
}

TEST_CASE("decoded_figure: the maps side by side at the size asked") {
  nn::data::Vocab v;
  const nn::rnn::Evaluation ev = hand_decoded(v);
  const plots::Figure fig = decoded_figure({decoded_map(ev, 0, "ab", v, "first"), decoded_map(ev, 1, "c d", v, "second")},
                                           "Two decoded inputs", 2, 1200, 600);
  CHECK(fig.width_px() == 1200);
  CHECK(fig.height_px() == 600);
}
