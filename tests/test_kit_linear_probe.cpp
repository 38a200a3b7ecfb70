// lessons/kit/linear_probe: a linear classifier on fixed features, standardized with the training
// set's statistics: it reads a linearly separable label, not a random one, and names bad input.
#include <doctest/doctest.h>

#include <stdexcept>

#include <xtensor/xbuilder.hpp>

#include "lessons/kit/linear_probe.hpp"
#include "lessons/story/lesson.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

namespace {
// n points of 3 features; the label is the sign of feature 1 (scaled by 1000, so that only the
// standardization makes one learning rate work) when `separable`, a coin flip otherwise.
LabelledFeatures points(std::size_t n, bool separable, Generator& gen) {
  LabelledFeatures s{xt::zeros<float>({n, std::size_t(3)}), xt::zeros<Index>({n})};
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t k = 0; k < 3; ++k) s.x(i, k) = float(gen.normal());
    s.x(i, 1) *= 1000.0f;
    s.y(i) = separable ? Index(s.x(i, 1) > 0) : Index(gen.below(2));
  }
  return s;
}
}  // namespace

TEST_CASE("linear_probe: a separable label read almost perfectly, a random one near chance") {
  attnlab::testing::TempDir d;
  LessonArgs args;
  args.out = d / "lesson";
  Lesson lesson({"99_test", "A test lesson", "Probes features.", ""}, args);  // train() writes into a lesson
  Generator gen(5);
  ProbeRecipe r;
  r.init_seed = 1, r.order_seed = 2;
  const LabelledFeatures train = points(200, true, gen), validation = points(100, true, gen), test = points(100, true, gen);
  const ProbeScores s = linear_probe(train, validation, test, r);
  CHECK(s.validation > 0.95);
  CHECK(s.test > 0.95);
  const ProbeScores again = linear_probe(train, validation, test, r);
  CHECK(again.test == s.test);  // the same seeds, the same probe
  const ProbeScores coin = linear_probe(points(200, false, gen), points(100, false, gen), points(400, false, gen), r);
  CHECK(coin.test < 0.65);
}

TEST_CASE("linear_probe: shapes, labels and an empty training set named") {
  Generator gen(6);
  const LabelledFeatures ok = points(10, true, gen);
  ProbeRecipe r;
  LabelledFeatures wide = ok;
  wide.x = xt::zeros<float>({std::size_t(10), std::size_t(4)});
  CHECK_THROWS_WITH_AS(linear_probe(ok, wide, ok, r), doctest::Contains("linear_probe: the validation set has features (10,4)"),
                       std::invalid_argument);
  LabelledFeatures short_labels = ok;
  short_labels.y = xt::zeros<Index>({std::size_t(9)});
  CHECK_THROWS_WITH_AS(linear_probe(ok, ok, short_labels, r), doctest::Contains("the test set has features (10,3) and labels (9)"),
                       std::invalid_argument);
  LabelledFeatures bad_label = ok;
  bad_label.y(3) = 2;
  CHECK_THROWS_WITH_AS(linear_probe(bad_label, ok, ok, r), doctest::Contains("a label 2 in the training set, outside [0, 2)"),
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(linear_probe({xt::zeros<float>({std::size_t(0), std::size_t(3)}), xt::zeros<Index>({std::size_t(0)})}, ok, ok, r),
                       doctest::Contains("linear_probe: training features (0,3)"), std::invalid_argument);
}
