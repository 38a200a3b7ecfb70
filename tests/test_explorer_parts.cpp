// The explorer's neuron view data (lessons/kit/explorer.hpp): an input's queries, keys and bias go
// into the page rounded to four significant digits, with the mask as a 0/1 string per query; they
// are refused when their shapes do not fit, or when the softmax of the scores they make is not the
// weights the head view draws. with_score_parts fills them from a MultiHeadAttention's ScoreParts.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "core/ops.hpp"
#include "lessons/kit/explorer.hpp"
#include "lessons/kit/self_attention_input.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::contains;

namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no exception)";
}

// Two queries, three keys, d_k = 2, one head; query 1 may not see key 3. Its weights are the
// softmax of q.k / sqrt(2) + bias, worked out here.
AttentionInput with_parts() {
  const double inf = std::numeric_limits<double>::infinity(), s = 1.0 / std::sqrt(2.0);
  const double a = std::exp(s), b = 1.0;                                         // row 1: 1/sqrt2, 0, masked
  const double c = std::exp(0.5), d = std::exp(2 * s), e = std::exp(2 * s);  // row 2: 0.5, 2/sqrt2, 2/sqrt2
  AttentionInput in{"q", {"x", "y"}, {"a", "b", "c"}, {"layer 1"},
                    {{xt::xarray<double>{{a / (a + b), b / (a + b), 0.0}, {c / (c + d + e), d / (c + d + e), e / (c + d + e)}}}}};
  in.q = {{xt::xarray<double>{{1.0, 0.0}, {0.0, 2.0}}}};
  in.k = {{xt::xarray<double>{{1.0, 0.0}, {0.0, 1.0}, {0.0, 1.0}}}};
  in.bias = {{xt::xarray<double>{{0.0, 0.0, -inf}, {0.5, 0.0, 0.0}}}};
  return in;
}

}  // namespace

TEST_CASE("explorer: queries, keys and bias in the page, checked against the weights") {
  ExplorerPage page{"Parts", "queries", "keys", "", {with_parts()}};
  const std::string html = explorer_html(page);
  CHECK(contains(html, "\"q\":[[1.0,0.0],[0.0,2.0]],\"k\":[[1.0,0.0],[0.0,1.0],[0.0,1.0]]"));
  CHECK(contains(html, "\"scale\":0.7071067811865475"));
  CHECK(contains(html, "\"bias\":[[0.0,0.0,0.0],[0.5,0.0,0.0]],\"allowed\":[\"110\",\"111\"]"));
  CHECK(contains(html, "id=\"neuron-view\""));

  AttentionInput rounded = with_parts();
  rounded.bias[0][0](1, 0) = 0.500012;  // within the check's 1e-3 of the weights, and four digits in the page
  page.inputs = {rounded};
  CHECK(contains(explorer_html(page), "\"bias\":[[0.0,0.0,0.0],[0.5,0.0,0.0]]"));

  // A key that differs from the one the weights came from: the page would explain other weights.
  AttentionInput wrong = with_parts();
  wrong.k[0][0](2, 1) = 1.5;
  page.inputs = {wrong};
  CHECK(contains(error_of([&] { explorer_html(page); }),
                 "explorer: input 'q': layer 'layer 1', head 1: the softmax of q.k * scale + bias gives"));
  wrong = with_parts();
  wrong.k[0][0] = xt::ones<double>({3, 3});
  page.inputs = {wrong};
  CHECK(error_of([&] { explorer_html(page); }) ==
        "explorer: input 'q': layer 'layer 1', head 1: queries (2, 2) and keys (3, 3) for 2 queries and 3 keys "
        "(each (tokens, d_k), one d_k)");
  wrong = with_parts();
  wrong.bias[0][0](1, 1) = std::numeric_limits<double>::infinity();
  page.inputs = {wrong};
  CHECK(contains(error_of([&] { explorer_html(page); }), "bias (1, 1) = inf (a bias is finite, or -inf for a masked key)"));
  wrong = with_parts();
  wrong.q.clear();
  page.inputs = {wrong};
  CHECK(contains(error_of([&] { explorer_html(page); }), "queries, keys and bias given for 0, 1 and 1 layers of 1"));
  wrong = with_parts();
  wrong.q.clear(), wrong.k.clear(), wrong.bias.clear();  // no parts: a page without the neuron view's data
  page.inputs = {wrong};
  CHECK(!contains(explorer_html(page), "\"parts\""));
}

