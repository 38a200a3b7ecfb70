// The command line every lesson shares:
//   --quick  --epochs N  --seed N  --out DIR  --threads N  --help
// An unknown flag or a bad value prints the usage and exits 2.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace attnlab::lessons {

struct LessonInfo {
  std::string id;       // "01_attention_pooling"
  std::string title;    // "Attention pooling: Nadaraya-Watson kernel regression"
  std::string summary;  // one line for --help
};

struct LessonArgs {
  bool quick = false;
  int epochs = 0;             // 0: the lesson's own default (smaller in --quick)
  std::uint64_t seed = 0;
  std::string out;            // default out/<id>
  int threads = 1;            // OpenBLAS and attnlab kernel threads (core/runtime/parallel.hpp)
};

struct UsageError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

std::string usage(const LessonInfo& info);
// Throws UsageError on bad input; throws nothing and sets help = true for --help.
LessonArgs parse_args(int argc, const char* const* argv, const LessonInfo& info, bool& help);
// For main(): prints usage and exits 2 on bad input, 0 after --help.
LessonArgs parse_args_or_exit(int argc, char** argv, const LessonInfo& info);

}  // namespace attnlab::lessons
