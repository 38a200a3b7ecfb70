#include "course/book.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "course/html.hpp"
#include "course/lesson_ids.hpp"
#include "course/markdown.hpp"
#include "io/files.hpp"
#include "lessons/story/math.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::course {

using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;

std::string metric_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string seconds_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string claim_outcome(bool held, const std::string& expect, bool quick_run) {
  if (held) return "held";
  if (expect == "either_way") return "either";
  if (expect == "full_run" && quick_run) return "fullrun";
  return "unseen";
}

namespace {

bool exists(const std::string& path) { return fs::exists(fs::path(path)); }

Json read_json(const std::string& path) {
  const std::string text = read_file(path, "course_book");
  try {
    return Json::parse(text);
  } catch (const std::exception& e) {
    throw std::runtime_error("course_book: '" + path + "' is not JSON: " + e.what());
  }
}

// The last `n` lines of a file ("" when there is none).
std::string tail(const std::string& path, std::size_t n) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (lines.size() > n) lines.erase(lines.begin());
  }
  std::string out;
  for (const std::string& l : lines) out += l + "\n";
  return out;
}

struct Entry {
  BookLesson lesson;
  Json story, metrics;  // null when the lesson has no complete output to show
  Json reference;       // the lesson's full run over seeds (story.json's "reference"), or null
  std::string log;      // the run's log, relative to the book's folder
  std::string summary, first_figure;
};

std::string link(const std::string& href, const std::string& text) {
  return "<a href=\"" + url(href) + "\">" + escape(text) + "</a>";
}

// A matrix as printed, each cell tinted by its magnitude relative to the largest in the matrix.
std::string matrix_html(const Json& b) {
  const Json& values = b.at("values");
  const std::vector<std::string> rows = b.value("row_labels", std::vector<std::string>{}),
                                 cols = b.value("col_labels", std::vector<std::string>{});
  double top = 0.0;
  for (const Json& r : values)
    for (const Json& v : r) top = std::max(top, std::fabs(std::atof(v.get<std::string>().c_str())));
  std::string h = "<div class=\"scroll\"><div class=\"matrix-name\">" + escape(b.value("name", "")) +
                  "</div><table class=\"matrix\">\n";
  if (!cols.empty()) {
    h += "<thead><tr>" + std::string(rows.empty() ? "" : "<th></th>");
    for (const std::string& c : cols) h += "<th class=\"num\">" + escape(c) + "</th>";
    h += "</tr></thead>\n";
  }
  h += "<tbody>\n";
  for (std::size_t i = 0; i < values.size(); ++i) {
    h += "<tr>";
    if (!rows.empty()) h += "<th>" + escape(i < rows.size() ? rows[i] : "") + "</th>";
    for (const Json& v : values[i]) {
      const std::string s = v.get<std::string>();
      const double share = top > 0 ? std::fabs(std::atof(s.c_str())) / top : 0.0;
      char tint[64];
      std::snprintf(tint, sizeof tint, " style=\"background: rgba(26, 86, 176, %.2f)\"", 0.28 * share);
      h += "<td class=\"num\"" + std::string(tint) + ">" + escape(s) + "</td>";
    }
    h += "</tr>\n";
  }
  return h + "</tbody></table></div>\n";
}

std::string figure_html(const std::string& id, const Json& b) {
  // The PNG inline (an SVG when there is none), every other format a link.
  std::string shown, others;
  for (const Json& f : b.at("files")) {
    const std::string file = f.get<std::string>();
    const std::string ext = file.substr(file.find_last_of('.') + 1);
    if (ext == "png") shown = file;
    else others += " · " + link(id + "/" + file, ext == "svg" ? "SVG" : ext == "pdf" ? "PDF" : ext);
  }
  if (shown.empty() && !b.at("files").empty()) shown = b.at("files").at(0).get<std::string>();
  // The caption's formulas typeset like the prose's; the alt text has their plain form.
  const std::string caption = b.value("caption", "");
  std::string alt = caption;
  try {
    alt = lessons::plain_math(caption);
  } catch (const std::invalid_argument&) {  // an unclosed $: the caption as written
  }
  return "<figure><a href=\"" + url(id + "/" + shown) + "\"><img src=\"" + url(id + "/" + shown) + "\" alt=\"" +
         escape(alt) + "\"></a><figcaption>" + prose_html(caption) + others + "</figcaption></figure>\n";
}