TEST_CASE("with_score_parts: a causal self-attention's queries and keys, per head, make its weights") {
  Generator g(2);
  nn::MultiHeadAttention<float> att(8, 2, g);
  att.keep_score_parts(true);
  Generator gx(3);
  const Tensor<float> x(random_uniform<float>({2, 3, 8}, gx, -1.0, 1.0)), y(random_uniform<float>({2, 3, 8}, gx, -1.0, 1.0));
  nn::MultiHeadOptions<float> o;
  o.causal = true;
  NoGrad no_grad;
  const Tensor<float> w = att.forward(x, o).weights;
  const AttentionInput in = with_score_parts(self_attention_input("x", {"a", "b", "c"}, {w}, 1), {att.score_parts()}, 1);
  REQUIRE(in.q.size() == 1);
  REQUIRE(in.q[0].size() == 2);
  CHECK(in.q[0][1].shape() == std::vector<std::size_t>{3, 4});
  CHECK(in.q[0][1](2, 3) == doctest::Approx(att.score_parts().queries(1, 2, 7)));
  CHECK(std::isinf(in.bias[0][0](0, 2)));
  CHECK(in.scale == doctest::Approx(0.5));
  ExplorerPage page{"Parts", "queries", "keys", "", {in}};
  CHECK(contains(explorer_html(page), "\"allowed\":[\"100\",\"110\",\"111\"]"));
  // Queries and keys of another input do not explain these weights.
  att.forward(y, o);
  page.inputs = {with_score_parts(self_attention_input("x", {"a", "b", "c"}, {w}, 1), {att.score_parts()}, 1)};
  CHECK(contains(error_of([&] { explorer_html(page); }), "the softmax of q.k * scale + bias gives"));
  CHECK(contains(error_of([&] { with_score_parts(in, {}, 0); }), "with_score_parts: 'x': 0 layers of queries and keys for 1 layers"));
  CHECK(contains(error_of([&] { with_score_parts(in, {att.score_parts()}, 2); }), "for example 2"));
}

TEST_CASE("side_by_side: two models' layers in turn, named by model, with their parts; disagreeing inputs refused") {
  AttentionInput other = with_parts();
  other.heads[0][0](0, 0) = 1.0, other.heads[0][0](0, 1) = 0.0;  // another model's weights (no longer its parts')
  other.q.clear(), other.k.clear(), other.bias.clear();
  AttentionInput plain = with_parts();
  plain.q.clear(), plain.k.clear(), plain.bias.clear();
  const AttentionInput both = side_by_side("both", {{"A", plain}, {"B", other}});
  CHECK(both.name == "both");
  CHECK(both.layers == std::vector<std::string>{"A: layer 1", "B: layer 1"});
  REQUIRE(both.heads.size() == 2);
  CHECK(both.heads[0][0] == plain.heads[0][0]);
  CHECK(both.heads[1][0] == other.heads[0][0]);
  CHECK(both.queries == plain.queries);
  ExplorerPage page{"Both", "queries", "keys", "", {both}};
  CHECK(contains(explorer_html(page), "B: layer 1"));
  // With their parts: the neuron view's data follows each layer.
  const AttentionInput parts = side_by_side("parts", {{"A", with_parts()}, {"B", with_parts()}});
  CHECK(parts.q.size() == 2);
  CHECK(parts.bias.size() == 2);
  page.inputs = {parts};
  CHECK(contains(explorer_html(page), "id=\"neuron-view\""));
  CHECK(contains(error_of([&] { side_by_side("mixed", {{"A", with_parts()}, {"B", plain}}); }),
                 "side_by_side: 'B' differs from 'A' in its queries, keys, scale or neuron view, for 'mixed'"));
  AttentionInput renamed = plain;
  renamed.keys[0] = "z";
  CHECK(contains(error_of([&] { side_by_side("keys", {{"A", plain}, {"B", renamed}}); }), "'B' differs from 'A'"));
  CHECK(contains(error_of([&] { side_by_side("none", {}); }), "side_by_side: no models for 'none'"));
}

