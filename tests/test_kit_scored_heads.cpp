// Single-head attentions side by side in the explorer, each at its own scale (lessons/kit/scored_heads.hpp,
// AttentionInput::layer_scale): the page carries each layer's scale and the causal mask, the
// weights are checked against the softmax at that layer's scale, and bad inputs are refused.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include <xtensor/xview.hpp>

#include "lessons/kit/explorer.hpp"
#include "lessons/kit/scored_heads.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::contains;
using attnlab::testing::error_of;

namespace {

// Two tokens, d_k = 2, q = k = rows of the identity, so q_i . k_j = [i == j]; causal: query 1
// sees key 1 only, query 2 both: its weights softmax(scale, 0).
ScoredHead head(const std::string& name, double scale, double weights_scale) {
  const double e = std::exp(weights_scale);
  const xt::xarray<double> eye{{1.0, 0.0}, {0.0, 1.0}};
  return {name, xt::xarray<double>{{1.0, 0.0}, {1.0 / (1.0 + e), e / (1.0 + e)}}, eye, eye, scale, true};
}

}  // namespace

TEST_CASE("scored_heads_input: a layer per head, each with its own scale and the causal mask") {
  const AttentionInput in = scored_heads_input("two", {"a", "b"}, {"a", "b"},
                                               {head("unscaled", 1.0, 1.0), head("scaled", 0.0, 1.0 / std::sqrt(2.0))});
  CHECK(in.layers == std::vector<std::string>{"unscaled", "scaled"});
  CHECK(in.layer_scale == std::vector<double>{1.0, 1.0 / std::sqrt(2.0)});  // 0: 1 / sqrt(d_k)
  REQUIRE(in.bias.size() == 2);
  CHECK(std::isinf(in.bias[1][0](0, 1)));
  CHECK(in.bias[1][0](1, 0) == 0.0);
  const std::string html = explorer_html({"Two", "queries", "keys", "", {in}});
  CHECK(contains(html, "\"scale\":1.0,\"allowed\":[\"10\",\"11\"]"));
  CHECK(contains(html, "\"scale\":0.7071067811865475,\"allowed\":[\"10\",\"11\"]"));

  // Weights made at the other layer's scale: the neuron view would explain other weights.
  const AttentionInput swapped = scored_heads_input("swapped", {"a", "b"}, {"a", "b"}, {head("unscaled", 1.0, 0.5)});
  CHECK(contains(error_of<std::invalid_argument>([&] { explorer_html({"S", "queries", "keys", "", {swapped}}); }),
                 "explorer: input 'swapped': layer 'unscaled', head 1: the softmax of q.k * scale + bias gives"));
  CHECK(error_of<std::invalid_argument>([&] { scored_heads_input("none", {"a"}, {"a"}, {}); }) == "scored_heads_input: no heads for 'none'");
  CHECK(error_of<std::invalid_argument>([&] { scored_heads_input("short", {"a"}, {"a", "b"}, {head("h", 1.0, 1.0)}); }) ==
        "scored_heads_input: 'short', head 'h': weights (2,2) for 1 queries and 2 keys");
}

TEST_CASE("layer_scale: one positive scale per layer, carried by side_by_side") {
  AttentionInput in = scored_heads_input("two", {"a", "b"}, {"a", "b"}, {head("A", 1.0, 1.0), head("B", 2.0, 2.0)});
  AttentionInput wrong = in;
  wrong.layer_scale.pop_back();
  CHECK(error_of<std::invalid_argument>([&] { explorer_html({"W", "q", "k", "", {wrong}}); }) == "explorer: input 'two': 1 layer scales for 2 layers");
  wrong = in;
  wrong.layer_scale[1] = 0.0;
  CHECK(contains(error_of<std::invalid_argument>([&] { explorer_html({"W", "q", "k", "", {wrong}}); }),
                 "explorer: input 'two': a layer scale of 0.000000 (a scale is positive and finite)"));
  const AttentionInput both = side_by_side("both", {{"first", in}, {"second", in}});
  CHECK(both.layer_scale == std::vector<double>{1.0, 2.0, 1.0, 2.0});
  CHECK(contains(explorer_html({"Both", "q", "k", "", {both}}), "\"scale\":2.0"));
  AttentionInput one_scale = in;
  one_scale.layer_scale.clear(), one_scale.scale = 1.0;
  CHECK(contains(error_of<std::invalid_argument>([&] { side_by_side("mixed", {{"first", in}, {"second", one_scale}}); }),
                 "side_by_side: 'second' differs from 'first'"));
}

