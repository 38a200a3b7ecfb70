// ThreadChoice: a loop steps at the faster of one thread and all it was given, measured on its
// own steps, and moves when the other count becomes faster; the thread count is set back after.
#include <doctest/doctest.h>

#include <functional>

#include "core/error.hpp"
#include "core/runtime/parallel.hpp"
#include "core/runtime/thread_choice.hpp"

using namespace attnlab;

namespace {

// Runs `steps` steps whose time at each count `ms(count, step)` says; returns the count of every step.
std::vector<int> run(ThreadChoice& choice, std::size_t steps, const std::function<double(int, std::size_t)>& ms) {
  std::vector<int> counts;
  for (std::size_t s = 0; s < steps; ++s) {
    const int c = choice.before_step();
    CHECK(threads() == c);
    counts.push_back(c);
    choice.after_step(ms(c, s));
  }
  return counts;
}

struct AtThreads {
  explicit AtThreads(int n) : before(threads()) { set_threads(n); }
  ~AtThreads() { set_threads(before); }
  int before;
};

}  // namespace

TEST_CASE("one thread when it is faster, all of them when they are, and back to all at the end") {
  AtThreads at(2);
  {
    ThreadChoice choice(2);
    // Two untimed steps at 2, then the trial alternates 1, 2, ... four times each.
    const std::vector<int> counts = run(choice, 10, [](int c, std::size_t) { return c == 1 ? 5.0 : 8.0; });
    CHECK(counts == std::vector<int>{2, 2, 1, 2, 1, 2, 1, 2, 1, 2});
    CHECK(choice.kept() == 1);
    const std::vector<int> after = run(choice, 20, [](int c, std::size_t) { return c == 1 ? 5.0 : 8.0; });
    for (int c : after) CHECK(c == 1);
    CHECK(choice.steps_at_one() == 24);
    CHECK(choice.steps_at_most() == 6);
  }
  CHECK(threads() == 2);  // set back
  ThreadChoice faster_on_two(2);
  run(faster_on_two, 30, [](int c, std::size_t) { return c == 1 ? 8.0 : 5.0; });
  CHECK(faster_on_two.kept() == 2);
  CHECK(faster_on_two.steps_at_one() == ThreadChoice::kTrialSteps);
}

TEST_CASE("a recheck after 64 steps, then 128, ..., moves to the other count once it is faster by 5 %") {
  AtThreads at(2);
  ThreadChoice choice(2);
  const std::size_t trial = ThreadChoice::kUntimedSteps + 2 * ThreadChoice::kTrialSteps;
  // Two threads win the trial; from step 40 on, one thread is 4 % faster (kept at two, and the next
  // recheck waits twice as long), and from step 120 on 20 % faster (the next recheck moves to it).
  auto ms = [](int c, std::size_t s) {
    if (c == 2) return 10.0;
    return s < 40 ? 12.0 : s < 120 ? 9.6 : 8.0;
  };
  const std::vector<int> counts = run(choice, 300, ms);
  CHECK(choice.kept() == 1);
  // The first recheck (two steps at one thread after 64 steps at two) stays; a later one moves.
  CHECK(counts[trial + 64] == 1);
  CHECK(counts[trial + 65] == 1);
  CHECK(counts[trial + 66] == 2);
  CHECK(counts[trial + 66 + 64] == 2);  // no recheck after 64 steps this time: it waits 128
  CHECK(counts[trial + 66 + 128] == 1);  // this one moves (8 ms against 10)
  CHECK(counts[trial + 66 + 128 + 2] == 1);
  // After a move the wait starts again from 64: the next recheck (of two threads) comes 64 steps on.
  CHECK(counts[trial + 66 + 130 + 64] == 2);
  CHECK(counts.back() == 1);
}

TEST_CASE("given one thread there is nothing to choose; a count below one is refused by name") {
  AtThreads at(1);
  ThreadChoice choice(1);
  for (int c : run(choice, 12, [](int, std::size_t) { return 1.0; })) CHECK(c == 1);
  CHECK(choice.steps_at_one() == 0);
  CHECK(choice.steps_at_most() == 12);
  CHECK_THROWS_WITH_AS(ThreadChoice(0), doctest::Contains("ThreadChoice"), ShapeError);
}
