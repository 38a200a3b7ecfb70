// Every program keeps the same conventions (io/program.hpp): --help and --version answer and exit
// 0, a bad argument is one line and the usage with exit 2, a failure is one line naming what
// failed with exit 1. Checked here on the built programs themselves, each lesson included.
#include <doctest/doctest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/version.hpp"
#include "io/files.hpp"
#include "tests/helpers.hpp"

using attnlab::testing::contains;
using attnlab::testing::list_dir;
using attnlab::testing::slurp;
using attnlab::testing::TempDir;

namespace {

struct Run {
  int code;
  std::string out, err;
};

// Runs build/bin/<program> with `args` (shell words), stdout and stderr captured.
Run run(const std::string& program, const std::string& args, const TempDir& d) {
  const std::string cmd = "'" + std::string(ATTNLAB_BIN_DIR) + "/" + program + "' " + args + " > '" +
                          (d / "out") + "' 2> '" + (d / "err") + "' < /dev/null";
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), slurp(d / "out"), slurp(d / "err")};
}

bool built(const std::string& program) {
  const std::vector<std::string> bin = list_dir(ATTNLAB_BIN_DIR);
  return std::find(bin.begin(), bin.end(), program) != bin.end();
}

// The programs this build has: the tools always, the benchmarks and lessons when configured.
std::vector<std::string> programs() {
  std::vector<std::string> out{"gradcheck", "plots_gallery", "lesson_check"};
  for (const char* p : {"bench_core", "bench_race", "grade", "grade_solutions", "course", "course_book", "metric_spread",
                        "kill_save_writer", "inspect"})
    if (built(p)) out.push_back(p);
  for (const std::string& file : list_dir(std::string(ATTNLAB_SOURCE_DIR) + "/lessons")) {
    const std::string name = file.substr(0, file.find('.'));
    if (file.size() > 4 && file.compare(file.size() - 4, 4, ".cpp") == 0 && std::isdigit(static_cast<unsigned char>(file[0])) &&
        built(name))
      out.push_back(name);
  }
  return out;
}

std::size_t lines(const std::string& s) { return std::count(s.begin(), s.end(), '\n'); }

}  // namespace

TEST_CASE("every program answers --help and --version with exit 0") {
  TempDir d;
  for (const std::string& p : programs()) {
    CAPTURE(p);
    Run r = run(p, "--help", d);
    CHECK(r.code == 0);
    CHECK(r.out.rfind("usage: " + p, 0) == 0);
    CHECK(contains(r.out, "--version"));
    r = run(p, "--version", d);
    CHECK(r.code == 0);
    CHECK(r.out == p + " " + attnlab::kVersion + "\n");
  }
}

TEST_CASE("every program refuses a bad argument in one line, the usage after it, exit 2") {
  TempDir d;
  for (const std::string& p : programs()) {
    CAPTURE(p);
    const Run r = run(p, p == "lesson_check" ? "some_dir --bogus" : p == "kill_save_writer" ? "x 1 --bogus" : "--bogus", d);
    CHECK(r.code == 2);
    CHECK(r.err.rfind(p + ": ", 0) == 0);
    CHECK(contains(r.err, "--bogus"));
    CHECK(contains(r.err, "\nusage: " + p));
    CHECK(r.out.empty());
  }
}

TEST_CASE("a failing program says what failed in one line and exits 1") {
  TempDir d;
  attnlab::write_file_atomic(d / "a_file", "x");
  for (const std::string& p : programs()) {
    if (p == "gradcheck" || p == "bench_core" || p == "bench_race" || p == "grade" || p == "grade_solutions" ||
        p == "metric_spread" || p == "kill_save_writer")
      continue;  // no --out to give (kill_save_writer's path: below)
    CAPTURE(p);
    const std::string target = p == "lesson_check" ? d / "missing" : d / "a_file";
    const std::string before = p == "inspect" ? "dates '1 May 2001' " : "";  // inspect's model and input
    const Run r = run(p, before + (p == "lesson_check" ? "" : "--out ") + ("'" + target + "'"), d);
    CHECK(r.code == 1);
    CHECK(contains(r.err, target));  // names the path at fault
    if (p != "lesson_check") {
      CHECK(contains(r.err, p + ": error: "));
      CHECK(lines(r.err) <= 2);  // a blank line after the story, then the one line
    }
  }
  // Numbers out of range are usage errors, not crashes.
  for (const char* args : {"--seed -1", "--threads 0", "--epochs 2x"})
    for (const std::string& p : programs())
      if (std::isdigit(static_cast<unsigned char>(p[0]))) {
        CAPTURE(p);
        CAPTURE(args);
        CHECK(run(p, args, d).code == 2);
      }
}