namespace {

// Two heads of with_parts()'s one, both reading the same keys (grouped-query attention: one key/value
// head for both); head 2's queries doubled, so its weights are the softmax of its own scores.
AttentionInput two_heads_one_key() {
  AttentionInput in = with_parts();
  AttentionInput doubled = with_parts();
  const double s = 1.0 / std::sqrt(2.0);
  xt::xarray<double> w = xt::zeros<double>({2, 3});
  for (std::size_t i = 0; i < 2; ++i) {
    double total = 0;
    for (std::size_t j = 0; j < 3; ++j) {
      const double score = 2 * (in.q[0][0](i, 0) * in.k[0][0](j, 0) + in.q[0][0](i, 1) * in.k[0][0](j, 1)) * s + in.bias[0][0](i, j);
      total += w(i, j) = std::exp(score);
    }
    for (std::size_t j = 0; j < 3; ++j) w(i, j) /= total;
  }
  in.heads[0].push_back(w);
  in.q[0].push_back(2.0 * doubled.q[0][0]);
  in.k[0].push_back(doubled.k[0][0]);
  in.bias[0].push_back(doubled.bias[0][0]);
  return in;
}

}  // namespace

TEST_CASE("explorer: grouped heads (kv_heads) in the page, their shared keys checked; a layer without a neuron view says why") {
  AttentionInput in = two_heads_one_key();
  in.kv_heads = {1};
  ExplorerPage page{"Grouped", "queries", "keys", "", {in}};
  const std::string html = explorer_html(page);
  CHECK(contains(html, "\"kv_heads\":1"));
  CHECK(contains(html, "id=\"kv-groups\""));
  CHECK(!contains(explorer_html(ExplorerPage{"Plain", "queries", "keys", "", {with_parts()}}), "id=\"kv-groups\""));
  in.kv_heads = {3};
  page.inputs = {in};
  CHECK(error_of([&] { explorer_html(page); }) ==
        "explorer: input 'q': layer 'layer 1': 3 key/value heads for 2 query heads (a divisor of them)");
  in.kv_heads = {1, 1};
  page.inputs = {in};
  CHECK(contains(error_of([&] { explorer_html(page); }), "2 key/value head counts for 1 layers"));
  in.kv_heads = {2};  // every head its own: no keys to compare
  page.inputs = {in};
  CHECK(contains(explorer_html(page), "\"kv_heads\":2"));

  // A layer whose score is not q . k: no queries and keys, and why.
  AttentionInput plain = with_parts();
  plain.q = {{}}, plain.k = {{}}, plain.bias = {{}};
  page.inputs = {plain};
  CHECK(contains(error_of([&] { explorer_html(page); }), "queries, keys and bias for 0, 0 and 0 heads of 1"));
  plain.no_neuron_view = {"concat: v^T tanh(W [q; k]) is not a sum of products"};
  page.inputs = {plain};
  const std::string why = explorer_html(page);
  CHECK(contains(why, "\"no_neuron_view\":\"concat: v^T tanh(W [q; k]) is not a sum of products\""));
  CHECK(!contains(why, "\"parts\""));
  AttentionInput both = with_parts();
  both.no_neuron_view = {"no reason"};
  page.inputs = {both};
  CHECK(contains(error_of([&] { explorer_html(page); }), "has queries and keys and a reason for having no neuron view"));
}

TEST_CASE("explorer: heads said to share a key/value head must have the same keys") {
  // Two heads with their own keys (each head's weights the softmax of its own scores), said to share one.
  AttentionInput in = with_parts();
  AttentionInput other = with_parts();
  in.heads[0].push_back(other.heads[0][0]);
  in.q[0].push_back(other.q[0][0]);
  xt::xarray<double> k = other.k[0][0];
  k(0, 0) = 1.0 + 1e-7;  // a key the softmax check cannot tell apart (1e-3), yet not the same key
  in.k[0].push_back(k);
  in.bias[0].push_back(other.bias[0][0]);
  in.kv_heads = {1};
  ExplorerPage page{"Grouped", "queries", "keys", "", {in}};
  CHECK(error_of([&] { explorer_html(page); }) ==
        "explorer: input 'q': layer 'layer 1': heads 1 and 2 share key/value head 1 but their keys differ");
  in.kv_heads = {2};
  page.inputs = {in};
  CHECK(contains(explorer_html(page), "\"kv_heads\":2"));
}

TEST_CASE("side_by_side: grouped heads and reasons for no neuron view kept per model") {
  AttentionInput grouped = two_heads_one_key();
  grouped.kv_heads = {1};
  AttentionInput own = two_heads_one_key();
  const AttentionInput both = side_by_side("both", {{"MQA", grouped}, {"MHA", own}});
  CHECK(both.kv_heads == std::vector<std::size_t>{1, 2});
  CHECK(both.no_neuron_view.empty());
  ExplorerPage page{"Both", "queries", "keys", "", {both}};
  CHECK(contains(explorer_html(page), "\"kv_heads\":1"));
}