// "0.997 ± 0.006" from a reference's metric entry, "" when there is none.
std::string reference_value(const Json& reference, const std::string& metric) {
  if (!reference.is_object() || !reference.contains("metrics") || !reference["metrics"].contains(metric)) return "";
  const Json& m = reference["metrics"][metric];
  return lessons::plus_minus(m.value("mean", 0.0), m.value("sd", 0.0));
}

// "full run, mean ± sd over seeds 1, 2, 3 (AMD EPYC ..., 2026-11-26)"
std::string reference_source(const Json& reference) {
  std::string seeds;
  for (const Json& s : reference.value("seeds", Json::array())) seeds += (seeds.empty() ? "" : ", ") + s.dump();
  return "full run, mean ± sd over seeds " + seeds + " (" + reference.value("machine", std::string("machine not named")) +
         ", " + reference.value("date", std::string("")) + ")";
}

// A claim as the reader meets it: the sentence said, marked by its outcome, and (folded) the
// condition, the numbers it rests on and how often it held in the reference runs.
// A claim's outcome as the book shows it: held; went the other way (either_way); left to the full
// run (a full_run claim a quick run was too small to show: neutral, not a failure); or not seen.
std::string claim_kind(const Json& b, bool quick_run) {
  return claim_outcome(b.value("held", false), b.value("expect", "every_run"), quick_run);
}

std::string claim_html(const Json& b, const Json& reference, bool quick_run) {
  const std::string id = b.value("id", ""), kind = claim_kind(b, quick_run);
  const std::string verdict = kind == "held"      ? "✓ measured in this run"
                              : kind == "either"  ? "↔ went the other way in this run"
                              : kind == "fullrun" ? "◦ shown by the full run (this quick run is too small to show it)"
                                                  : "✗ not seen in this run";
  std::string numbers;
  const Json measured = b.value("numbers", Json::object());  // a copy: items() must not outlive it
  for (const auto& [k, v] : measured.items())
    numbers += (numbers.empty() ? "" : ", ") + k + " = " + metric_text(v.get<double>());
  std::string ref;
  if (reference.is_object() && reference.contains("claims") && reference["claims"].contains(id)) {
    const Json& c = reference["claims"][id];
    ref = "; in the reference full runs it held on " + c["held"].dump() + " of " + c["of"].dump() + " seeds";
  }
  return "<div class=\"claim " + kind + "\" data-claim=\"" + escape(id) + "\"><p>" + prose_html(b.value("text", "")) +
         "</p><details><summary><span class=\"verdict\">" + verdict + "</span></summary>Claim <code>" + escape(id) +
         "</code> holds when <code>" + escape(b.value("when", "")) + "</code>; measured " + escape(numbers) + escape(ref) +
         ".</details></div>\n";
}

