// The notebook-as-a-program harness. A lesson's main is a table of contents:
//
//   int main(int argc, char** argv) {
//     return run_lesson({"01_attention_pooling", "Attention pooling", "..."}, argc, argv, [] {
//       section("1. Data");
//       say("We draw ", n, " points from y = 2 sin x + x^0.8 + noise ...");
//       table({"kernel", "validation MSE"}, rows);
//       metric("val_mse_gaussian", 0.21);
//     });
//   }
//
// Everything said is printed as it runs and kept for out/<id>/report.md; metrics, the
// configuration and the figure list go to out/<id>/metrics.json. Timings are kept apart
// ("timings"), so two runs with one seed give identical files apart from them. The same story is
// also kept as data, out/<id>/story.json: one block per call (section, text, verbatim, table,
// matrix, figure, claim) in order, what the course book (course/) renders as a web page. The free
// functions (section, say, table, ...) speak for the one lesson this program runs.
//
// A sentence that reports a result is a claim (claim(), below): it names the numbers it rests on
// and the condition under which it holds, and the lesson says what was measured either way.
// Fixed text may explain and define; it may not report. Prose may hold TeX between $...$ (inline)
// or $$...$$ (display): the book typesets it, the console shows it plain (lessons/story/math.hpp).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <xtensor/xarray.hpp>
#include <xtensor/xoperation.hpp>

#include "io/folder.hpp"
#include "lessons/story/claim.hpp"
#include "lessons/story/cli.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::lessons {

using Json = nlohmann::ordered_json;  // keys stay in the order they were set: the files diff cleanly

// A figure's PNG as the book will show it: its size and its smallest text, in the PNG's pixels
// (what lesson_check reads at the book's width, lessons/story/book_layout.hpp). Zero: not known.
struct FigurePng {
  int width_px = 0, height_px = 0;
  double smallest_text_px = 0;
};

class Lesson {
 public:
  Lesson(LessonInfo info, LessonArgs args);  // the current lesson until it is destroyed
  ~Lesson();
  Lesson(const Lesson&) = delete;
  Lesson& operator=(const Lesson&) = delete;

  const LessonInfo& info() const { return info_; }
  const LessonArgs& args() const { return args_; }
  // Where a file of the output goes while the lesson runs (a staging folder beside --out, made
  // final by finish(): a failed run leaves the previous output as it was), and where it will be.
  std::string path(const std::string& file) const;
  std::string final_path(const std::string& file) const;

  void section(const std::string& title);
  void say(const std::string& paragraph);
  void verbatim(const std::string& text);
  void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);
  void matrix(const std::string& name, const xt::xarray<double>& m, const std::vector<std::string>& row_labels,
              const std::vector<std::string>& col_labels, int decimals);
  // <stem>.png and .svg (and .pdf with --pdf), saved by the caller into path(...).
  void figure(const std::string& stem, const std::string& caption, const FigurePng& png = {});
  // An interactive page the caller wrote into path(file) (an HTML file that needs no network, such
  // as the attention explorer): linked from report.md, embedded by the course book.
  void page(const std::string& file, const std::string& caption);
  // The formats every figure is saved in: png, svg, and pdf with --pdf.
  std::vector<std::string> figure_formats() const;

  void config(const std::string& key, Json value);
  void metric(const std::string& name, double value);
  void timing(const std::string& name, double value);
  // Evaluates the claim against its numbers and the metrics recorded so far, says the sentence
  // that matches the outcome and records both (lessons/story/claim.hpp). Returns whether it held.
  bool claim(const Claim& c);

  // Writes report.md, story.json and metrics.json, puts the whole folder in --out's place
  // (io/folder.hpp) and prints the metrics and total time. A LessonInfo::headline that names no
  // recorded metric is an error (std::logic_error): the summary would quote nothing.
  void finish();

 private:
  void emit(const std::string& markdown, const std::string& console);
  void emit_verbatim(const std::string& text);
  LessonInfo info_;
  LessonArgs args_;
  std::string report_;
  Json config_ = Json::object(), metrics_ = Json::object(), timings_ = Json::object();
  Json claims_ = Json::object();  // id -> {held, expect}: what metrics.json and the seed runs tally
  Json figures_ = Json::array();
  Json story_ = Json::array();  // the blocks of story.json, in order
  std::chrono::steady_clock::time_point start_;
  std::optional<StagedFolder> out_;  // made in the constructor, published by finish()
};

// Parses the command line, runs body as the current lesson and writes its report and metrics, with
// the conventions of every program (io/program.hpp): --help and --version answer and return 0, a
// bad argument prints the usage and returns 2, and anything body throws is printed as one line,
// "<id>: error: <what>", and returns 1 (the output folder is left as it was before the run).
int run_lesson(const LessonInfo& info, int argc, char** argv, const std::function<void()>& body);

// The current lesson; std::logic_error when none runs.
Lesson& lesson();

// ------------------------------------------------------------------ the story, as free functions

bool quick();                            // --quick
std::uint64_t seed();                    // --seed
// --epochs if given, else the lesson's own default for this mode.
int epochs(int full_default, int quick_default);
// With --from DIR: DIR/file, the checkpoint an earlier run of this lesson wrote there (IoError
// naming the flag and the file when it is not readable); without: "", start from scratch.
std::string checkpoint_from(const std::string& file);
// One value for a full run, another for --quick.
template <class V>
V full_or_quick(V full, V quick_value) {
  return quick() ? quick_value : full;
}

inline void section(const std::string& title) { lesson().section(title); }
template <class... Parts>
void say(const Parts&... parts) {
  lesson().say(text(parts...));
}
// A code-like block (a printed matrix, a sample decoding), shown verbatim.
inline void verbatim(const std::string& block) { lesson().verbatim(block); }
inline void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  lesson().table(header, rows);
}
// A matrix with row and column labels (either may be empty), each value with `decimals` decimals.
template <class E>
void matrix(const std::string& name, const E& m, const std::vector<std::string>& row_labels = {},
            const std::vector<std::string>& col_labels = {}, int decimals = 4) {
  lesson().matrix(name, xt::xarray<double>(xt::cast<double>(m)), row_labels, col_labels, decimals);
}
inline void config(const std::string& key, Json value) { lesson().config(key, std::move(value)); }
// Several settings of one thing at once, in order: config({{"d_model", 64}, {"heads", 4}, {"layers", 2}}).
inline void config(std::initializer_list<std::pair<std::string, Json>> settings) {
  for (const auto& [key, value] : settings) lesson().config(key, value);
}
// A final metric: computed on held-out data, or a property that is not a score.
inline void metric(const std::string& name, double value) { lesson().metric(name, value); }
// A time (kept apart from the metrics: it differs from run to run).
inline void timing(const std::string& name, double value) { lesson().timing(name, value); }
// A sentence that reports a result, said as measured (lessons/story/claim.hpp). Returns whether it held.
inline bool claim(const Claim& c) { return lesson().claim(c); }

}  // namespace attnlab::lessons
