#include "lessons/story/lesson.hpp"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "core/runtime/parallel.hpp"
#include "io/files.hpp"
#include "io/folder.hpp"
#include "lessons/story/condition.hpp"
#include "lessons/story/math.hpp"
#include "lessons/story/reference.hpp"

namespace attnlab::lessons {

namespace {

Lesson* g_current = nullptr;

// Wrap a paragraph at 92 columns for the terminal (the report keeps it as one paragraph).
std::string wrap(const std::string& text, std::size_t width = 92) {
  std::istringstream words(text);
  std::string word, line, out;
  while (words >> word) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      out += line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  return out + line + "\n";
}

// A table cell for markdown: '|' would end the cell.
std::string md_cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? std::string("\\|") : std::string(1, c);
  return out;
}

std::size_t display_width(const std::string& s) {
  std::size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string pad(const std::string& s, std::size_t w) {
  const std::size_t n = display_width(s);
  return n >= w ? s : s + std::string(w - n, ' ');
}

}  // namespace

Lesson::Lesson(LessonInfo info, LessonArgs args)
    : info_(std::move(info)), args_(std::move(args)), start_(std::chrono::steady_clock::now()) {
  if (g_current) throw std::logic_error("Lesson: a lesson is already running in this program");
  set_threads(args_.threads);
  if (!args_.from.empty()) {  // fail now, not after minutes of work: --from must hold a checkpoint of ours
    bool any = false;
    for (const std::string& file : info_.checkpoints) any = any || std::ifstream(args_.from + "/" + file).good();
    if (!any)
      throw IoError("--from '" + args_.from + "': none of " + info_.id + "'s checkpoints (" + listing(info_.checkpoints) +
                    ") is there: give the output folder of an earlier run of " + info_.id);
  }
  out_.emplace(args_.out, "metrics.json", "--out");
  const std::string mode = args_.quick ? "quick run" : args_.long_run ? "long run" : "full run";
  report_ = "# " + info_.id + ": " + info_.title + "\n\n*" + info_.summary + "* (" + mode + ", seed " +
            std::to_string(args_.seed) + ")\n\n";
  std::cout << "\n" << std::string(92, '=') << "\n" << info_.id << ": " << info_.title << "\n"
            << info_.summary << "\n(" << mode << ", seed " << args_.seed << ", output in " << args_.out << ")\n"
            << std::string(92, '=') << "\n";
  config_["quick"] = args_.quick;
  if (args_.long_run) config_["long"] = true;
  config_["threads"] = args_.threads;
  g_current = this;
}

Lesson::~Lesson() {
  if (g_current == this) g_current = nullptr;
}

std::string Lesson::path(const std::string& file) const { return out_->staging() + "/" + file; }
std::string Lesson::final_path(const std::string& file) const { return args_.out + "/" + file; }

void Lesson::emit(const std::string& markdown, const std::string& console) {
  report_ += markdown;
  std::cout << console;
  std::cout.flush();
}

void Lesson::section(const std::string& title) {
  story_.push_back({{"kind", "section"}, {"title", title}});
  const std::string plain = plain_math(title);
  emit("## " + title + "\n\n", "\n## " + plain + "\n" + std::string(display_width(plain) + 3, '-') + "\n");
}

void Lesson::say(const std::string& paragraph) {
  story_.push_back({{"kind", "text"}, {"text", paragraph}});
  emit(paragraph + "\n\n", wrap(plain_math(paragraph)) + "\n");
}

void Lesson::verbatim(const std::string& text) {
  story_.push_back({{"kind", "verbatim"}, {"text", text}});
  emit_verbatim(text);
}

void Lesson::emit_verbatim(const std::string& text) {
  std::string indented;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) indented += "    " + line + "\n";
  emit("```\n" + text + (text.empty() || text.back() == '\n' ? "" : "\n") + "```\n\n", indented + "\n");
}

