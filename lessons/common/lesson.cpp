#include "lessons/common/lesson.hpp"

#include <cstdio>
#include <iostream>
#include <sstream>

#include "core/runtime/parallel.hpp"
#include "io/files.hpp"

namespace attnlab::lessons {

std::string fmt(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

namespace {

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

Lesson::Lesson(LessonInfo info, int argc, char** argv)
    : Lesson(info, parse_args_or_exit(argc, argv, info)) {}

Lesson::Lesson(LessonInfo info, LessonArgs args)
    : info_(std::move(info)), args_(std::move(args)), start_(std::chrono::steady_clock::now()) {
  set_threads(args_.threads);
  make_dirs(args_.out);
  const std::string mode = args_.quick ? "quick run" : "full run";
  report_ = "# " + info_.id + ": " + info_.title + "\n\n*" + info_.summary + "* (" + mode + ", seed " +
            std::to_string(args_.seed) + ")\n\n";
  std::cout << "\n" << std::string(92, '=') << "\n" << info_.id << ": " << info_.title << "\n"
            << info_.summary << "\n(" << mode << ", seed " << args_.seed << ", output in " << args_.out << ")\n"
            << std::string(92, '=') << "\n";
  config_.set("quick", args_.quick);
  config_.set("threads", args_.threads);
}

int Lesson::epochs(int full_default, int quick_default) const {
  if (args_.epochs > 0) return args_.epochs;
  return args_.quick ? quick_default : full_default;
}

std::string Lesson::path(const std::string& file) const { return args_.out + "/" + file; }

void Lesson::emit(const std::string& markdown, const std::string& console) {
  report_ += markdown;
  std::cout << console;
  std::cout.flush();
}

void Lesson::section(const std::string& title) {
  emit("## " + title + "\n\n", "\n## " + title + "\n" + std::string(display_width(title) + 3, '-') + "\n");
}

void Lesson::say(const std::string& paragraph) { emit(paragraph + "\n\n", wrap(paragraph) + "\n"); }

void Lesson::verbatim(const std::string& text) {
  std::string indented;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) indented += "    " + line + "\n";
  emit("```\n" + text + (text.empty() || text.back() == '\n' ? "" : "\n") + "```\n\n", indented + "\n");
}

void Lesson::table(const std::vector<std::string>& header, const std::vector<std::vector<std::string>>& rows) {
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

void Lesson::matrix(const std::string& name, const std::vector<std::vector<double>>& m,
                    const std::vector<std::string>& row_labels, const std::vector<std::string>& col_labels,
                    int digits) {
  std::size_t lw = 0;
  for (auto& l : row_labels) lw = std::max(lw, display_width(l));
  std::size_t cw = static_cast<std::size_t>(digits + 4);
  for (auto& l : col_labels) cw = std::max(cw, display_width(l));
  std::string text = name + " =\n";
  if (!col_labels.empty()) {
    text += std::string(lw + (lw ? 1 : 0) + 2, ' ');
    for (auto& l : col_labels) text += std::string(cw - display_width(l), ' ') + l + " ";
    text += "\n";
  }
  for (std::size_t i = 0; i < m.size(); ++i) {
    const std::string label = i < row_labels.size() ? row_labels[i] : "";
    text += (lw ? pad(label, lw) + " " : "") + "[ ";
    for (double v : m[i]) {
      const std::string s = fmt(v, digits);
      text += std::string(cw > s.size() ? cw - s.size() : 0, ' ') + s + " ";
    }
    text += "]\n";
  }
  verbatim(text);
}

void Lesson::figure(const std::string& stem, const std::string& caption) {
  figures_.push(stem + ".png");
  figures_.push(stem + ".svg");
  emit("![" + caption + "](" + stem + ".png)\n\n*Figure: " + caption + "* ([SVG](" + stem + ".svg))\n\n",
       "  [figure] " + path(stem + ".png") + " (and .svg): " + caption + "\n\n");
}

void Lesson::config(const std::string& key, Json value) { config_.set(key, std::move(value)); }

void Lesson::metric(const std::string& name, double value) { metrics_.set(name, value); }

void Lesson::timing(const std::string& name, double value) { timings_.set(name, value); }

int Lesson::finish() {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  Json j = Json::object();
  j.set("lesson", info_.id);
  j.set("title", info_.title);
  j.set("seed", static_cast<double>(args_.seed));
  j.set("configuration", config_);
  j.set("metrics", metrics_);
  j.set("figures", figures_);
  timings_.set("seconds", seconds);
  j.set("timings", timings_);

  std::string metrics_md = "## Metrics\n\n| metric | value |\n| --- | --- |\n";
  for (auto& [k, v] : metrics_.members()) metrics_md += "| " + k + " | " + fmt(v.as_number(), 4) + " |\n";
  metrics_md += "\nTotal time: " + fmt(seconds, 1) + " s.\n";
  write_file_atomic(path("report.md"), report_ + metrics_md);
  write_file_atomic(path("metrics.json"), j.dump());
  std::cout << "\n" << metrics_md.substr(13) << "Wrote " << path("report.md") << " and " << path("metrics.json")
            << ".\n";
  return 0;
}

}  // namespace attnlab::lessons
