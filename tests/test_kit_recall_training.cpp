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

TEST_CASE("make_recall_task: both sets from one seed, training first; bad sizes named") {
  const data::RecallConfig c = {32, 8, 4, 4};
  const RecallTask t = make_recall_task(c, 6, 3, 4, 9);
  CHECK(t.band == 4);
  CHECK(t.config.length == 32);
  CHECK(t.train.size() == 6);
  CHECK(t.held_out.size() == 3);
  Generator gen(9);  // the same draws, in the same order
  const data::Recall train = data::make_recall(c, 6, gen), held_out = data::make_recall(c, 3, gen);
  CHECK(t.train.keys == train.keys);
  CHECK(t.held_out.values == held_out.values);
  CHECK(t.held_out.targets == held_out.targets);
  CHECK_THROWS_WITH_AS(make_recall_task(c, 6, 3, 0, 9), doctest::Contains("make_recall_task: needs 0 < band <= length"),
                       std::invalid_argument);
  CHECK_THROWS_AS(make_recall_task(c, 6, 3, 33, 9), std::invalid_argument);
  CHECK_THROWS_AS(make_recall_task(c, 0, 3, 4, 9), std::invalid_argument);
}