TEST_CASE("scored_heads_input: a mask of any shape of hidden keys, and the gradient view's dA and dS") {
  // One query, two keys, the second hidden: A = (1, 0) whatever the scores; dA = (2, 5), D = 2, dS = (0, 0).
  ScoredHead h{"masked", xt::xarray<double>{{1.0, 0.0}}, xt::xarray<double>{{1.0, 0.0}}, xt::xarray<double>{{1.0, 0.0}, {3.0, 1.0}}};
  h.allowed = Mask{{true, false}};
  h.weight_grad = xt::xarray<double>{{2.0, 5.0}}, h.score_grad = xt::xarray<double>{{0.0, 0.0}};
  const AttentionInput in = scored_heads_input("m", {"x"}, {"a", "b"}, {h});
  CHECK(std::isinf(in.bias[0][0](0, 1)));
  CHECK(in.bias[0][0](0, 0) == 0.0);
  REQUIRE(in.weight_grad.size() == 1);
  CHECK(contains(explorer_html({"M", "queries", "keys", "", {in}}), "\"grads\":[{\"dA\":[[2.0,5.0]],\"dS\":[[0.0,0.0]]}]"));

  ScoredHead plain = h;
  plain.weight_grad = {}, plain.score_grad = {};
  CHECK(scored_heads_input("m", {"x"}, {"a", "b"}, {plain}).weight_grad.empty());
  CHECK(error_of<std::invalid_argument>([&] { scored_heads_input("half", {"x"}, {"a", "b"}, {h, plain}); }) ==
        "scored_heads_input: 'half': gradients for 1 of 2 heads (every head or none)");
  ScoredHead bad = h;
  bad.allowed = xt::ones<bool>({1, 1});
  CHECK(error_of<std::invalid_argument>([&] { scored_heads_input("m", {"x"}, {"a", "b"}, {bad}); }) ==
        "scored_heads_input: 'm', head 'masked': mask (1,1) for 1 queries and 2 keys");
}

TEST_CASE("gradient_run_inputs: an input per run, numbered queries and keys, the mask and the gradients carried") {
  // One query, two keys, the second hidden in the second run.
  const xt::xarray<double> q{{1.0, 0.0}}, k{{1.0, 0.0}, {3.0, 1.0}};
  const double e = std::exp(2.0 / std::sqrt(2.0));  // softmax of (1, 3) / sqrt(2)
  const GradientRun open{"open", xt::xarray<double>{{e / (e + e * e), e * e / (e + e * e)}}, xt::xarray<double>{{2.0, 5.0}},
                         xt::xarray<double>{{0.1, -0.1}}};
  const GradientRun hidden{"hidden", xt::xarray<double>{{1.0, 0.0}}, xt::xarray<double>{{2.0, 5.0}},
                           xt::xarray<double>{{0.0, 0.0}}, Mask{{true, false}}};
  const std::vector<AttentionInput> in = gradient_run_inputs(q, k, {open, hidden});
  REQUIRE(in.size() == 2);
  CHECK(in[0].name == "open");
  CHECK(in[1].queries == std::vector<std::string>{"q1"});
  CHECK(in[1].keys == std::vector<std::string>{"k1", "k2"});
  CHECK(in[0].layers == std::vector<std::string>{"softmax(QKᵀ/√d)"});
  CHECK(in[0].layer_scale == std::vector<double>{1.0 / std::sqrt(2.0)});
  CHECK(in[0].bias[0][0](0, 1) == 0.0);
  CHECK(std::isinf(in[1].bias[0][0](0, 1)));
  REQUIRE(in[1].score_grad.size() == 1);
  CHECK(in[0].weight_grad[0][0](0, 1) == 5.0);
  CHECK(error_of<std::invalid_argument>([&] { gradient_run_inputs(q, k, {}); }) == "gradient_run_inputs: no runs");
  CHECK(error_of<std::invalid_argument>([&] { gradient_run_inputs(xt::xarray<double>{{1.0, 0.0, 2.0}}, k, {open}); }) ==
        "gradient_run_inputs: queries (1,3) and keys (2,2) are not (n, d_k) and (m, d_k)");
}

