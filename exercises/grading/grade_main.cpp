// build/bin/grade: grades the exercises you wrote in exercises/NN_name.cpp with the engine's own
// checks, printing what is right and, where something is wrong, which entries and a hint.
//
//   grade            every lesson's exercises
//   grade 04 06      lessons 04 and 06 (or by name: 04_scaled_dot_product)
//
// Exit 0 when no attempted exercise fails (a stub is "not attempted", not a failure), else 1.
#include <sys/stat.h>
#include <unistd.h>

#include <ctime>
#include <iostream>
#include <set>

#include "exercises/grading/run.hpp"
#include "io/program.hpp"

using namespace attnlab::exercises;

namespace {

constexpr const char* kUsage =
    "usage: grade [LESSON ...] [--hint] [--help] [--version]\n"
    "  LESSON   04 or 04_scaled_dot_product (default: every lesson with exercises)\n"
    "  --hint   show the worked hint (the formula) of each exercise whose attempt failed\n"
    "  Grades your answers in exercises/NN_name.cpp. Exit 0 unless an attempted exercise fails.\n";

// When a file was last changed, in seconds since the epoch; 0 when it cannot be read.
std::time_t modified(const std::string& path) {
  struct stat st{};
  return ::stat(path.c_str(), &st) == 0 ? st.st_mtime : 0;
}

std::string local_time(std::time_t t) {
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S", std::localtime(&t));
  return buf;
}

// The answers graded are the ones compiled into this program. An exercise file changed after the
// program was built would be graded as it was before the change (a stub reads "not attempted"
// however much was written since), so grade refuses and says how to rebuild.
int refuse_stale(const std::vector<Numbered>& chosen) {
  const std::time_t built = modified("/proc/self/exe");
  std::set<std::string> stale;
  for (const Numbered& n : chosen) {
    const std::string file = std::string(ATTNLAB_SOURCE_DIR) + "/exercises/" + n.exercise->lesson + ".cpp";
    if (built && modified(file) > built) stale.insert("exercises/" + n.exercise->lesson + ".cpp");
  }
  if (stale.empty()) return 0;
  for (const std::string& f : stale)
    std::cerr << "grade: " << f << " was changed after this grade was built (" << local_time(built)
              << "): it would grade the old answers.\n";
  std::cerr << "grade: rebuild and grade in one command: scripts/grade.sh [LESSON ...]\n";
  return 2;
}

// After a failed attempt, the exercise's worked hint, or how to ask for it; a stub's hint stays shut.
void print_hint(std::ostream& os, const Numbered& n, Verdict verdict, bool show) {
  const std::string hint = hint_of(*n.exercise);
  if (hint.empty() || verdict == Verdict::passed) return;
  const std::string lesson = n.exercise->lesson.substr(0, 2);
  if (verdict == Verdict::not_attempted) {
    if (show) os << "    (its hint opens after a failed attempt: write your answer first)\n";
  } else if (show) {
    os << "    worked hint: " << hint << "\n";
  } else {
    os << "    stuck? scripts/grade.sh " << lesson << " --hint shows the worked hint\n";
  }
}

int run(const std::vector<std::string>& args) {
  std::vector<std::string> lessons;
  bool show_hints = false;
  for (const std::string& a : args) {
    if (a == "--hint") show_hints = true;
    else if (a.rfind("-", 0) == 0) throw attnlab::UsageError("unknown argument '" + a + "'");
    else lessons.push_back(a);
  }
  const std::vector<Numbered> chosen = select_exercises(lessons);
  if (const int code = refuse_stale(chosen)) return code;
  std::cout << "Grading the answers compiled into this grade, built " << local_time(modified("/proc/self/exe")) << ".\n";
  const bool color = isatty(STDOUT_FILENO);
  int passed = 0, failed = 0, open = 0;
  std::string lesson;
  for (const Numbered& n : chosen) {
    if (n.exercise->lesson != lesson) {
      lesson = n.exercise->lesson;
      std::cout << "\n== " << lesson << " (exercises/" << lesson << ".cpp)\n\n";
    }
    const Outcome o = run_exercise(*n.exercise, n.exercise->stub);
    print_outcome(std::cout, n, o, color, true);
    print_hint(std::cout, n, o.verdict, show_hints);
    (o.verdict == Verdict::passed ? passed : o.verdict == Verdict::failed ? failed : open)++;
  }
  std::cout << "\n" << passed << " passed, " << failed << " failed, " << open << " not attempted\n";
  return failed ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) { return attnlab::run_program("grade", kUsage, argc, argv, run); }
