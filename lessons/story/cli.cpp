#include "lessons/story/cli.hpp"

namespace attnlab::lessons {

std::string usage(const LessonInfo& info) {
  return "usage: " + info.id + " [--quick] [--long] [--epochs N] [--seed N] [--out DIR] [--from DIR] [--threads N] [--pdf] [--help] [--version]\n" +
         "  " + info.title + "\n  " + info.summary + "\n\n" +
         "  --quick       a small run (under 30 s) that still writes every figure and metric\n"
         "  --long        a longer run than the default, where the lesson has one (its README row says how long)\n"
         "  --epochs N    training epochs (default: the lesson's own; fewer with --quick)\n"
         "  --seed N      random seed (default 0): same seed, same numbers\n"
         "  --out DIR     output folder (default out/" + info.id + "), replaced whole when the run ends\n"
         "  --from DIR    start from the checkpoints (.npz) an earlier run wrote to DIR, where the lesson has them\n"
         "  --threads N   threads for attnlab's kernels and matrix products (default: this machine's CPUs, " +
         std::to_string(machine_threads()) + " here, at most 8;\n"
         "                the numbers are the same at any count)\n"
         "  --pdf         every figure also as PDF (for slides), beside its PNG and SVG\n"
         "  --help        this text\n"
         "  --version     attnlab's version\n";
}

LessonArgs parse_args(const std::vector<std::string>& args, const LessonInfo& info) {
  LessonArgs a;
  a.out = "out/" + info.id;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw UsageError(flag + " needs a value");
      return args[++i];
    };
    if (flag == "--quick") a.quick = true;
    else if (flag == "--long") a.long_run = true;
    else if (flag == "--pdf") a.pdf = true;
    else if (flag == "--epochs") a.epochs = static_cast<int>(integer_argument(flag, value(), 1, 100000));
    else if (flag == "--seed") a.seed = static_cast<std::uint64_t>(integer_argument(flag, value(), 0, 1LL << 62));
    else if (flag == "--threads") a.threads = static_cast<int>(integer_argument(flag, value(), 1, 256));
    else if (flag == "--from") {
      a.from = value();
      if (a.from.empty()) throw UsageError("--from needs a folder name");
    } else if (flag == "--out") {
      a.out = value();
      if (a.out.empty()) throw UsageError("--out needs a folder name");
    } else throw UsageError("unknown argument '" + flag + "'");
  }
  if (!a.from.empty() && info.checkpoints.empty())
    throw UsageError("--from: " + info.id + " keeps no checkpoints to start from (it trains from scratch every run)");
  return a;
}

}  // namespace attnlab::lessons
