// lessons/kit/recall_training: associative recall trained by a recipe, the held-out accuracy
// after every epoch, the same initial weights for every attention, and bad recipes named.
#include <doctest/doctest.h>

#include <stdexcept>

#include "lessons/kit/recall_training.hpp"
#include "lessons/story/lesson.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {
RecallTask small_task() {
  RecallTask t;
  t.config = {32, 8, 4, 4};  // length, keys, values, pairs
  t.band = 4;
  Generator gen(3);
  t.train = data::make_recall(t.config, 64, gen);
  t.held_out = data::make_recall(t.config, 32, gen);
  return t;
}

Recipe quick_recipe() {
  Recipe r;
  r.epochs = 4, r.batch = 16, r.lr = 1e-2, r.seed = 5;
  return r;
}
}  // namespace

TEST_CASE("train_recall: the history's held-out accuracy, its last and half-way values, deterministic") {
  attnlab::testing::TempDir d;
  LessonArgs args;
  args.out = d / "lesson";
  Lesson lesson({"99_test", "A test lesson", "Trains recall.", ""}, args);  // train() writes into a lesson
  const RecallTask task = small_task();
  const RecallRun a = train_recall(task, "exact", nn::AttentionKind::exact, 16, quick_recipe(), 11);
  const std::vector<double>& acc = a.history.validation_of("accuracy");
  REQUIRE(acc.size() == 4);
  CHECK(a.accuracy == acc[3]);
  CHECK(a.half == acc[1]);
  CHECK(a.accuracy == doctest::Approx(nn::recall_accuracy(*a.model, task.held_out)));  // the model as trained
  CHECK(a.name == "exact");
  CHECK(a.kind == nn::AttentionKind::exact);
  const RecallRun again = train_recall(task, "exact", nn::AttentionKind::exact, 16, quick_recipe(), 11);
  CHECK(again.history.loss == a.history.loss);
  // The weights come from init_seed: another seed, another run; another attention trains the same way.
  CHECK(train_recall(task, "exact", nn::AttentionKind::exact, 16, quick_recipe(), 12).history.loss != a.history.loss);
  const RecallRun local = train_recall(task, "local", nn::AttentionKind::local, 16, quick_recipe(), 11);
  CHECK(local.kind == nn::AttentionKind::local);
  CHECK(local.history.validation_of("accuracy").size() == 4);
  Recipe one = quick_recipe();
  one.epochs = 1;
  CHECK_THROWS_WITH_AS(train_recall(task, "short", nn::AttentionKind::exact, 16, one, 11),
                       doctest::Contains("train_recall: 'short' needs at least 2 epochs, got 1"), std::invalid_argument);
  lesson.finish();
}
