// Claims: the sentences of a lesson that report a result.
//
// A course that teaches by measurement may not state what it did not measure. So a sentence that
// interprets a number ("several heads solve what one cannot", "beam search helps after one epoch",
// "relative positions carry over to longer inputs") is not fixed text but a claim: it names the
// condition under which it holds, over the metrics the lesson recorded (and any other numbers it
// hands over), and it comes with two wordings, one for each outcome:
//
//   metric("test_acc_pair_h1", one.accuracy);
//   metric("test_acc_pair_h2", two.accuracy);
//   claim({"two_heads_solve_pair",
//          "test_acc_pair_h2 >= 0.99 and test_acc_pair_h1 <= test_acc_pair_h2 - 0.2",
//          text("Two heads solve the pair task (", fixed(two.accuracy, 3), ") where one head does not (",
//               fixed(one.accuracy, 3), ")."),
//          text("Here one head did as well as two (", fixed(one.accuracy, 3), " against ",
//               fixed(two.accuracy, 3), "): with unequal weights, one mean can keep two tokens apart.")});
//
// The lesson says the sentence that matches what happened. story.json keeps the claim (its
// condition, the numbers it read, whether it held, the sentence said), the course book marks it
// as measured or "not seen in this run", lesson_check evaluates the condition again from the
// recorded numbers, and the seed runs count on how many seeds each claim held.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace attnlab::lessons {

// What a claim promises, and so what fails a run when it does not hold.
enum class Expect {
  every_run,   // quick and full runs alike: lesson_check (in ctest) fails a run where it does not hold
  full_run,    // full runs (lesson_check fails a full run, the seed runs report every seed it failed
               // on); a quick run may be too small to show it, and its other wording says so
  either_way,  // the outcome honestly varies with the seed: both wordings are true lessons, and
               // the run says which way it went (never a failure)
};

const char* expect_name(Expect e);  // "every_run", "full_run", "either_way"

struct Claim {
  std::string id;         // unique in the lesson: "two_heads_solve_pair"
  std::string when;       // the condition (lessons/story/condition.hpp) over metrics and `numbers`
  std::string holds;      // the sentence when the condition holds
  std::string otherwise;  // the sentence when it does not: what was measured instead
  Expect expect = Expect::every_run;
  // Numbers the condition reads besides the recorded metrics (a count, a threshold that depends
  // on the run); a name here shadows a metric of the same name.
  std::vector<std::pair<std::string, double>> numbers = {};
};

}  // namespace attnlab::lessons
