// build/bin/grade_solutions: proves the grader, for the teacher and for CI. For every exercise:
// the stub as shipped is "not attempted" (not a failure), the solution in exercises/solutions/
// passes every check, and every wrong answer registered there is caught (some check fails). An
// exercise without a solution or without a wrong answer is a failure of the proof.
//
//   grade_solutions            every lesson
//   grade_solutions 04         one lesson
//   grade_solutions --verbose  also what each wrong answer was told
#include <unistd.h>

#include <iostream>

#include "exercises/grading/run.hpp"
#include "io/program.hpp"

using namespace attnlab::exercises;

namespace {

constexpr const char* kUsage =
    "usage: grade_solutions [LESSON ...] [--verbose] [--help] [--version]\n"
    "  LESSON     04 or 04_scaled_dot_product (default: every lesson with exercises)\n"
    "  --verbose  print what the grader tells each wrong answer\n"
    "  For every exercise: the stub says not attempted, the solution passes, every wrong answer is caught.\n";

int run(const std::vector<std::string>& args) {
  bool verbose = false;
  std::vector<std::string> lessons;
  for (const std::string& a : args) {
    if (a == "--verbose") verbose = true;
    else if (a.rfind("-", 0) == 0) throw attnlab::UsageError("unknown argument '" + a + "'");
    else lessons.push_back(a);
  }
  const bool color = isatty(STDOUT_FILENO);
  const char* red = color ? "\033[31m" : "";
  const char* reset = color ? "\033[0m" : "";
  int problems = 0, exercises = 0, wrong_caught = 0;
  auto problem = [&](const std::string& what) {
    std::cout << "    " << red << "PROBLEM" << reset << "  " << what << "\n";
    ++problems;
  };
  for (const Numbered& n : select_exercises(lessons)) {
    const Exercise& e = *n.exercise;
    ++exercises;
    std::cout << n.number << " " << e.name << ": " << e.title << "\n";
    const Outcome stub = run_exercise(e, e.stub);
    if (stub.verdict == Verdict::not_attempted) std::cout << "    stub            not attempted\n";
    else problem("the stub in exercises/" + e.lesson + ".cpp does not say not_attempted()");
    int solutions = 0, wrong = 0;
    for (const Answer& a : answer_registry()) {
      if (a.lesson != e.lesson || a.exercise != e.name) continue;
      const Outcome o = run_exercise(e, a.fn);
      if (a.what.empty()) {
        ++solutions;
        if (o.verdict == Verdict::passed) {
          std::cout << "    solution        passes every check (" << o.checks.size() << ")\n";
        } else {
          problem("the solution does not pass:");
          print_outcome(std::cout, n, o, color, false);
        }
        continue;
      }
      ++wrong;
      std::string caught_by;
      for (const Check& c : o.checks)
        if (!c.ok) caught_by = caught_by.empty() ? c.what : caught_by;
      if (o.verdict == Verdict::failed) {
        ++wrong_caught;
        std::cout << "    wrong answer    caught: " << a.what << " (" << a.function << "; first failed check: "
                  << (caught_by.empty() ? o.error : caught_by) << ")\n";
        if (verbose) print_outcome(std::cout, n, o, false, false);
      } else {
        problem("wrong answer " + a.function + " (" + a.what + ") is not caught: " +
                (o.verdict == Verdict::passed ? "it passes every check" : "it reads as not attempted"));
      }
    }
    if (solutions != 1) problem(std::to_string(solutions) + " solutions in exercises/solutions/" + e.lesson + ".cpp (one expected)");
    if (wrong == 0) problem("no wrong answer in exercises/solutions/" + e.lesson + ".cpp proves the checks can fail");
  }
  for (const Answer& a : answer_registry()) {
    bool known = false;
    for (const Exercise& e : exercise_registry()) known = known || (e.lesson == a.lesson && e.name == a.exercise);
    if (!known) problem("exercises/solutions/" + a.lesson + ".cpp answers '" + a.exercise + "', which is no exercise");
  }
  for (const Hint& h : hint_registry()) {
    bool known = false;
    for (const Exercise& e : exercise_registry()) known = known || (e.lesson == h.lesson && e.name == h.exercise);
    if (!known) problem("exercises/" + h.lesson + ".cpp has a HINT for '" + h.exercise + "', which is no exercise");
  }
  std::cout << "\n" << exercises << " exercises: " << wrong_caught << " wrong answers caught, " << problems
            << " problems\n";
  return problems ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) { return attnlab::run_program("grade_solutions", kUsage, argc, argv, run); }