void Lesson::table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
  story_.push_back({{"kind", "table"}, {"header", header}, {"rows", rows}});
  // report.md (and the book) keep the cells' TeX; the console shows them plain, aligned on that.
  auto cell = [](const std::vector<std::string>& r, std::size_t c) { return c < r.size() ? r[c] : std::string(); };
  std::vector<std::size_t> w(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) {
    w[c] = display_width(plain_math(header[c]));
    for (const auto& r : rows) w[c] = std::max(w[c], display_width(plain_math(cell(r, c))));
  }
  std::string md = "|", rule = "|", con = "  ", con_rule = "  ";
  for (std::size_t c = 0; c < header.size(); ++c) {
    const std::string sep = c + 1 < header.size() ? " | " : "";
    md += " " + md_cell(header[c]) + " |";
    rule += " --- |";
    con += pad(plain_math(header[c]), w[c]) + sep;
    con_rule += std::string(w[c], '-') + (c + 1 < header.size() ? "-+-" : "");
  }
  md += "\n" + rule + "\n";
  con += "\n" + con_rule + "\n";
  for (const auto& r : rows) {
    md += "|";
    con += "  ";
    for (std::size_t c = 0; c < header.size(); ++c) {
      md += " " + md_cell(cell(r, c)) + " |";
      con += pad(plain_math(cell(r, c)), w[c]) + (c + 1 < header.size() ? " | " : "");
    }
    md += "\n";
    con += "\n";
  }
  emit(md + "\n", con + "\n");
}

void Lesson::matrix(const std::string& name, const xt::xarray<double>& m, const std::vector<std::string>& row_labels,
                    const std::vector<std::string>& col_labels, int decimals) {
  if (m.dimension() != 2) throw std::invalid_argument("matrix: " + name + " is not 2-D");
  std::size_t lw = 0;
  for (auto& l : row_labels) lw = std::max(lw, display_width(l));
  std::size_t cw = static_cast<std::size_t>(decimals + 4);
  for (auto& l : col_labels) cw = std::max(cw, display_width(l));
  Json values = Json::array();  // as printed: the same digits in the report and the book
  for (std::size_t i = 0; i < m.shape()[0]; ++i) {
    values.push_back(Json::array());
    for (std::size_t j = 0; j < m.shape()[1]; ++j) values.back().push_back(fixed(m(i, j), decimals));
  }
  story_.push_back({{"kind", "matrix"}, {"name", name}, {"row_labels", row_labels}, {"col_labels", col_labels},
                    {"values", values}});
  std::string text = name + " =\n";
  if (!col_labels.empty()) {
    text += std::string(lw + (lw ? 1 : 0) + 2, ' ');
    for (auto& l : col_labels) text += std::string(cw - display_width(l), ' ') + l + " ";
    text += "\n";
  }
  for (std::size_t i = 0; i < m.shape()[0]; ++i) {
    const std::string label = i < row_labels.size() ? row_labels[i] : "";
    text += (lw ? pad(label, lw) + " " : "") + "[ ";
    for (std::size_t j = 0; j < m.shape()[1]; ++j) {
      const std::string s = fixed(m(i, j), decimals);
      text += std::string(cw > s.size() ? cw - s.size() : 0, ' ') + s + " ";
    }
    text += "]\n";
  }
  emit_verbatim(text);
}

std::vector<std::string> Lesson::figure_formats() const {
  if (args_.pdf) return {"png", "svg", "pdf"};
  return {"png", "svg"};
}

void Lesson::figure(const std::string& stem, const std::string& caption, const FigurePng& png) {
  Json files = Json::array();
  for (const std::string& format : figure_formats()) {
    figures_.push_back(stem + "." + format);
    files.push_back(stem + "." + format);
  }
  Json block = {{"kind", "figure"}, {"stem", stem}, {"caption", caption}, {"files", files}};
  if (png.width_px > 0)
    block["png"] = {{"width_px", png.width_px}, {"height_px", png.height_px}, {"smallest_text_px", png.smallest_text_px}};
  story_.push_back(block);
  emit("![" + caption + "](" + stem + ".png)\n\n*Figure: " + caption + "* ([SVG](" + stem + ".svg))\n\n",
       "  [figure] " + final_path(stem + ".png") + " (and .svg): " + plain_math(caption) + "\n\n");
}

