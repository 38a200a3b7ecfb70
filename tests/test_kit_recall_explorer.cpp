// lessons/kit/recall_explorer: the page for one held-out recall sequence, its tokens, the question
// rows of each run's weights, and bad input named.
#include <doctest/doctest.h>

#include <stdexcept>

#include "lessons/kit/recall_explorer.hpp"
#include "lessons/story/lesson.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

TEST_CASE("recall_explorer: each question's weights from every run's own attention, tokens as the page shows them") {
  attnlab::testing::TempDir d;
  LessonArgs args;
  args.out = d / "lesson";
  Lesson lesson({"99_test", "A test lesson", "Trains recall.", ""}, args);  // train() writes into a lesson
  const RecallTask task = make_recall_task({32, 8, 4, 4}, 32, 4, 4, 3);
  Recipe r;
  r.epochs = 2, r.batch = 16, r.lr = 1e-2, r.seed = 5;
  const RecallRun exact = train_recall(task, "exact", nn::AttentionKind::exact, 8, r, 11),
                  local = train_recall(task, "local", nn::AttentionKind::local, 8, r, 11),
                  lin = train_recall(task, "Linformer", nn::AttentionKind::linformer, 8, r, 11);
  const ExplorerPage page = recall_explorer(task, {&exact, &local}, 1);
  REQUIRE(page.inputs.size() == 1);
  const AttentionInput& in = page.inputs[0];
  CHECK(in.layers == std::vector<std::string>{"exact", "local"});
  CHECK(in.keys.size() == 32);
  CHECK(in.queries.size() == 4);  // the four questions
  const data::Recall one = task.held_out.rows({1});
  std::size_t q = 0;
  for (std::size_t i = 0; i < 32; ++i) {
    const bool filler = one.keys(0, i) == 8, asks = one.targets(0, i) != data::kNotAsked;
    CHECK(in.keys[i] == (filler ? "·" : asks ? "k" + std::to_string(one.keys(0, i)) + "?"
                                             : "k" + std::to_string(one.keys(0, i)) + "=v" + std::to_string(one.values(0, i))));
    if (!asks) continue;
    CHECK(in.queries[q] == in.keys[i] + " (" + std::to_string(i) + ")");
    const Array<float> w = local.model->attention_weights(one);
    for (std::size_t j = 0; j < 32; ++j) CHECK(in.heads[1][0](q, j) == doctest::Approx(w(0, i, j)));
    ++q;
  }
  CHECK_FALSE(explorer_html(page).empty());  // the page's own checks: shapes, weights in [0, 1]
  CHECK_THROWS_WITH_AS(recall_explorer(task, {}, 0), doctest::Contains("recall_explorer: needs runs"), std::invalid_argument);
  CHECK_THROWS_AS(recall_explorer(task, {&exact}, 4), std::invalid_argument);
  CHECK_THROWS_AS(recall_explorer(task, {&lin}, 0), std::logic_error);
  lesson.finish();
}
