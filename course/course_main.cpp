// build/bin/course: the whole course in one command. Runs every lesson program found beside it
// (NN_name), one after another, in --quick mode unless --full, each into OUT/NN_name/ with its
// console output in OUT/logs/NN_name.log; then gradcheck (its table into OUT/gradcheck/); then
// writes the course book (OUT/index.html and a page per lesson, course/book.hpp) and prints a
// summary: each lesson, its status, its headline metric and its time; with --slides, each lesson's
// slides too (course/slides.hpp). The same summary as data, OUT/runs.json: the machine, the date,
// the mode, seed and threads, and each program's status, wall and CPU seconds (a quiet full run of
// it is where lessons/reference/full_run_times.json comes from). A lesson that fails or runs past
// its time limit does not stop the others. Exit 0 when everything ran, 1 otherwise.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/runtime/parallel.hpp"
#include "course/book.hpp"
#include "course/lesson_ids.hpp"
#include "course/process.hpp"
#include "course/slides.hpp"
#include "io/files.hpp"
#include "io/program.hpp"
#include "lessons/story/clock.hpp"

using namespace attnlab;
using namespace attnlab::course;
namespace fs = std::filesystem;

namespace {

constexpr const char* kUsage =
    "usage: course [--full] [--seed N] [--threads N] [--pdf] [--only NN,NN...] [--out DIR] [--timeout S]\n"
    "              [--bin DIR] [--slides] [--help] [--version]\n"
    "  Runs every lesson (quick runs unless --full), then gradcheck, writes the course book to\n"
    "  DIR/index.html, the times to DIR/runs.json, and prints a summary. A failed lesson does not\n"
    "  stop the others.\n"
    "  --full         full runs (minutes each) instead of --quick ones (seconds)\n"
    "  --seed N       the seed of every lesson (default 0)\n"
    "  --threads N    threads of every lesson (default: this machine's CPUs, at most 8)\n"
    "  --pdf          the lessons also write their figures as PDF\n"
    "  --only LIST    only these lessons, by number: --only 01,04\n"
    "  --out DIR      where the lessons and the book go (default out)\n"
    "  --timeout S    a lesson still running after S seconds is stopped (default 300, 1800 with --full)\n"
    "  --bin DIR      where the lesson programs are (default: beside this program)\n"
    "  --slides       also each lesson's slides, DIR/slides/NN_name.pdf (needs Debian's chromium)\n";

std::string self_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

bool executable(const fs::path& p) { return fs::is_regular_file(p) && ::access(p.c_str(), X_OK) == 0; }

// NN_name programs in `bin`, in order (their names are the lessons' ids).
std::vector<std::string> lesson_programs(const std::string& bin) {
  std::vector<std::string> ids;
  if (!fs::is_directory(bin)) throw UsageError("--bin '" + bin + "' is not a folder");
  for (const auto& f : fs::directory_iterator(bin)) {
    const std::string name = f.path().filename().string();
    if (course::is_lesson_id(name) && name.find('.') == std::string::npos && executable(f.path()))
      ids.push_back(name);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

// A program that ran, and the 1-minute load average as it started: was the machine quiet?
struct TimedRun {
  LessonRun run;
  double load_at_start;
};

// OUT/runs.json, written whole or not at all.
void write_runs_json(const std::string& out, bool full, const std::string& seed, const std::string& threads,
                     const std::vector<TimedRun>& runs) {
  nlohmann::ordered_json j;
  j["machine"] = machine_name();
  j["date"] = today_utc();
  j["mode"] = full ? "full" : "quick";
  j["seed"] = std::stoll(seed);
  j["threads"] = std::stoi(threads);
  j["runs"] = nlohmann::ordered_json::array();
  for (const TimedRun& t : runs)
    j["runs"].push_back({{"id", t.run.id}, {"status", t.run.status}, {"seconds", t.run.seconds},
                         {"cpu_seconds", t.run.cpu_seconds}, {"load_average_at_start", t.load_at_start}});
  write_file_atomic(out + "/runs.json", j.dump(1) + "\n");
}

std::string pad(const std::string& s, std::size_t n) { return s.size() >= n ? s : s + std::string(n - s.size(), ' '); }

int run(const std::vector<std::string>& args) {
  bool full = false, pdf = false, slides = false;
  std::string seed = "0", threads = std::to_string(machine_threads()), out = "out", bin = self_dir();
  std::vector<std::string> only;
  double timeout = 0.0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= args.size()) throw UsageError(flag + " needs a value");
      return args[++i];
    };
    if (flag == "--full") full = true;
    else if (flag == "--pdf") pdf = true;
    else if (flag == "--slides") slides = true;
    else if (flag == "--seed") seed = std::to_string(integer_argument(flag, value(), 0, 1LL << 62));
    else if (flag == "--threads") threads = std::to_string(integer_argument(flag, value(), 1, 256));
    else if (flag == "--timeout") timeout = double(integer_argument(flag, value(), 1, 86400));
    else if (flag == "--out") out = value();
    else if (flag == "--bin") bin = value();
    else if (flag == "--only") only = course::only_list(value());
    else throw UsageError("unknown argument '" + flag + "'");
  }
  if (out.empty()) throw UsageError("--out needs a folder name");
  if (timeout == 0.0) timeout = full ? 1800.0 : 300.0;

