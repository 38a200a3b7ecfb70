// build/bin/course_slides: each lesson as a slide deck (course/slides.hpp), from the outputs of its
// run already in a folder: OUT/slides/NN_name.html, printed by headless Chromium to
// OUT/slides/NN_name.pdf, one 16:9 page per slide. `course --slides` does the same after its run.
#include <filesystem>
#include <iostream>

#include "course/lesson_ids.hpp"
#include "course/slides.hpp"
#include "io/program.hpp"

using namespace attnlab;
namespace fs = std::filesystem;

namespace {

constexpr const char* kUsage =
    "usage: course_slides [--out DIR] [--only NN,NN...] [--html-only] [--help] [--version]\n"
    "  Writes each lesson's slides, DIR/slides/NN_name.pdf (16:9, one page per slide), from its run's\n"
    "  outputs in DIR/NN_name/ (default DIR: out). Printing needs Debian's chromium.\n"
    "  --only LIST    only these lessons, by number: --only 01,04\n"
    "  --html-only    write the slides' pages (DIR/slides/NN_name.html) without printing them\n";

int run(const std::vector<std::string>& args) {
  std::string out = "out";
  std::vector<std::string> only;
  bool pdf = true;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw UsageError(flag + " needs a value");
      return args[++i];
    };
    if (flag == "--out") out = value();
    else if (flag == "--html-only") pdf = false;
    else if (flag == "--only") only = course::only_list(value());
    else throw UsageError("unknown argument '" + flag + "'");
  }
  std::vector<std::string> ids;  // the lessons with a story in OUT, in order
  if (fs::is_directory(out))
    for (const auto& d : fs::directory_iterator(out)) {
      const std::string name = d.path().filename().string();
      if (d.is_directory() && course::is_lesson_id(name) && fs::exists(d.path() / "story.json"))
        ids.push_back(name);
    }
  std::sort(ids.begin(), ids.end());
  ids = course::select_lessons(ids, only, out + " (with a story.json)");
  if (ids.empty())
    throw UsageError("'" + out + "' holds no lesson output (no NN_name/story.json): run the lessons first "
                     "(scripts/main.sh, or build/bin/NN_name --quick --out " + out + "/NN_name)");
  for (const std::string& id : ids) {
    const course::Deck deck = course::make_deck(out, id, course::default_sources(), pdf);
    std::cout << id << ": " << deck.slides << " slides, " << (pdf ? deck.pdf : deck.html) << std::endl;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_program("course_slides", kUsage, argc, argv, run); }