TEST_CASE("first_sequence_head, tagged_inputs and first_head_maps: sequences of a tagged set as inputs and panels") {
  // weights (2, 2, 2): sequence 0 is the causal pattern of head() above at scale 1.
  const ScoredHead h = head("unscaled", 1.0, 1.0);
  Array<float> w = xt::zeros<float>({2, 2, 2}), q = xt::zeros<float>({2, 2, 2});
  xt::view(w, 0) = xt::cast<float>(h.weights);
  xt::view(q, 0) = xt::cast<float>(h.q);
  const ScoredHead first = first_sequence_head("first", w, q, q, 1.0, true);
  CHECK(first.weights.shape() == std::vector<std::size_t>{2, 2});
  CHECK(first.weights(1, 1) == doctest::Approx(h.weights(1, 1)).epsilon(1e-6));
  CHECK(first.q(0, 0) == 1.0);
  CHECK(first.causal);
  CHECK(contains(error_of<std::invalid_argument>([&] { first_sequence_head("flat", h.weights, q, q, 1.0, true); }),
                 "first_sequence_head: 'flat': weights (2,2), q (2,2,2) and k (2,2,2) are not batches"));

  const nn::data::Tagged set{IndexArray{{3, 1}, {4, 1}, {5, 9}}, IndexArray{{3, 3}, {4, 4}, {5, 9}}};
  std::vector<IndexArray> seen;
  const std::vector<AttentionInput> in = tagged_inputs(set, {2, 0}, "held-out", [&](const IndexArray& one) {
    seen.push_back(one);
    return std::vector<ScoredHead>{head("A", 1.0, 1.0), head("B", 2.0, 2.0)};
  });
  REQUIRE(in.size() == 2);
  CHECK(in[0].name == "held-out 1");
  CHECK(in[1].name == "held-out 2");
  CHECK(in[0].keys == std::vector<std::string>{"5", "9"});
  CHECK(in[0].queries == std::vector<std::string>{"5 → 5", "9 → 9"});
  CHECK(in[1].queries == std::vector<std::string>{"3 → 3", "1 → 3"});
  REQUIRE(seen.size() == 2);
  CHECK(seen[0] == IndexArray{{5, 9}});
  CHECK(error_of<std::invalid_argument>([&] { tagged_inputs(set, {}, "none", nullptr); }) == "tagged_inputs: no rows for 'none'");

  const std::vector<AttentionMap> maps = first_head_maps(in, 2, "sequence");
  REQUIRE(maps.size() == 4);  // layer A on both inputs, then layer B
  CHECK(maps[0].title == "A, sequence 1");
  CHECK(maps[1].title == "A, sequence 2");
  CHECK(maps[2].title == "B, sequence 1");
  CHECK(maps[1].queries == in[1].queries);
  CHECK(first_head_maps(in, 0, "sequence").empty());
  CHECK(error_of<std::invalid_argument>([&] { first_head_maps(in, 3, "sequence"); }) == "first_head_maps: 3 inputs asked for, 2 given");
  std::vector<AttentionInput> other = in;
  other[1].layers[1] = "C";
  CHECK(error_of<std::invalid_argument>([&] { first_head_maps(other, 2, "sequence"); }) ==
        "first_head_maps: input 'held-out 2' has other layers than 'held-out 1'");
}
