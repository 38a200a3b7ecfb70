// kill_save_writer PATH FIRST: saves checkpoints to PATH, versions FIRST (1 or 2) and then the other
// in turn, until it is killed.
// The writer of tests/test_kill_save.cpp, a program of its own so that the test can fork and exec
// it (a forked copy of a process with threads must not go on to allocate and save).
#include <cstdio>
#include <string>

#include "core/tensor.hpp"
#include "nn/checkpoint.hpp"
#include "tests/kill_save_model.hpp"

int main(int argc, char** argv) {
  if (argc != 3 || (std::string(argv[2]) != "1" && std::string(argv[2]) != "2")) {
    std::fprintf(stderr, "usage: kill_save_writer PATH FIRST (1 or 2)\n");
    return 2;
  }
  for (int version = std::stoi(argv[2]);; version = 3 - version)
    attnlab::nn::save_checkpoint(argv[1], attnlab::testing::kill_save_model(float(version)));
}