  std::vector<std::string> ids = course::select_lessons(lesson_programs(bin), only, bin);
  if (ids.empty()) throw UsageError("no lesson programs (NN_name) in " + bin);

  if (const std::string why = make_dirs_or_why(out + "/logs"); !why.empty()) throw IoError("--out '" + out + "': " + why);
  const std::string mode = full ? "full runs" : "quick runs";
  std::cout << "attnlab: the course, " << ids.size() << " lessons (" << mode << ", seed " << seed << ", " << threads
            << (threads == "1" ? " thread" : " threads") << "), output in " << out << "/\n\n";
  std::vector<LessonRun> runs;
  std::vector<TimedRun> timed;  // the lessons, then gradcheck
  double total = 0.0, cpu = 0.0;
  for (std::size_t k = 0; k < ids.size(); ++k) {
    const std::string& id = ids[k];
    std::cout << "[" << k + 1 << "/" << ids.size() << "] " << pad(id, 28) << std::flush;
    std::vector<std::string> argv = {bin + "/" + id, "--seed", seed, "--threads", threads, "--out", out + "/" + id};
    if (!full) argv.push_back("--quick");
    if (pdf) argv.push_back("--pdf");
    const double load = lessons::load_average();
    const ProcessResult r = run_logged(argv, out + "/logs/" + id + ".log", timeout);
    total += r.seconds;
    runs.push_back({id, r.ok, r.status, r.seconds, r.cpu_seconds, "logs/" + id + ".log"});
    timed.push_back({runs.back(), load});
    cpu += r.cpu_seconds;
    std::cout << pad(r.status, 10) << " " << seconds_text(r.seconds) << " s" << std::endl;
  }

  // The gradient checks, for the book's page of them.
  std::string gradcheck_status = "not built";
  double gradcheck_seconds = 0.0, gradcheck_cpu = 0.0;
  if (executable(bin + "/gradcheck")) {
    std::cout << pad("gradcheck", 34) << std::flush;
    const double load = lessons::load_average();
    const ProcessResult r =
        run_logged({bin + "/gradcheck", "--json", out + "/gradcheck/gradcheck.json"}, out + "/logs/gradcheck.log", timeout);
    gradcheck_status = r.status;
    gradcheck_seconds = r.seconds;
    gradcheck_cpu = r.cpu_seconds;
    total += r.seconds;
    cpu += r.cpu_seconds;
    std::cout << pad(r.status, 10) << " " << seconds_text(r.seconds) << " s" << std::endl;
    timed.push_back({{"gradcheck", r.ok, r.status, r.seconds, r.cpu_seconds, "logs/gradcheck.log"}, load});
  }
  write_runs_json(out, full, seed, threads, timed);

  const std::vector<BookLesson> book = write_book(out, runs);

  // Each lesson that ran as slides (course/slides.hpp); a deck that cannot be made fails the run.
  int slides_failed = 0;
  if (slides) {
    for (const BookLesson& l : book) {
      if (!l.ok) continue;
      try {
        const Deck deck = make_deck(out, l.id, default_sources(), true);
        std::cout << pad("slides " + l.id, 34) << deck.slides << " slides, " << deck.pdf << std::endl;
      } catch (const std::exception& e) {
        ++slides_failed;
        std::cout << pad("slides " + l.id, 34) << "failed: " << e.what() << std::endl;
      }
    }
  }

  std::size_t w = 11, hw = 17;  // the lesson and headline columns, as wide as their widest entry ("gradcheck" too)
  auto headline_of = [](const BookLesson& l) {
    return l.headline_value ? l.headline + " = " + metric_text(*l.headline_value) : std::string("-");
  };
  for (const BookLesson& l : book) {
    w = std::max(w, l.id.size() + 2);
    hw = std::max(hw, headline_of(l).size() + 2);
  }
  // Wall time, and CPU time: on a shared machine the CPU time is what a lesson costs alone.
  std::cout << "\nSummary (" << mode << ", seed " << seed << "):\n\n  " << pad("lesson", w) << pad("status", 24)
            << pad("headline metric", hw) << pad("seconds", 9) << "CPU s\n";
  int failed = 0;
  for (const BookLesson& l : book) {
    std::cout << "  " << pad(l.id, w) << pad(l.status, 24) << pad(headline_of(l), hw) << pad(seconds_text(l.seconds), 9)
              << seconds_text(l.cpu_seconds) << "\n";
    failed += !l.ok;
  }
  std::cout << "  " << pad("gradcheck", w) << pad(gradcheck_status, 24) << pad("", hw)
            << pad(seconds_text(gradcheck_seconds), 9) << seconds_text(gradcheck_cpu) << "\n  " << pad("total", w)
            << pad("", 24 + hw) << pad(seconds_text(total), 9) << seconds_text(cpu) << "\n\n";
  std::cout << "The course book: " << out << "/index.html (open it in a browser; it needs no network).\n";
  if (failed) std::cout << failed << (failed == 1 ? " lesson" : " lessons") << " did not finish: see " << out << "/logs/.\n";
  if (slides_failed) std::cout << slides_failed << (slides_failed == 1 ? " deck" : " decks") << " of slides could not be made.\n";
  return failed || slides_failed || (gradcheck_status != "ok" && gradcheck_status != "not built") ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) { return run_program("course", kUsage, argc, argv, run); }
