// What every attnlab program does the same way, lessons, tools and benchmarks alike:
//
//   --help, -h      the usage on stdout; exit 0
//   --version       "<program> <version>" on stdout; exit 0
//   a bad argument  "<program>: <why>" and the usage on stderr; exit 2
//   a failure       anything thrown out of the program: "<program>: error: <what>" on stderr,
//                   one line that names what failed and why; exit 1
//
// so that a script (or a student) can tell a typo from a broken run, and nothing ends in abort().
#pragma once

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab {

// Thrown by a program's argument parsing: run_program prints it with the usage and exits 2.
struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Runs body with the arguments after the program name. --help and --version (anywhere among
// them) are answered before body runs. Returns body's exit code, or 2 or 1 as above.
int run_program(const std::string& name, const std::string& usage, int argc, const char* const* argv,
                const std::function<int(const std::vector<std::string>& args)>& body);

// "--threads" "2" -> 2, checked: UsageError "--threads needs an integer from 1 to 256, got '2x'".
long long integer_argument(const std::string& flag, const std::string& text, long long lo, long long hi);

// The machine a measurement was taken on: the CPU's name, family and model from /proc/cpuinfo
// ("an unknown CPU" where it has none) and its CPU count: "AMD EPYC (family 26, model 2), 2 CPUs".
std::string machine_name();

// Today's date in UTC, "2026-11-27": the day a measurement was recorded.
std::string today_utc();

}  // namespace attnlab
