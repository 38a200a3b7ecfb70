// The tape drawn as a graph (core/tape_graph.hpp): the description of a tiny computation, its DOT
// text, and gradient norms after backward.
#include <doctest/doctest.h>

#include <string>

#include "core/ops.hpp"
#include "core/tape_graph.hpp"
#include "plots/graph.hpp"

using namespace attnlab;
using TD = Tensor<double>;

namespace {

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// loss = sum(y * y) with y = x w: y is used twice.
struct Tiny {
  TD x{Array<double>{{1, 2, 3}, {4, 5, 6}}, true};
  TD w{Array<double>{{1, 0}, {0, 1}, {1, 1}}, true};
  TD y = matmul(x, w);
  TD loss = sum(y * y);
};

}  // namespace

TEST_CASE("describe_tape: nodes in topological order, shapes, one input per edge, a tensor used twice twice") {
  Tiny t;
  const TapeGraph g = describe_tape(t.loss, TapeNames<double>{{t.x, "x"}, {t.w, "w"}, {t.loss, "L"}});
  REQUIRE(g.nodes.size() == 5);  // x, w, matmul, mul, sum
  CHECK(g.edge_count() == 5);    // matmul <- x, w; mul <- y, y; sum <- mul
  CHECK(g.nodes[0].name == "x");
  CHECK(g.nodes[0].leaf);
  CHECK(g.nodes[0].shape == Shape{2, 3});
  CHECK(g.nodes[1].name == "w");
  CHECK(g.nodes[2].op == "matmul");
  CHECK(g.nodes[2].shape == Shape{2, 2});
  CHECK(g.nodes[2].inputs == std::vector<std::size_t>{0, 1});
  CHECK(g.nodes[3].op == "mul");
  CHECK(g.nodes[3].inputs == std::vector<std::size_t>{2, 2});  // y * y: two edges from one node
  CHECK(g.nodes[4].op == "sum");
  CHECK(g.nodes[4].name == "L");
  CHECK(g.nodes[4].shape.empty());
  for (const TapeNode& n : g.nodes) {
    CHECK_FALSE(n.grad_norm);  // no backward yet
    CHECK_FALSE(n.freed);
    for (std::size_t i : n.inputs) CHECK(i < std::size_t(&n - g.nodes.data()));  // inputs come first
  }
}

TEST_CASE("tape_dot: one box per node with op and shape, one edge per input") {
  Tiny t;
  const std::string dot = tape_dot(t.loss, TapeNames<double>{{t.x, "x"}});
  CHECK(dot.rfind("digraph tape {", 0) == 0);
  CHECK(count(dot, "[label=\"") == 5 + 4);  // 5 boxes, and the 4 edges of two-input ops are numbered
  CHECK(count(dot, " -> ") == 5);
  CHECK(count(dot, "n2 -> n3") == 2);  // y used twice by mul
  CHECK(dot.find("x (leaf)\\n(2,3)") != std::string::npos);
  CHECK(dot.find("matmul\\n(2,2)") != std::string::npos);
  CHECK(dot.find("sum\\n()") != std::string::npos);
  CHECK(dot.find("‖grad‖") == std::string::npos);
  CHECK_NOTHROW(plots::save_graph(dot, "/tmp/attnlab_test_tape_graph.svg"));  // valid DOT for Graphviz
}

TEST_CASE("after backward: retain_tape_grads and retain_graph keep every gradient; a plain backward frees the tape") {
  Tiny t;
  retain_tape_grads(t.loss);
  t.loss.backward(/*retain_graph=*/true);
  const TapeGraph g = describe_tape(t.loss);
  REQUIRE(g.nodes.size() == 5);
  for (const TapeNode& n : g.nodes) CHECK(n.grad_norm);
  CHECK(*g.nodes[4].grad_norm == doctest::Approx(1.0));  // dL/dL
  // dL/dy = 2y, so ‖dL/dy‖ = 2‖y‖.
  const double ny = std::sqrt(double(xt::sum(t.y.value() * t.y.value())()));
  CHECK(*g.nodes[2].grad_norm == doctest::Approx(2 * ny));
  CHECK(count(tape_dot(t.loss), "‖grad‖ = ") == 5);

  Tiny u;
  u.loss.backward();
  const TapeGraph freed = describe_tape(u.loss);
  REQUIRE(freed.nodes.size() == 1);
  CHECK(freed.nodes[0].freed);
  CHECK(tape_dot(u.loss).find("freed by backward") != std::string::npos);
}

TEST_CASE("describe_tape: an empty handle is an error naming the function") {
  CHECK_THROWS_WITH_AS(describe_tape(TD()), doctest::Contains("describe_tape"), GraphError);
}