// `questions`: the questions section that ends the page ("" for none), listed in the contents.
std::string story_html(const Entry& e, const std::string& questions = "") {
  const std::string& id = e.lesson.id;
  std::string toc, body;
  int n = 0;
  for (const Json& b : e.story.at("blocks")) {
    const std::string kind = b.at("kind").get<std::string>();
    if (kind == "section") {
      const std::string anchor = "s" + std::to_string(++n), title = b.at("title").get<std::string>();
      toc += "<li><a href=\"#" + anchor + "\">" + prose_html(title) + "</a></li>";
      body += "<h2 id=\"" + anchor + "\">" + prose_html(title) + "</h2>\n";
    } else if (kind == "text") {
      body += "<p>" + prose_html(b.at("text").get<std::string>()) + "</p>\n";
    } else if (kind == "claim") {
      body += claim_html(b, e.reference, e.story.value("quick", false));
    } else if (kind == "verbatim") {
      body += "<pre>" + escape(b.at("text").get<std::string>()) + "</pre>\n";
    } else if (kind == "table") {
      body += table(b.at("header").get<std::vector<std::string>>(),
                    b.at("rows").get<std::vector<std::vector<std::string>>>());
    } else if (kind == "matrix") {
      body += matrix_html(b);
    } else if (kind == "figure") {
      body += figure_html(id, b);
    } else if (kind == "page") {  // an interactive page of the lesson's (the attention explorer), embedded
      const std::string file = id + "/" + b.at("file").get<std::string>(), caption = b.value("caption", "");
      body += "<figure class=\"page\"><iframe src=\"" + url(file) + "\" title=\"" + escape(lessons::plain_math(caption)) +
              "\" loading=\"lazy\"></iframe><figcaption>" + prose_html(caption) + " · " + link(file, "open full page") +
              "</figcaption></figure>\n";
    } else {
      throw std::runtime_error("course_book: " + id + "/story.json: unknown block kind '" + kind + "'");
    }
  }
  // The metrics, the headline first and marked, each beside the reference's mean ± sd.
  const bool with_ref = e.reference.is_object();
  std::string rows_html;
  for (const auto& [name, v] : e.metrics.at("metrics").items()) {
    const bool head = name == e.lesson.headline;
    const std::string ref = with_ref ? reference_value(e.reference, name) : "";
    const std::string row = std::string(head ? "<tr class=\"headline\">" : "<tr>") + "<td>" + escape(name) +
                            (head ? " (headline)" : "") + "</td><td class=\"num\">" +
                            escape(metric_text(v.get<double>())) + "</td>" +
                            (with_ref ? "<td class=\"num\">" + escape(ref.empty() ? "—" : ref) + "</td>" : "") + "</tr>\n";
    rows_html = head ? row + rows_html : rows_html + row;
  }
  toc += "<li><a href=\"#metrics\">Metrics</a></li>";
  body += "<h2 id=\"metrics\">Metrics</h2>\n<p>Every number the lesson measured, on held-out data (" +
          escape(e.story.value("quick", false) ? "quick run" : "full run") + ", seed " + e.story["seed"].dump() +
          "). Total time " + seconds_text(e.lesson.seconds) + " s." +
          (with_ref ? " Beside each: the lesson's reference, its " + escape(reference_source(e.reference)) + "." : "") +
          "</p>\n<div class=\"scroll\"><table>\n<thead><tr><th>metric</th><th class=\"num\">this run</th>" +
          (with_ref ? "<th class=\"num\">reference (full run)</th>" : "") + "</tr></thead>\n<tbody>\n" + rows_html +
          "</tbody></table></div>\n";
  if (!questions.empty()) toc += "<li><a href=\"#questions\">Questions to think about</a></li>";
  return "<div class=\"toc\"><strong>Contents</strong><ul>" + toc + "</ul></div>\n" + body + questions;
}

// "quick run, seed 0" as a badge: a quick run is small and says so wherever its numbers appear.
std::string run_kind_html(const Json& story) {
  const bool quick = story.value("quick", false);
  return std::string("<span class=\"run-kind") + (quick ? "" : " full") + "\">" + (quick ? "quick run" : "full run") +
         ", seed " + story["seed"].dump() + "</span>";
}

// The headline of this run beside the reference's.
std::string headline_html(const Entry& e) {
  if (!e.lesson.headline_value) return "";
  std::string h = "<p>Headline: <strong>" + escape(e.lesson.headline) + " = " + escape(metric_text(*e.lesson.headline_value)) +
                  "</strong> in this run";
  const std::string ref = reference_value(e.reference, e.lesson.headline);
  if (!ref.empty()) h += "; the full lesson reaches <strong>" + escape(ref) + "</strong> (" + escape(reference_source(e.reference)) + ")";
  else h += " (no reference run recorded for this lesson yet)";
  return h + ".</p>\n";
}

