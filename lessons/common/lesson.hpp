// The notebook-as-a-program harness. A lesson creates one Lesson, then tells its story:
//
//   Lesson L({"01_attention_pooling", "Attention pooling", "..."}, argc, argv);
//   L.section("1. Data");
//   L.say("We draw 50 points from y = 2 sin x + x^0.8 + noise ...");
//   L.table({"kernel", "validation MSE"}, rows);
//   L.figure("fits", "Fitted curves against the truth");   // after saving fits.png / fits.svg
//   L.metric("val_mse_gaussian", 0.21);
//   return L.finish();
//
// Everything said is printed as it runs and kept for out/<id>/report.md; metrics, the
// configuration and the figure list go to out/<id>/metrics.json. Timings are kept apart
// ("timings"), so two runs with one seed give identical files apart from them.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "lessons/common/cli.hpp"
#include "lessons/common/json.hpp"

namespace attnlab::lessons {

// Fixed-point text of a number ("0.3311").
std::string fmt(double v, int digits = 4);

class Lesson {
 public:
  Lesson(LessonInfo info, int argc, char** argv);
  Lesson(LessonInfo info, LessonArgs args);  // for tests

  const LessonArgs& args() const { return args_; }
  bool quick() const { return args_.quick; }
  std::uint64_t seed() const { return args_.seed; }
  // --epochs if given, else the lesson's default for this mode.
  int epochs(int full_default, int quick_default) const;
  // A path inside the output folder.
  std::string path(const std::string& file) const;

  void section(const std::string& title);
  void say(const std::string& paragraph);
  // A code-like block (a printed matrix, a sample decoding), shown verbatim.
  void verbatim(const std::string& text);
  void table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows);
  // A matrix printed with row and column labels (may be empty).
  void matrix(const std::string& name, const std::vector<std::vector<double>>& m,
              const std::vector<std::string>& row_labels = {},
              const std::vector<std::string>& col_labels = {}, int digits = 4);
  // A figure already saved as <stem>.png and <stem>.svg in the output folder.
  void figure(const std::string& stem, const std::string& caption);

  void config(const std::string& key, Json value);
  // A final metric, computed on held-out data (or a property that is not a score).
  void metric(const std::string& name, double value);
  void timing(const std::string& name, double seconds_or_ms);

  // Writes report.md and metrics.json (each atomically), prints the total time; returns 0.
  int finish();

 private:
  void emit(const std::string& markdown, const std::string& console);
  LessonInfo info_;
  LessonArgs args_;
  std::string report_;
  Json config_ = Json::object();
  Json metrics_ = Json::object();
  Json timings_ = Json::object();
  Json figures_ = Json::array();
  std::chrono::steady_clock::time_point start_;
};

}  // namespace attnlab::lessons
