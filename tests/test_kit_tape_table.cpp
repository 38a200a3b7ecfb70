// lessons/kit/tape_table: a recorded tape as lesson 06's two tables, the nodes with their inputs and
// the gradient norms after backward, and a graph whose input index is out of range named.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "core/ops.hpp"
#include "io/files.hpp"
#include "lessons/kit/tape_table.hpp"
#include "lessons/story/lesson.hpp"
#include "lessons/story/text.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::contains;
using attnlab::testing::TempDir;

TEST_CASE("tape_rows and tape_gradient_rows: x used twice, a constant, the loss last") {
  const Tensor<double> x(Array<double>{3.0, 4.0}, true), c(Array<double>{1.0, 2.0});
  const Tensor<double> y = x * x, L = sum(y * c);
  const TapeNames<double> names{{x, "x"}, {c, "c"}, {y, "y"}, {L, "L"}};
  const auto rows = tape_rows(describe_tape(L, names));
  REQUIRE(rows.size() == 5);  // x, y, c, y*c, L in some topological order: check the ones we know
  CHECK(rows.front() == std::vector<std::string>{"1", "x", "leaf", "(2)", "-", "leaf, needs a gradient"});
  CHECK(rows.back()[1] == "L");
  CHECK(rows.back()[5] == "op");
  bool saw_y = false, saw_c = false;
  for (const auto& r : rows) {
    if (r[1] == "y") {
      saw_y = true;
      CHECK(r[4] == listing({"x", "x"}));  // used twice: listed twice
    }
    if (r[1] == "c") {
      saw_c = true;
      CHECK(r[5] == "constant");
    }
  }
  CHECK(saw_y);
  CHECK(saw_c);

  retain_tape_grads(L);
  L.backward(/*retain_graph=*/true);
  const auto grads = tape_gradient_rows(describe_tape(L, names));
  REQUIRE(grads.size() == 5);
  for (const auto& r : grads) {
    if (r[0] == "x") CHECK(r[3] == fixed(std::sqrt(36.0 + 256.0), 4));  // dL/dx = 2 x c = (6, 16)
    if (r[0] == "c") CHECK(r[3] == "none (constant)");
    if (r[0] == "L") CHECK(r[3] == "1.0000");
  }

  TempDir d;
  LessonArgs args;
  args.out = d / "lesson";
  {
    Lesson lesson({"99_test", "A test lesson", "Checks the tape tables.", ""}, args);
    tape_table(describe_tape(L, names));
    tape_gradient_table(describe_tape(L, names));
    lesson.finish();
  }
  const std::string report = read_file(args.out + "/report.md");
  CHECK(contains(report, "| # | tensor | op | shape | inputs | kind |"));
  CHECK(contains(report, "| 1 | x | leaf | (2) | - | leaf, needs a gradient |"));
  CHECK(contains(report, "none (constant)"));
}

TEST_CASE("tape_rows: an input index outside the graph is named") {
  TapeGraph g;
  g.nodes.push_back({"matmul", "z", {2, 2}, false, true, false, std::nullopt, {0, 5}});
  CHECK_THROWS_WITH_AS(tape_rows(g), doctest::Contains("tape_rows: node 1 (matmul) names input 5 of a graph of 1 nodes"),
                       std::out_of_range);
  CHECK(tape_gradient_rows(TapeGraph{}).empty());
}