// How the run's claims went, in one line above the story.
std::string claims_summary_html(const Json& story) {
  int held = 0, unseen = 0, other = 0, full = 0;
  for (const Json& b : story.at("blocks")) {
    if (b.value("kind", "") != "claim") continue;
    const std::string kind = claim_kind(b, story.value("quick", false));
    (kind == "held" ? held : kind == "either" ? other : kind == "fullrun" ? full : unseen) += 1;
  }
  if (held + unseen + other + full == 0) return "";
  std::string s = "<p class=\"ref\">" + std::to_string(held + unseen + other + full) + " claims, each tied to the numbers it "
                  "rests on: " + std::to_string(held) + " measured in this run";
  if (other) s += ", " + std::to_string(other) + " went the other way (an outcome that varies with the seed)";
  if (full) s += ", " + std::to_string(full) + " shown by the full run only (this quick run is too small)";
  if (unseen) s += ", <span class=\"failed\">" + std::to_string(unseen) + " not seen in this run</span>";
  return s + ".</p>\n";
}

std::string status_html(const BookLesson& l) {
  return "<span class=\"" + std::string(l.ok ? "ok" : "failed") + "\">" + escape(l.status) + "</span>";
}

const std::string kSyllabus = std::string(ATTNLAB_SOURCE_DIR) + "/docs/syllabus.md";

std::string nav_html(const std::vector<Entry>& all, std::size_t i) {
  std::string nav = link("index.html", "Course book");
  if (i > 0) nav += link(all[i - 1].lesson.id + ".html", "← " + all[i - 1].lesson.id);
  if (i + 1 < all.size()) nav += link(all[i + 1].lesson.id + ".html", all[i + 1].lesson.id + " →");
  if (exists(kSyllabus)) nav += link("syllabus.html", "Syllabus");
  return nav + link("gradcheck.html", "Gradient checks");
}

std::string lesson_page(const std::vector<Entry>& all, std::size_t i, const std::string& folder,
                        const BookSources& sources) {
  const Entry& e = all[i];
  Page p;
  p.title = e.lesson.id + ": " + e.lesson.title;
  p.heading = p.title;
  p.nav = nav_html(all, i);
  if (e.story.is_null()) {
    p.body = "<p>Status: " + status_html(e.lesson) + ".</p>\n";
    if (!e.log.empty()) {
      p.body += "<p>The end of its output (" + link(e.log, e.log) + "):</p>\n<pre>" +
                escape(tail(folder + "/" + e.log, 30)) + "</pre>\n";
    }
    return document(p);
  }
  p.math = true;
  p.body = "<p class=\"summary\">" + prose_html(e.summary) + "</p>\n<p>" + run_kind_html(e.story) + " " +
           status_html(e.lesson) + "</p>\n" + headline_html(e) + claims_summary_html(e.story) +
           story_html(e, questions_html(read_questions(sources, e.lesson.id)));
  return document(p);
}

// docs/syllabus.md as a page of the book: its first "# " line the heading, the rest its body.
std::string syllabus_page(const std::string& markdown) {
  Page p;
  std::string body = markdown;
  p.heading = "Syllabus";
  if (body.rfind("# ", 0) == 0) {
    const auto end = body.find('\n');
    p.heading = body.substr(2, end - 2);
    body = end == std::string::npos ? "" : body.substr(end + 1);
  }
  p.title = "attnlab: " + p.heading;
  p.nav = link("index.html", "Course book");
  p.body = markdown_html(body);
  return document(p);
}

