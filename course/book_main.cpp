// build/bin/course_book: writes the course book from the lessons' outputs already in a folder
// (OUT/NN_name/story.json and metrics.json, OUT/gradcheck/gradcheck.json): OUT/index.html, a page
// per lesson and the gradient checks' page. `course` runs the lessons and then does the same.
#include <iostream>
#include <stdexcept>

#include "course/book.hpp"
#include "io/program.hpp"

using namespace attnlab;

namespace {

constexpr const char* kUsage =
    "usage: course_book [--out DIR] [--help] [--version]\n"
    "  Writes the course book, DIR/index.html and a page per lesson, from the lessons' outputs in\n"
    "  DIR/NN_name/ (default DIR: out).\n";

int run(const std::vector<std::string>& args) {
  std::string out = "out";
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--out" && i + 1 < args.size()) out = args[++i];
    else throw UsageError("unknown or incomplete argument '" + args[i] + "'");
  }
  const auto lessons = course::write_book(out);
  if (lessons.empty())
    throw std::runtime_error("'" + out + "' holds no lesson output (no NN_name/story.json): run the lessons first "
                             "(scripts/main.sh, or build/bin/NN_name --out " + out + "/NN_name)");
  std::cout << "course_book: " << lessons.size() << " lessons, " << out << "/index.html\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_program("course_book", kUsage, argc, argv, run); }
