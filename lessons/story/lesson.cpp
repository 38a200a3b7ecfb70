#include "lessons/story/lesson.hpp"

#include <fstream>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "core/runtime/parallel.hpp"
#include "io/files.hpp"
#include "io/folder.hpp"

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
  emit("## " + title + "\n\n", "\n## " + title + "\n" + std::string(display_width(title) + 3, '-') + "\n");
}

void Lesson::say(const std::string& paragraph) {
  story_.push_back({{"kind", "text"}, {"text", paragraph}});
  emit(paragraph + "\n\n", wrap(paragraph) + "\n");
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
  std::vector<std::size_t> w(header.size());
  for (std::size_t c = 0; c < header.size(); ++c) w[c] = display_width(header[c]);
  for (auto& r : rows)
    for (std::size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], display_width(r[c]));
  std::string md = "|", con = "  ";
  for (std::size_t c = 0; c < header.size(); ++c) {
    md += " " + md_cell(header[c]) + " |";
    con += pad(header[c], w[c]) + (c + 1 < header.size() ? " | " : "");
  }
  md += "\n|";
  con += "\n  ";
  for (std::size_t c = 0; c < header.size(); ++c) {
    md += " --- |";
    con += std::string(w[c], '-') + (c + 1 < header.size() ? "-+-" : "");
  }
  md += "\n";
  con += "\n";
  for (auto& r : rows) {
    md += "|";
    con += "  ";
    for (std::size_t c = 0; c < header.size(); ++c) {
      const std::string cell = c < r.size() ? r[c] : "";
      md += " " + md_cell(cell) + " |";
      con += pad(cell, w[c]) + (c + 1 < header.size() ? " | " : "");
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

void Lesson::figure(const std::string& stem, const std::string& caption) {
  Json files = Json::array();
  for (const std::string& format : figure_formats()) {
    figures_.push_back(stem + "." + format);
    files.push_back(stem + "." + format);
  }
  story_.push_back({{"kind", "figure"}, {"stem", stem}, {"caption", caption}, {"files", files}});
  emit("![" + caption + "](" + stem + ".png)\n\n*Figure: " + caption + "* ([SVG](" + stem + ".svg))\n\n",
       "  [figure] " + final_path(stem + ".png") + " (and .svg): " + caption + "\n\n");
}

void Lesson::config(const std::string& key, Json value) { config_[key] = std::move(value); }

void Lesson::metric(const std::string& name, double value) { metrics_[name] = value; }

void Lesson::timing(const std::string& name, double value) { timings_[name] = value; }

void Lesson::finish() {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  Json j = Json::object();
  j["lesson"] = info_.id;
  j["title"] = info_.title;
  j["seed"] = args_.seed;  // an integer: seeds above 2^53 survive
  j["configuration"] = config_;
  j["metrics"] = metrics_;
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
  story["blocks"] = story_;

  std::string metrics_md = "## Metrics\n\n| metric | value |\n| --- | --- |\n";
  for (const auto& [k, v] : metrics_.items()) metrics_md += "| " + k + " | " + fixed(v.get<double>(), 4) + " |\n";
  metrics_md += "\nTotal time: " + fixed(seconds, 1) + " s.\n";
  write_file_atomic(path("report.md"), report_ + metrics_md);
  write_file_atomic(path("story.json"), story.dump(1, ' ', false, Json::error_handler_t::replace) + "\n");
  write_file_atomic(path("metrics.json"), j.dump(2) + "\n");
  out_->publish();
  std::cout << "\n" << metrics_md.substr(13) << "Wrote " << final_path("report.md") << " and " << final_path("metrics.json")
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
  const std::string& dir = lesson().args().from;
  if (dir.empty()) return "";
  const std::string path = dir + "/" + file;
  if (!std::ifstream(path).good())
    throw IoError("--from " + dir + ": no readable " + file + " there (the output folder of an earlier run of " +
                  lesson().info().id + ")");
  return path;
}

}  // namespace attnlab::lessons
