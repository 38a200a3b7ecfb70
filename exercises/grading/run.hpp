// Running exercises: one answer through its grading function, the outcome printed for a student.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "exercises/grading/exercise.hpp"

namespace attnlab::exercises {

enum class Verdict { passed, failed, not_attempted };

struct Outcome {
  Verdict verdict = Verdict::failed;
  std::vector<Check> checks;
  std::string error;  // what the answer threw, if it threw (not NotAttempted)
};

// Grades `answer` (a std::function of the exercise's signature) with the exercise's checks. A stub
// is not attempted; an answer that throws has failed, with what it threw; an answer of another
// signature (a solution that does not match its stub) has failed, saying so.
Outcome run_exercise(const Exercise& exercise, const std::any& answer);

// The exercises of the lessons named ("04" or "04_scaled_dot_product"; none: all), in lesson and
// file order, numbered: "04.1". UsageError naming a lesson with no exercises.
struct Numbered {
  std::string number;  // "04.1"
  const Exercise* exercise;
};
std::vector<Numbered> select_exercises(const std::vector<std::string>& lessons);

// "04.1 causal_mask: A causal mask ... PASS", then one line per check (the failed ones with their
// hint); colors when `color`.
void print_outcome(std::ostream& os, const Numbered& n, const Outcome& outcome, bool color, bool all_checks);

}  // namespace attnlab::exercises
