// build/bin/grade: grades the exercises you wrote in exercises/NN_name.cpp with the engine's own
// checks, printing what is right and, where something is wrong, which entries and a hint.
//
//   grade            every lesson's exercises
//   grade 04 06      lessons 04 and 06 (or by name: 04_scaled_dot_product)
//
// Exit 0 when no attempted exercise fails (a stub is "not attempted", not a failure), else 1.
#include <unistd.h>

#include <iostream>

#include "exercises/grading/run.hpp"
#include "io/program.hpp"

using namespace attnlab::exercises;

namespace {

constexpr const char* kUsage =
    "usage: grade [LESSON ...] [--help] [--version]\n"
    "  LESSON   04 or 04_scaled_dot_product (default: every lesson with exercises)\n"
    "  Grades your answers in exercises/NN_name.cpp. Exit 0 unless an attempted exercise fails.\n";

int run(const std::vector<std::string>& args) {
  for (const std::string& a : args)
    if (a.rfind("-", 0) == 0) throw attnlab::UsageError("unknown argument '" + a + "'");
  const bool color = isatty(STDOUT_FILENO);
  int passed = 0, failed = 0, open = 0;
  std::string lesson;
  for (const Numbered& n : select_exercises(args)) {
    if (n.exercise->lesson != lesson) {
      lesson = n.exercise->lesson;
      std::cout << "\n== " << lesson << " (exercises/" << lesson << ".cpp)\n\n";
    }
    const Outcome o = run_exercise(*n.exercise, n.exercise->stub);
    print_outcome(std::cout, n, o, color, true);
    (o.verdict == Verdict::passed ? passed : o.verdict == Verdict::failed ? failed : open)++;
  }
  std::cout << "\n" << passed << " passed, " << failed << " failed, " << open << " not attempted\n";
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) { return attnlab::run_program("grade", kUsage, argc, argv, run); }
