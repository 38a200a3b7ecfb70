// The command line every lesson shares:
//   --quick  --long  --epochs N  --seed N  --out DIR  --threads N  --pdf  --help  --version
// run_lesson answers --help and --version and turns a bad argument into the usage and exit 2
// (io/program.hpp, the conventions of every attnlab program).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/runtime/parallel.hpp"
#include "io/program.hpp"

namespace attnlab::lessons {

struct LessonInfo {
  std::string id;       // "01_attention_pooling"
  std::string title;    // "Attention pooling: Nadaraya-Watson kernel regression"
  std::string summary;  // one line for --help
  // The metric that sums the lesson up in one number (the course's summary table and book quote
  // it, scripts/seeds.sh leads with it): a name the lesson records with metric(). Optional.
  std::string headline = "";
  // The stem of the figure that shows the lesson's result: the course book's thumbnail and the
  // figure a teacher reaches for first. A stem the lesson never saves is an error at the end of
  // the run. Empty: the first figure.
  std::string lead_figure = "";
  // The checkpoints (.npz in the output folder) the lesson writes and --from can start from. A
  // lesson with none refuses --from: a flag it cannot honour is an error, not ignored.
  std::vector<std::string> checkpoints = {};
};

struct LessonArgs {
  bool quick = false;
  bool long_run = false;      // --long: the lesson's longer run, where it has one (ignored elsewhere)
  int epochs = 0;             // 0: the lesson's own default (smaller in --quick)
  std::uint64_t seed = 0;
  std::string out;            // default out/<id>
  std::string from;           // --from DIR: an earlier run's output folder, whose checkpoints the lesson starts from
  int threads = machine_threads();  // attnlab's thread pool, GEMM included (core/runtime/parallel.hpp)
  bool pdf = false;           // every figure also as PDF (for slides), beside its PNG and SVG
};

std::string usage(const LessonInfo& info);
// The arguments after the program name; UsageError on an unknown flag or a bad value.
LessonArgs parse_args(const std::vector<std::string>& args, const LessonInfo& info);

}  // namespace attnlab::lessons
