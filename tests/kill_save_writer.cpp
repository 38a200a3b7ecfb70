// kill_save_writer PATH FIRST: saves checkpoints to PATH, versions FIRST (1 or 2) and then the other
// in turn, until it is killed.
// The writer of tests/test_kill_save.cpp, a program of its own so that the test can fork and exec
// it (a forked copy of a process with threads must not go on to allocate and save). It keeps the
// conventions of every attnlab program (io/program.hpp): a path it cannot write is one line,
// "kill_save_writer: error: ...", and exit 1, never an abort.
#include <string>

#include "core/tensor.hpp"
#include "io/program.hpp"
#include "nn/checkpoint.hpp"
#include "tests/kill_save_model.hpp"

namespace {

constexpr const char* kUsage =
    "usage: kill_save_writer PATH FIRST [--help] [--version]\n"
    "  Saves checkpoints to PATH, version FIRST (1 or 2) and then the other in turn, until killed\n"
    "  (the writer that tests/test_kill_save.cpp kills at random moments).\n";

int run(const std::vector<std::string>& args) {
  for (const std::string& a : args)
    if (a.rfind("--", 0) == 0) throw attnlab::UsageError("unknown argument '" + a + "'");
  if (args.size() != 2) throw attnlab::UsageError("needs PATH and FIRST, got " + std::to_string(args.size()) + " arguments");
  if (args[1] != "1" && args[1] != "2") throw attnlab::UsageError("FIRST must be 1 or 2, got '" + args[1] + "'");
  for (int version = args[1] == "1" ? 1 : 2;; version = 3 - version)
    attnlab::nn::save_checkpoint(args[0], attnlab::testing::kill_save_model(float(version)));
}

}  // namespace

int main(int argc, char** argv) { return attnlab::run_program("kill_save_writer", kUsage, argc, argv, run); }
