#include "course/process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include "io/files.hpp"

namespace attnlab::course {

ProcessResult run_logged(const std::vector<std::string>& argv, const std::string& log, double timeout) {
  AtomicFile log_file(log, "course");  // the program writes the temporary; the log appears when it ends
  const int fd = log_file.descriptor();
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    throw IoError(std::string("course: cannot start a process: ") + std::strerror(errno));
  }
  if (pid == 0) {  // the child: its own process group, so that a timeout ends its children too
    ::setpgid(0, 0);
    const int null = ::open("/dev/null", O_RDONLY);
    ::dup2(null, 0);
    ::dup2(fd, 1);
    ::dup2(fd, 2);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    ::execv(args[0], args.data());
    std::fprintf(stderr, "course: cannot run '%s': %s\n", args[0], std::strerror(errno));
    ::_exit(127);
  }
  ::setpgid(pid, pid);  // as the child does: whichever runs first

  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
  int status = 0;
  bool timed_out = false, killed = false;
  double term_at = 0.0;
  struct rusage usage {};
  while (::wait4(pid, &status, WNOHANG, &usage) == 0) {
    if (!timed_out && elapsed() > timeout) {
      timed_out = true;
      term_at = elapsed();
      ::kill(-pid, SIGTERM);
    } else if (timed_out && !killed && elapsed() > term_at + 5.0) {
      killed = true;
      ::kill(-pid, SIGKILL);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ProcessResult r;
  r.seconds = elapsed();
  r.cpu_seconds = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  1e-6 * double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  log_file.commit();
  char buf[64];
  if (timed_out) {
    std::snprintf(buf, sizeof buf, "timed out after %.0f s", timeout);
    r.status = buf;
  } else if (WIFEXITED(status)) {
    r.ok = WEXITSTATUS(status) == 0;
    r.status = r.ok ? "ok" : "failed (exit " + std::to_string(WEXITSTATUS(status)) + ")";
  } else {
    r.status = "killed by signal " + std::to_string(WTERMSIG(status));
  }
  return r;
}

}  // namespace attnlab::course
