// io/files: the one atomic writer behind checkpoints, figures, reports and metrics.
#include <doctest/doctest.h>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "io/files.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::testing;

namespace {
// The pid of a process that has already ended.
pid_t dead_pid() {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);
  return child;
}
}  // namespace

TEST_CASE("files are written atomically, and a failed write leaves nothing behind") {
  TempDir d;
  write_file_atomic(d / "a.txt", "first");
  write_file_atomic(d / "a.txt", "second");
  CHECK(read_file(d / "a.txt") == "second");
  const std::string msg = error_of<IoError>([&] { write_file_atomic(d / "no/such/dir/b.txt", "x", "save"); });
  CHECK(starts_with(msg, "save: cannot write '" + (d / "no/such/dir/b.txt") + "': creating a temporary file"));
  make_dirs(d / "x/y/z");
  write_file_atomic(d / "x/y/z/c.txt", "deep");
  CHECK(read_file(d / "x/y/z/c.txt") == "deep");
  CHECK_THROWS_AS(make_dirs(d / "a.txt/sub"), IoError);
  CHECK(error_of<IoError>([&] { make_dirs(d / "a.txt/sub/deeper"); }) ==
        "cannot create the folder '" + (d / "a.txt/sub/deeper") + "': '" + (d / "a.txt") + "' is not a folder");
  CHECK(contains(error_of<IoError>([&] { read_file(d / "missing"); }), "cannot open"));
  std::vector<std::string> names = list_dir(d.path);
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"a.txt", "x"});
}

TEST_CASE("an AtomicFile dropped before commit leaves the old file and no temporary") {
  TempDir d;
  write_file_atomic(d / "f", "old");
  {
    AtomicFile f(d / "f");
    f.write("new, but never committed");
  }
  CHECK(read_file(d / "f") == "old");
  CHECK(list_dir(d.path) == std::vector<std::string>{"f"});
}

TEST_CASE("another program can write an AtomicFile through its descriptor; the file appears at commit") {
  TempDir d;
  AtomicFile log(d / "run.log", "course");
  const int fd = log.descriptor();
  REQUIRE(fd >= 0);
  CHECK((::fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);  // no program started meanwhile inherits it by accident
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // as course/process does: the program's output onto the temporary
    ::dup2(fd, 1);
    ::execl("/bin/sh", "sh", "-c", "echo written by a program", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  CHECK((WIFEXITED(status) && WEXITSTATUS(status) == 0));
  const std::vector<std::string> before = list_dir(d.path);
  REQUIRE(before.size() == 1);
  CHECK(starts_with(before[0], ".run.log.tmp-"));  // only the temporary until commit
  log.commit();
  CHECK(log.descriptor() == -1);
  CHECK(read_file(d / "run.log") == "written by a program\n");
  CHECK(list_dir(d.path) == std::vector<std::string>{"run.log"});
}

TEST_CASE("the next write removes the temporaries of writers that were killed, not of live ones") {
  TempDir d;
  const std::string orphan = ".f.tmp-" + std::to_string(dead_pid()) + "-abcdef";
  const std::string live = ".f.tmp-" + std::to_string(::getpid()) + "-ghijkl";
  const std::string other = ".g.tmp-" + std::to_string(dead_pid()) + "-mnopqr";  // another target's
  for (const std::string& n : {orphan, live, other}) write_file_atomic(d / n, "partial");
  write_file_atomic(d / "f", "complete");
  std::vector<std::string> names = list_dir(d.path);
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{live, other, "f"});
}
