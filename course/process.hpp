// Running one program of the course: its output to a log file, a time limit, and how it ended.
#pragma once

#include <string>
#include <vector>

namespace attnlab::course {

struct ProcessResult {
  bool ok = false;         // exit status 0
  std::string status;      // "ok", "failed (exit 1)", "killed by signal 11", "timed out after 300 s"
  double seconds = 0.0;    // wall time
  double cpu_seconds = 0.0;  // user + system time of the program (on a shared machine, the
                             // wall time it would take alone, for a single-threaded program)
};

// Runs argv[0] with argv (no shell), stdin from /dev/null, stdout and stderr into `log` (an
// AtomicFile: the program writes its temporary, renamed to `log` when the program ends). After
// `timeout` seconds the program and its children (its own process group) get SIGTERM, and
// SIGKILL 5 s later. IoError when the log cannot be written; a program that cannot be started
// ends "failed (exit 127)".
ProcessResult run_logged(const std::vector<std::string>& argv, const std::string& log, double timeout);

}  // namespace attnlab::course