void Lesson::page(const std::string& file, const std::string& caption) {
  story_.push_back({{"kind", "page"}, {"file", file}, {"caption", caption}});
  emit("[" + caption + "](" + file + ") (an interactive page: open it in a browser)\n\n",
       "  [page] " + final_path(file) + ": " + plain_math(caption) + "\n\n");
}

void Lesson::config(const std::string& key, Json value) { config_[key] = std::move(value); }

void Lesson::metric(const std::string& name, double value) { metrics_[name] = value; }

void Lesson::timing(const std::string& name, double value) { timings_[name] = value; }

bool Lesson::claim(const Claim& c) {
  const std::string who = info_.id + ": claim '" + c.id + "'";
  if (c.id.empty() || c.when.empty() || c.holds.empty() || c.otherwise.empty())
    throw std::logic_error(who + ": a claim needs an id, a condition and both wordings");
  if (claims_.contains(c.id)) throw std::logic_error(who + " is made twice");
  // The numbers it rests on: its own first, then the metrics recorded so far.
  Json numbers = Json::object();
  const Lookup lookup = [&](const std::string& name) -> std::optional<double> {
    for (const auto& [k, v] : c.numbers)
      if (k == name) return v;
    if (metrics_.contains(name)) return metrics_[name].get<double>();
    return std::nullopt;
  };
  bool held = false;
  try {
    for (const std::string& name : names_in(c.when)) {
      const std::optional<double> v = lookup(name);
      if (!v) throw std::invalid_argument("no metric or number named '" + name + "' (record it before the claim)");
      numbers[name] = *v;
    }
    held = holds(c.when, lookup);
  } catch (const std::invalid_argument& e) {
    throw std::logic_error(who + ": " + e.what());
  }
  const std::string& said = held ? c.holds : c.otherwise;
  claims_[c.id] = {{"held", held}, {"expect", expect_name(c.expect)}};
  story_.push_back({{"kind", "claim"}, {"id", c.id}, {"when", c.when}, {"expect", expect_name(c.expect)},
                    {"numbers", numbers}, {"held", held}, {"text", said}});
  std::string measured;
  for (const auto& [k, v] : numbers.items()) measured += (measured.empty() ? "" : ", ") + k + " = " + rounded(v.get<double>());
  const std::string verdict = held ? "holds" : c.expect == Expect::either_way ? "went the other way" : "NOT SEEN in this run";
  emit(said + "\n\n> *Claim `" + c.id + "` " + verdict + ": `" + c.when + "`, measured " + measured + ".*\n\n",
       wrap(plain_math(said)) + "  [claim " + c.id + " " + verdict + ": " + c.when + "]\n\n");
  return held;
}

