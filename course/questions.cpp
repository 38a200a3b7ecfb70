#include "course/questions.hpp"

#include <cctype>
#include <filesystem>
#include <sstream>
#include <stdexcept>

#include "course/html.hpp"
#include "io/files.hpp"

namespace attnlab::course {

namespace fs = std::filesystem;

BookSources default_sources() {
  const std::string root = ATTNLAB_SOURCE_DIR;
  return {root + "/lessons/questions", root + "/exercises/solutions/questions"};
}

namespace {

// The length of "12. " at the start of `line`, 0 when it does not open an item.
std::size_t item_marker(const std::string& line) {
  std::size_t i = 0;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
  if (i == 0 || i + 1 >= line.size() || line[i] != '.' || line[i + 1] != ' ') return 0;
  return i + 2;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

}  // namespace

std::vector<std::string> numbered_items(const std::string& markdown) {
  std::vector<std::string> items;
  bool open = false;  // a blank line or a heading closes the item before it
  std::istringstream in(markdown);
  for (std::string line; std::getline(in, line);) {
    const std::string t = trim(line);
    if (const std::size_t m = item_marker(t)) {
      items.push_back(trim(t.substr(m)));
      open = true;
    } else if (t.empty() || t[0] == '#') {
      open = false;
    } else if (open) {
      items.back() += " " + t;
    }
  }
  return items;
}

std::vector<Question> read_questions(const BookSources& sources, const std::string& id) {
  const std::string qfile = sources.questions + "/" + id + ".md", afile = sources.answers + "/" + id + ".md";
  const bool have_answers = !sources.answers.empty() && fs::exists(afile);
  if (!fs::exists(qfile)) {
    if (have_answers) throw std::runtime_error("course_book: answers '" + afile + "' but no questions '" + qfile + "'");
    return {};
  }
  std::vector<Question> out;
  for (const std::string& q : numbered_items(read_file(qfile, "course_book"))) out.push_back({q, ""});
  if (have_answers) {
    const std::vector<std::string> answers = numbered_items(read_file(afile, "course_book"));
    if (answers.size() != out.size())
      throw std::runtime_error("course_book: '" + qfile + "' asks " + std::to_string(out.size()) + " questions, '" +
                               afile + "' answers " + std::to_string(answers.size()));
    for (std::size_t i = 0; i < out.size(); ++i) out[i].answer = answers[i];
  }
  return out;
}

std::string questions_html(const std::vector<Question>& questions) {
  if (questions.empty()) return "";
  std::string h = "<h2 id=\"questions\">Questions to think about</h2>\n<ol class=\"questions\">\n";
  for (const Question& q : questions) {
    h += "<li><p>" + prose_html(q.text) + "</p>";
    if (!q.answer.empty())
      h += "<details class=\"answer\"><summary>Answer (teacher's copy)</summary><p>" + prose_html(q.answer) +
           "</p></details>";
    h += "</li>\n";
  }
  return h + "</ol>\n";
}

}  // namespace attnlab::course
