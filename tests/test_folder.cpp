// StagedFolder (io/folder.hpp): a lesson's output folder is complete or absent, and a failed run
// never touches the previous complete one. run_lesson is checked on it too.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "io/files.hpp"
#include "io/folder.hpp"
#include "lessons/story/lesson.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using attnlab::testing::contains;
using attnlab::testing::list_dir;
using attnlab::testing::slurp;
using attnlab::testing::TempDir;

namespace {
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const IoError& e) {
    return e.what();
  }
  return "no error";
}

std::vector<std::string> sorted(std::vector<std::string> v) {
  std::sort(v.begin(), v.end());
  return v;
}

// A complete earlier output: its marker and one file of its own.
void earlier_output(const std::string& dir) {
  make_dirs(dir);
  write_file_atomic(dir + "/metrics.json", "{}\n");
  write_file_atomic(dir + "/old.txt", "old\n");
}
}  // namespace

TEST_CASE("a staged folder appears whole on publish, and only then") {
  TempDir d;
  const std::string out = d / "runs/lesson";  // the parent is made too
  {
    StagedFolder f(out, "metrics.json");
    write_file_atomic(f.staging() + "/a.txt", "a\n");
    CHECK(list_dir(d / "runs").size() == 1);  // only the hidden staging folder
    CHECK(list_dir(d / "runs")[0].rfind(".lesson.partial-", 0) == 0);
    CHECK_FALSE(::access(out.c_str(), F_OK) == 0);
    f.publish();
  }
  CHECK(slurp(out + "/a.txt") == "a\n");
  CHECK(list_dir(d / "runs") == std::vector<std::string>{"lesson"});
}

TEST_CASE("an unpublished staged folder leaves the earlier output as it was") {
  TempDir d;
  const std::string out = d / "lesson";
  earlier_output(out);
  {
    StagedFolder f(out, "metrics.json");
    write_file_atomic(f.staging() + "/metrics.json", "{\"new\": 1}\n");
  }  // the run failed before publish()
  CHECK(sorted(list_dir(out)) == std::vector<std::string>{"metrics.json", "old.txt"});
  CHECK(slurp(out + "/metrics.json") == "{}\n");
  CHECK(list_dir(d.path) == std::vector<std::string>{"lesson"});
}

TEST_CASE("publish replaces the earlier output whole") {
  TempDir d;
  const std::string out = d / "lesson/";  // a trailing slash names the same folder
  earlier_output(out);
  StagedFolder f(out, "metrics.json");
  write_file_atomic(f.staging() + "/metrics.json", "{\"new\": 1}\n");
  f.publish();
  CHECK(list_dir(out) == std::vector<std::string>{"metrics.json"});  // old.txt went with the old folder
  CHECK(slurp(out + "/metrics.json") == "{\"new\": 1}\n");
  CHECK(list_dir(d.path) == std::vector<std::string>{"lesson"});
}

TEST_CASE("a staged folder refuses targets it must not replace") {
  TempDir d;
  write_file_atomic(d / "file", "x");
  CHECK(error_of([&] { StagedFolder(d / "file", "metrics.json", "--out"); }) ==
        "--out '" + (d / "file") + "': it is a file, not a folder");
  // The path the user gave, and the part of it at fault (issue 42's three cases).
  CHECK(error_of([&] { StagedFolder("/dev/null/x", "metrics.json", "--out"); }) ==
        "--out '/dev/null/x': '/dev/null' is not a folder");
  CHECK(error_of([&] { StagedFolder(d / "file/sub", "metrics.json", "--out"); }) ==
        "--out '" + (d / "file/sub") + "': '" + (d / "file") + "' is not a folder");
  CHECK(contains(error_of([&] { StagedFolder("/proc/x/y", "metrics.json", "--out"); }),
                 "--out '/proc/x/y': cannot create '/proc/x': "));
  make_dirs(d / "mine");
  write_file_atomic(d / "mine/notes.txt", "keep me");
  CHECK(contains(error_of([&] { StagedFolder(d / "mine", "metrics.json"); }), "holds files but no metrics.json"));
  CHECK(slurp(d / "mine/notes.txt") == "keep me");
  CHECK(contains(error_of([&] { StagedFolder("/", "metrics.json"); }), "it names no folder of its own"));
  CHECK(contains(error_of([&] { StagedFolder("/proc/attnlab/out", "metrics.json"); }), "/proc/attnlab"));
  make_dirs(d / "empty");
  StagedFolder ok(d / "empty", "metrics.json");  // an empty folder is free to take
}

TEST_CASE("staging folders of killed runs are removed by the next run; live ones are left") {
  TempDir d;
  // pid_max is at most 2^22 on Linux: no process has this id.
  make_dirs(d / ".lesson.partial-999999999-0");
  const std::string live = d / (".lesson.partial-" + std::to_string(::getpid()) + "-9999");
  make_dirs(live);
  make_dirs(d / ".other.partial-999999999-0");  // another target's: not ours to judge
  StagedFolder f(d / "lesson", "metrics.json");
  const std::vector<std::string> names = list_dir(d.path);
  CHECK(std::count(names.begin(), names.end(), ".lesson.partial-999999999-0") == 0);
  CHECK(std::count(names.begin(), names.end(), live.substr(live.rfind('/') + 1)) == 1);
  CHECK(std::count(names.begin(), names.end(), ".other.partial-999999999-0") == 1);
}

TEST_CASE("a lesson that fails leaves no folder and keeps the earlier complete one") {
  using namespace attnlab::lessons;
  const LessonInfo info{"99_test", "A test lesson", "Checks the harness."};
  TempDir d;
  const std::string out = d / "lesson";
  std::string argv_out = out;
  char* argv[] = {const_cast<char*>("99_test"), const_cast<char*>("--out"), argv_out.data(), nullptr};
  const auto fails = [] {
    say("Half a story.");
    throw std::runtime_error("the data ran out");
  };
  CHECK(run_lesson(info, 3, argv, fails) == 1);
  CHECK(list_dir(d.path).empty());  // no folder, no staging left

  CHECK(run_lesson(info, 3, argv, [] { metric("score", 0.5); }) == 0);
  const std::string complete = slurp(out + "/metrics.json");
  CHECK(contains(complete, "\"score\": 0.5"));
  CHECK(run_lesson(info, 3, argv, fails) == 1);
  CHECK(slurp(out + "/metrics.json") == complete);
  CHECK(list_dir(d.path) == std::vector<std::string>{"lesson"});
}