TEST_CASE("an --out that cannot be a folder: the path given, and the part at fault, in one line, exit 1") {
  TempDir d;
  attnlab::write_file_atomic(d / "afile", "x");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/dev/null/x", "'/dev/null' is not a folder"},
      {d / "afile/sub", "'" + (d / "afile") + "' is not a folder"},
      {"/proc/x/y", "cannot create '/proc/x'"}};
  for (const std::string& p : programs()) {
    if (p != "course" && p != "course_book" && p != "plots_gallery" && p != "inspect" &&
        !std::isdigit(static_cast<unsigned char>(p[0])))
      continue;
    for (const auto& [path, why] : cases) {
      CAPTURE(p);
      CAPTURE(path);
      const std::string before = p == "inspect" ? "dates '1 May 2001' " : "";
      const Run r = run(p, before + "--out '" + path + "'" + (std::isdigit(static_cast<unsigned char>(p[0])) ? " --quick" : ""), d);
      CHECK(r.code == 1);
      CHECK(contains(r.err, p + ": error: "));
      CHECK(contains(r.err, path));
      CHECK(contains(r.err, why));
      CHECK(lines(r.err) <= 2);
    }
  }
  // The test helper too: a path it cannot write ends in one line and exit 1, not an abort.
  const Run w = run("kill_save_writer", "/dev/null/x 1", d);
  CHECK(w.code == 1);
  CHECK(contains(w.err, "kill_save_writer: error: "));
  CHECK(contains(w.err, "/dev/null/x"));
}

TEST_CASE("--from: refused by a lesson that keeps no checkpoints, and a folder without ours named at once") {
  TempDir d;
  attnlab::make_dirs(d / "empty");
  for (const std::string& p : programs()) {
    if (!std::isdigit(static_cast<unsigned char>(p[0]))) continue;
    CAPTURE(p);
    const Run r = run(p, "--quick --out '" + (d / "o") + "' --from '" + (d / "empty") + "'", d);
    CHECK((r.code == 1 || r.code == 2));
    CHECK(contains(r.err, "--from"));
    if (r.code == 2) CHECK(contains(r.err, "keeps no checkpoints"));
    else CHECK(contains(r.err, "none of " + p + "'s checkpoints"));
  }
}

TEST_CASE("lesson_check and course_book name the file or folder at fault") {
  TempDir d;
  attnlab::make_dirs(d / "junk");
  attnlab::write_file_atomic(d / "junk/metrics.json", "{ not json");
  attnlab::write_file_atomic(d / "junk/story.json", "{ not json");
  attnlab::write_file_atomic(d / "junk/report.md", "x");
  const Run same = run("lesson_check", "'" + (d / "junk") + "'", d);
  CHECK(same.code == 1);
  CHECK(contains(same.err, "'" + (d / "junk/metrics.json") + "' is not JSON"));
  if (built("course_book")) {
    attnlab::make_dirs(d / "nothing");
    const Run r = run("course_book", "--out '" + (d / "nothing") + "'", d);
    CHECK(r.code == 1);
    CHECK(contains(r.err, "course_book: error: '" + (d / "nothing") + "' holds no lesson output"));
  }
}

// The sanitizer build has neither the course nor the exercises; the Release build runs this.
TEST_CASE("grade refuses to grade answers older than the exercise file, and says how to rebuild" *
          doctest::skip(!attnlab::testing::kHaveCourse)) {  TempDir d;
  // A copy of grade dated before any exercise file was written: every file is newer than it.
  const std::string old_grade = d / "grade";
  REQUIRE(std::system(("cp '" + std::string(ATTNLAB_BIN_DIR) + "/grade' '" + old_grade + "' && touch -d '2000-01-01' '" +
                       old_grade + "'").c_str()) == 0);
  const int status = std::system(("'" + old_grade + "' 04 > '" + (d / "out") + "' 2> '" + (d / "err") + "'").c_str());
  CHECK(WEXITSTATUS(status) == 2);
  CHECK(contains(slurp(d / "err"), "exercises/04_scaled_dot_product.cpp was changed after this grade was built"));
  CHECK(contains(slurp(d / "err"), "scripts/grade.sh"));
  // The grade as built grades, and says which build it grades.
  const Run fresh = run("grade", "04", d);
  CHECK(fresh.code == 0);
  CHECK(contains(fresh.out, "Grading the answers compiled into this grade, built "));
}