void Lesson::finish() {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  Json j = Json::object();
  j["lesson"] = info_.id;
  j["title"] = info_.title;
  j["seed"] = args_.seed;  // an integer: seeds above 2^53 survive
  j["configuration"] = config_;
  j["metrics"] = metrics_;
  j["claims"] = claims_;
  j["figures"] = figures_;
  timings_["seconds"] = seconds;
  j["timings"] = timings_;
  if (!info_.headline.empty()) {
    if (!metrics_.contains(info_.headline))
      throw std::logic_error(info_.id + ": the headline metric '" + info_.headline + "' was never recorded");
    j["headline"] = info_.headline;
  }

  // The story as data, for the course book: no times in it beyond what the prose itself quotes.
  Json story = Json::object();
  story["lesson"] = info_.id;
  story["title"] = info_.title;
  story["summary"] = info_.summary;
  story["quick"] = args_.quick;
  story["seed"] = args_.seed;
  story["headline"] = info_.headline;
  if (!info_.lead_figure.empty()) {
    bool saved = false;
    for (const Json& b : story_) saved = saved || (b["kind"] == "figure" && b["stem"] == info_.lead_figure);
    if (!saved) throw std::logic_error(info_.id + ": the lead figure '" + info_.lead_figure + "' was never saved");
    story["lead_figure"] = info_.lead_figure;
  }
  story["blocks"] = story_;
  if (!reference().is_null()) story["reference"] = reference();

  // The metrics, each beside the reference full run's mean ± sd where there is one.
  const Json& ref = reference();
  std::string metrics_md = "## Metrics\n\n";
  if (ref.is_object())
    metrics_md += "Beside each number of this run: the lesson's reference, its full run as mean ± sd over seeds " +
                  ref.value("seeds", Json::array()).dump() + " on " + ref.value("machine", std::string("an unnamed machine")) +
                  " (" + ref.value("date", std::string("")) + ").\n\n| metric | this run | reference (full run) |\n| --- | --- | --- |\n";
  else
    metrics_md += "| metric | value |\n| --- | --- |\n";
  for (const auto& [k, v] : metrics_.items()) {
    metrics_md += "| " + k + " | " + fixed(v.get<double>(), 4);
    if (ref.is_object()) {
      const std::string r = reference_text(k);
      metrics_md += " | " + (r.empty() ? std::string("—") : r);
    }
    metrics_md += " |\n";
  }
  std::vector<std::string> unseen;
  for (const auto& [id, c] : claims_.items())
    if (!c["held"].get<bool>() && c["expect"] != "either_way") unseen.push_back(id);
  if (!claims_.empty())
    metrics_md += "\nClaims: " + std::to_string(claims_.size() - unseen.size()) + " of " + std::to_string(claims_.size()) +
                  " held or went as the run says" + (unseen.empty() ? "" : "; not seen in this run: " + listing(unseen)) + ".\n";
  metrics_md += "\nTotal time: " + fixed(seconds, 1) + " s.\n";
  write_file_atomic(path("report.md"), report_ + metrics_md);
  write_file_atomic(path("story.json"), story.dump(1, ' ', false, Json::error_handler_t::replace) + "\n");
  write_file_atomic(path("metrics.json"), j.dump(2) + "\n");
  out_->publish();
  std::cout << "\n" << metrics_md.substr(std::string("## Metrics\n\n").size()) << "Wrote " << final_path("report.md") << " and " << final_path("metrics.json")
            << ".\n";
}

int run_lesson(const LessonInfo& info, int argc, char** argv, const std::function<void()>& body) {
  return run_program(info.id, usage(info), argc, argv, [&](const std::vector<std::string>& args) {
    Lesson L(info, parse_args(args, info));
    body();
    L.finish();
    return 0;
  });
}

Lesson& lesson() {
  if (!g_current) throw std::logic_error("no lesson is running (construct a Lesson or use run_lesson)");
  return *g_current;
}

bool quick() { return lesson().args().quick; }
std::uint64_t seed() { return lesson().args().seed; }

int epochs(int full_default, int quick_default) {
  const LessonArgs& a = lesson().args();
  if (a.epochs > 0) return a.epochs;
  return a.quick ? quick_default : full_default;
}

std::string checkpoint_from(const std::string& file) {
  const LessonInfo& info = lesson().info();
  if (std::find(info.checkpoints.begin(), info.checkpoints.end(), file) == info.checkpoints.end())
    throw std::logic_error(info.id + ": checkpoint '" + file + "' is not among the lesson's checkpoints (LessonInfo::checkpoints)");
  const std::string& dir = lesson().args().from;
  if (dir.empty()) return "";
  const std::string path = dir + "/" + file;
  if (!std::ifstream(path).good())
    throw IoError("--from " + dir + ": no readable " + file + " there (the output folder of an earlier run of " +
                  lesson().info().id + ")");
  return path;
}

}  // namespace attnlab::lessons
