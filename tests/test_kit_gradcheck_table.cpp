// lessons/kit/gradcheck_table: named gradient checks, the table a lesson shows (as build/bin/gradcheck
// prints it) with each failure's detail, and the count of failures.
#include <doctest/doctest.h>

#include <string>

#include "core/ops.hpp"
#include "io/files.hpp"
#include "lessons/kit/gradcheck_table.hpp"
#include "lessons/story/lesson.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::contains;
using attnlab::testing::TempDir;

namespace {
Tensor<double> input(const Array<double>& v) { return Tensor<double>(v, true); }

// y = 2x whose backward sends 3 g: a wrong backward gradcheck must catch.
Tensor<double> wrong_double(const Tensor<double>& x) {
  return record<double>("wrong_double", Array<double>(2.0 * x.value()), {&x},
                        [](Node<double>& n) { n.add_grad(0, Array<double>(3.0 * n.grad)); });
}
}  // namespace

TEST_CASE("named_check, failed_count and gradcheck_table: a right and a wrong backward in the lesson's report") {
  const NamedCheck right = named_check("tanh", "(3)", [](const auto& x) { return tanh(x[0]); },
                                       {input(Array<double>{0.1, -0.4, 0.9})});
  const NamedCheck wrong = named_check("wrong_double", "(2)", [](const auto& x) { return wrong_double(x[0]); },
                                       {input(Array<double>{0.3, 0.7})});
  CHECK(right.result.ok);
  CHECK_FALSE(wrong.result.ok);
  CHECK(right.name == "tanh");
  CHECK(wrong.shapes == "(2)");
  CHECK(failed_count({right, wrong}) == 1);
  CHECK(failed_count({right}) == 0);
  CHECK(failed_count({}) == 0);
  GradcheckResult r;
  r.max_rel_error = 1e-9;
  CHECK(digits_of_agreement(r) == doctest::Approx(9.0));
  r.max_rel_error = 0.0;
  CHECK(digits_of_agreement(r) == doctest::Approx(17.0));
  r.max_rel_error = 3.0;
  CHECK(digits_of_agreement(r) == 0.0);
  CHECK(digits_of_agreement(wrong.result) < 6.0);

  TempDir d;
  LessonArgs args;
  args.out = d / "lesson";
  {
    Lesson L({"99_test", "A test lesson", "Checks the gradcheck table.", ""}, args);
    gradcheck_table({right, wrong});
    L.finish();
  }
  const std::string report = read_file(args.out + "/report.md");
  CHECK(contains(report, "| case | shapes | max abs err | max rel err | result |"));
  CHECK(contains(report, "| tanh | (3) |"));
  CHECK(contains(report, "| OK |"));
  CHECK(contains(report, "| wrong_double | (2) |"));
  CHECK(contains(report, "| FAIL |"));
  CHECK(contains(report, "FAIL wrong_double: "));  // with gradcheck's detail after it
  CHECK_FALSE(contains(report, "FAIL tanh"));
}
