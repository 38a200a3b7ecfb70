#include "lessons/story/cli.hpp"

#include <cerrno>
#include <cstdlib>
#include <iostream>

namespace attnlab::lessons {

std::string usage(const LessonInfo& info) {
  return "usage: " + info.id + " [--quick] [--epochs N] [--seed N] [--out DIR] [--threads N] [--help]\n" +
         "  " + info.title + "\n  " + info.summary + "\n\n" +
         "  --quick       a small run (under 30 s) that still writes every figure and metric\n"
         "  --epochs N    training epochs (default: the lesson's own; fewer with --quick)\n"
         "  --seed N      random seed (default 0): same seed, same numbers\n"
         "  --out DIR     output folder (default out/" + info.id + ")\n"
         "  --threads N   threads for OpenBLAS and attnlab's kernels (default 1)\n"
         "  --help        this text\n";
}

namespace {
long long parse_integer(const std::string& flag, const std::string& text, long long lo, long long hi) {
  errno = 0;
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno == ERANGE || v < lo || v > hi)
    throw UsageError(flag + " needs an integer from " + std::to_string(lo) + " to " +
                     std::to_string(hi) + ", got '" + text + "'");
  return v;
}
}  // namespace

LessonArgs parse_args(int argc, const char* const* argv, const LessonInfo& info, bool& help) {
  LessonArgs a;
  a.out = "out/" + info.id;
  help = false;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--quick") a.quick = true;
    else if (flag == "--epochs") a.epochs = static_cast<int>(parse_integer(flag, value(), 1, 100000));
    else if (flag == "--seed") a.seed = static_cast<std::uint64_t>(parse_integer(flag, value(), 0, 1LL << 62));
    else if (flag == "--threads") a.threads = static_cast<int>(parse_integer(flag, value(), 1, 256));
    else if (flag == "--out") {
      a.out = value();
      if (a.out.empty()) throw UsageError("--out needs a folder name");
    } else if (flag == "--help" || flag == "-h") help = true;
    else throw UsageError("unknown argument '" + flag + "'");
  }
  return a;
}

LessonArgs parse_args_or_exit(int argc, char** argv, const LessonInfo& info) {
  bool help = false;
  try {
    LessonArgs a = parse_args(argc, argv, info, help);
    if (help) {
      std::cout << usage(info);
      std::exit(0);
    }
    return a;
  } catch (const UsageError& e) {
    std::cerr << info.id << ": " << e.what() << "\n" << usage(info);
    std::exit(2);
  }
}

}  // namespace attnlab::lessons
