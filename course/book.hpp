// The course book: a static site rendered from the stories the lessons record (story.json, written
// by lessons/story beside report.md) and their metrics.json, never from the Markdown.
//
//   out/index.html                  every lesson: a thumbnail of its first figure, its headline
//                                   metric, this run's status and time; a link to the gradient checks
//   out/NN_name.html                one lesson: a table of contents, its sections, text, tables,
//                                   matrices and figures (inline, from out/NN_name/), its metrics
//   out/gradcheck.html              the gradient-check table (out/gradcheck/gradcheck.json, written
//                                   by `gradcheck --json`)
//
// Each page stands alone: no network, no fonts or scripts from elsewhere. Pages are written
// atomically (io/files.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "course/questions.hpp"

namespace attnlab::course {

// How one lesson's program ended in a course run.
struct LessonRun {
  std::string id;             // "04_scaled_dot_product"
  bool ok = false;
  std::string status;         // "ok", "failed (exit 1)", "timed out after 300 s", ...
  double seconds = 0.0;
  double cpu_seconds = 0.0;   // user + system
  std::string log;            // its console output, relative to the book's folder: "logs/04_scaled_dot_product.log"
};

// One lesson as the book shows it, for the summary a course run prints.
struct BookLesson {
  std::string id, title;
  std::string status;                 // the run's status, or "ok" for a folder found complete
  bool ok = false;
  std::string headline;               // the headline metric's name ("" when the lesson names none)
  std::optional<double> headline_value;
  double seconds = 0.0;               // the run's wall time, else the lesson's own total
  double cpu_seconds = 0.0;           // the run's CPU time (0 when not known)
  std::size_t figures = 0;
};

// Renders the book into `folder` (the lessons' outputs are its NN_name/ subfolders). `runs`: the
// lessons of the course run that just ended, whose status the book reports (a failed lesson's
// page shows the end of its log, not an older output); empty: every complete folder found.
// Returns the lessons in order. IoError when a page cannot be written; a story.json that does
// not parse is named in the error.
std::vector<BookLesson> write_book(const std::string& folder, const std::vector<LessonRun>& runs = {});
// The same, each lesson's page ending with its questions to think about from `sources` (the
// answers folded beneath each, when `sources.answers` has the lesson's file). The overload above
// reads default_sources().
std::vector<BookLesson> write_book(const std::string& folder, const std::vector<LessonRun>& runs,
                                   const BookSources& sources);

// A claim's outcome as the book and the slides show it: "held"; "either" (an either_way claim that
// went the other way); "fullrun" (a full_run claim a quick run was too small to show: neutral, not
// a failure); "unseen" (a claim that should have held and did not).
std::string claim_outcome(bool held, const std::string& expect, bool quick_run);

// "0.965", "4e-16": a metric as the summary and the book show it (4 significant digits).
std::string metric_text(double v);
// "12.3": seconds, one decimal.
std::string seconds_text(double v);

}  // namespace attnlab::course