std::string index_page(const std::vector<Entry>& all, bool have_gradcheck) {
  Page p;
  p.title = "attnlab: the course book";
  p.heading = "attnlab: the course book";
  p.nav = have_gradcheck ? link("gradcheck.html", "Gradient checks") : "";
  if (exists(kSyllabus)) p.nav = link("syllabus.html", "Syllabus") + p.nav;
  std::string cards, rows;
  for (const Entry& e : all) {
    const BookLesson& l = e.lesson;
    const std::string headline =
        l.headline_value ? l.headline + " = " + metric_text(*l.headline_value) : std::string("—");
    const std::string ref = l.headline_value ? reference_value(e.reference, l.headline) : "";
    const std::string kind = e.story.is_null() ? "" : run_kind_html(e.story);
    cards += "<div class=\"card\">";
    if (!e.first_figure.empty())
      cards += "<a href=\"" + url(l.id + ".html") + "\"><img src=\"" + url(l.id + "/" + e.first_figure) +
               "\" alt=\"" + escape(l.title) + "\"></a>";
    cards += "<h3>" + link(l.id + ".html", l.id.substr(0, 2) + ". " + l.title) + "</h3><p>" + escape(e.summary) +
             "</p><p>" + escape(headline) + " " + kind + "</p>" +
             (ref.empty() ? "" : "<p class=\"ref\">full run: " + escape(ref) + "</p>") + "<p>" + status_html(l) + ", " +
             seconds_text(l.seconds) + " s</p></div>\n";
    rows += "<tr><td>" + link(l.id + ".html", l.id) + "</td><td>" + status_html(l) + "</td><td>" + escape(headline) +
            " " + kind + "</td><td class=\"num\">" + escape(ref.empty() ? "—" : ref) + "</td><td class=\"num\">" +
            seconds_text(l.seconds) + "</td><td class=\"num\">" +
            (l.cpu_seconds > 0 ? seconds_text(l.cpu_seconds) : "—") + "</td></tr>\n";
  }
  p.body = "<p class=\"summary\">Learn attention from first principles, by training it: each lesson below is a "
           "program that explains, trains, measures and draws as it runs. These pages are its story as it ran "
           "here, figures and numbers included.</p>\n<h2 id=\"lessons\">The lessons</h2>\n<div class=\"cards\">\n" +
           cards + "</div>\n<h2 id=\"run\">This run</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th>lesson</th>"
           "<th>status</th><th>headline metric</th><th class=\"num\">full-run reference (mean ± sd)</th><th class=\"num\">seconds</th><th class=\"num\">CPU s</th></tr>"
           "</thead>\n<tbody>\n" +
           rows + "</tbody></table></div>\n";
  if (have_gradcheck)
    p.body += "<p>Every op and module of the engine, its hand-derived gradient checked against finite "
              "differences: " + link("gradcheck.html", "the gradient checks") + ".</p>\n";
  return document(p);
}

std::string gradcheck_page(const Json& g) {
  Page p;
  p.title = "attnlab: gradient checks";
  p.heading = "Gradient checks";
  p.nav = link("index.html", "Course book");
  std::vector<std::vector<std::string>> rows;
  int passed = 0, failed = 0;
  for (const Json& c : g.at("cases")) {
    const bool ok = c.value("ok", false);
    (ok ? passed : failed)++;
    char abs_err[32], rel_err[32];
    std::snprintf(abs_err, sizeof abs_err, "%.2e", c.value("max_abs_error", 0.0));
    std::snprintf(rel_err, sizeof rel_err, "%.2e", c.value("max_rel_error", 0.0));
    rows.push_back({c.value("name", ""), c.value("shapes", ""), abs_err, rel_err,
                    ok ? "OK" : "FAIL: " + c.value("detail", "")});
  }
  p.body = "<p>Every op and module of attnlab, its hand-derived backward checked against central finite "
           "differences in double precision, with a random upstream gradient and gradients pre-filled (a "
           "backward must add, not overwrite). error = |analytic − numeric| / max(|analytic|, |numeric|, 1); "
           "OK below 1e-6.</p>\n<p><strong>" + std::to_string(passed) + " passed, " + std::to_string(failed) +
           " failed.</strong></p>\n" +
           table({"case", "shapes", "max abs err", "max rel err", "result"}, rows);
  return document(p);
}

}  // namespace

