// The explorer's gradient view data (lessons/kit/explorer.hpp, AttentionInput::weight_grad and
// score_grad): dA and dS go into the page in full, with the view's section; they are refused when
// their shapes do not fit, or when dS is not A (dA - D), the softmax's backward of dA.
#include <doctest/doctest.h>

#include <stdexcept>

#include "lessons/kit/explorer.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::contains;
using attnlab::testing::error_of;

namespace {

// Two queries, three keys; query 1 sees keys 1 and 2 only (A = 0 on key 3, whatever its dA).
AttentionInput with_gradients() {
  AttentionInput in{"g", {"x", "y"}, {"a", "b", "c"}, {"layer 1"},
                    {{xt::xarray<double>{{0.25, 0.75, 0.0}, {0.5, 0.25, 0.25}}}}};
  const xt::xarray<double> dA{{1.0, -1.0, 4.0}, {2.0, 0.0, 1.0}};
  // Row 1: D = -0.5, dS = (0.25 * 1.5, 0.75 * -0.5, 0 * 4.5); row 2: D = 1.25, dS = (0.5 * 0.75, 0.25 * -1.25, 0.25 * -0.25).
  in.weight_grad = {{dA}};
  in.score_grad = {{xt::xarray<double>{{0.375, -0.375, 0.0}, {0.375, -0.3125, -0.0625}}}};
  return in;
}

}  // namespace

TEST_CASE("explorer: dA and dS in the page with the gradient view, checked against the softmax's backward") {
  ExplorerPage page{"Gradients", "queries", "keys", "", {with_gradients()}};
  const std::string html = explorer_html(page);
  CHECK(contains(html, "\"grads\":[{\"dA\":[[1.0,-1.0,4.0],[2.0,0.0,1.0]],\"dS\":[[0.375,-0.375,0.0],[0.375,-0.3125,-0.0625]]}]"));
  CHECK(contains(html, "<h2>Gradient view</h2>"));
  CHECK(contains(html, "id=\"gradient-view\""));

  AttentionInput plain = with_gradients();
  plain.weight_grad.clear(), plain.score_grad.clear();
  page.inputs = {plain};
  CHECK(!contains(explorer_html(page), "id=\"gradient-view\""));  // no gradients, no view

  AttentionInput wrong = with_gradients();
  wrong.score_grad[0][0](1, 2) = 0.0625;  // the wrong sign
  page.inputs = {wrong};
  CHECK(error_of<std::invalid_argument>([&] { explorer_html(page); }) ==
        "explorer: input 'g': layer 'layer 1', head 1: A (dA - D) = -0.062500 at (1, 2), dS says 0.062500");
  wrong = with_gradients();
  wrong.weight_grad[0][0] = xt::ones<double>({2, 2});
  page.inputs = {wrong};
  CHECK(error_of<std::invalid_argument>([&] { explorer_html(page); }) ==
        "explorer: input 'g': layer 'layer 1', head 1: dA (2, 2) for 2 queries and 3 keys, every value finite");
  wrong = with_gradients();
  wrong.score_grad.clear();
  page.inputs = {wrong};
  CHECK(error_of<std::invalid_argument>([&] { explorer_html(page); }) == "explorer: input 'g': dA and dS given for 1 and 0 layers of 1");
  wrong = with_gradients();
  wrong.score_grad[0].push_back(wrong.score_grad[0][0]);
  page.inputs = {wrong};
  CHECK(contains(error_of<std::invalid_argument>([&] { explorer_html(page); }), "layer 'layer 1': dA and dS for 1 and 2 heads of 1"));
}