std::vector<BookLesson> write_book(const std::string& folder, const std::vector<LessonRun>& runs) {
  return write_book(folder, runs, default_sources());
}

std::vector<BookLesson> write_book(const std::string& folder, const std::vector<LessonRun>& runs,
                                   const BookSources& sources) {
  std::map<std::string, const LessonRun*> run_of;
  for (const LessonRun& r : runs) run_of[r.id] = &r;
  std::vector<std::string> ids;
  for (const LessonRun& r : runs) ids.push_back(r.id);
  if (runs.empty() && fs::is_directory(folder))
    for (const auto& d : fs::directory_iterator(folder)) {
      const std::string name = d.path().filename().string();
      if (d.is_directory() && is_lesson_id(name) && exists(d.path().string() + "/story.json")) ids.push_back(name);
    }
  std::sort(ids.begin(), ids.end());

  std::vector<Entry> all;
  for (const std::string& id : ids) {
    Entry e;
    e.lesson.id = id;
    e.lesson.title = id;
    const LessonRun* run = run_of.count(id) ? run_of[id] : nullptr;
    e.lesson.ok = run ? run->ok : true;
    e.lesson.status = run ? run->status : "ok";
    e.lesson.seconds = run ? run->seconds : 0.0;
    e.lesson.cpu_seconds = run ? run->cpu_seconds : 0.0;
    e.log = run ? run->log : "";
    const std::string dir = folder + "/" + id;
    if (e.lesson.ok && exists(dir + "/story.json")) {
      e.story = read_json(dir + "/story.json");
      e.reference = e.story.value("reference", Json());
      e.metrics = read_json(dir + "/metrics.json");
      e.lesson.title = e.story.value("title", id);
      e.summary = e.story.value("summary", "");
      e.lesson.headline = e.metrics.value("headline", "");
      if (!e.lesson.headline.empty() && e.metrics["metrics"].contains(e.lesson.headline))
        e.lesson.headline_value = e.metrics["metrics"][e.lesson.headline].get<double>();
      if (!run) e.lesson.seconds = e.metrics["timings"].value("seconds", 0.0);
      const std::string lead = e.story.value("lead_figure", "");
      for (const Json& b : e.story.at("blocks")) {
        if (b.value("kind", "") != "figure") continue;
        ++e.lesson.figures;
        // the lead figure when the lesson names one, else the first
        if (e.first_figure.empty() || b.value("stem", "") == lead) e.first_figure = b.at("files").at(0).get<std::string>();
      }
    } else if (e.lesson.ok) {
      e.lesson.ok = false;
      e.lesson.status = "no output (story.json missing)";
    }
    all.push_back(std::move(e));
  }

  make_dirs(folder);
  copy_katex(folder);
  for (std::size_t i = 0; i < all.size(); ++i)
    write_file_atomic(folder + "/" + all[i].lesson.id + ".html", lesson_page(all, i, folder, sources));
  const std::string gradcheck = folder + "/gradcheck/gradcheck.json";
  const bool have_gradcheck = exists(gradcheck);
  if (have_gradcheck) write_file_atomic(folder + "/gradcheck.html", gradcheck_page(read_json(gradcheck)));
  if (exists(kSyllabus)) write_file_atomic(folder + "/syllabus.html", syllabus_page(read_file(kSyllabus)));
  write_file_atomic(folder + "/index.html", index_page(all, have_gradcheck));

  std::vector<BookLesson> out;
  for (const Entry& e : all) out.push_back(e.lesson);
  return out;
}

}  // namespace attnlab::course
