// metric_spread: the mean and spread of every metric over several runs of one lesson (one folder
// per seed, as scripts/seeds.sh writes them).
//
//   metric_spread out/seeds/04_scaled_dot_product/full/seed_1 .../seed_2 .../seed_3
//
// One row per metric, the headline first: mean ± sd (sample standard deviation), min, max, and
// the seeds' count. Then the wall time of the runs. A folder without metrics.json is an error.
#include <algorithm>
#include <iostream>
#include <map>

#include "course/book.hpp"
#include "io/files.hpp"
#include "io/program.hpp"
#include "lessons/story/lesson.hpp"
#include "lessons/story/stats.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::course::metric_text;

namespace {

constexpr const char* kUsage =
    "usage: metric_spread DIR... [--help] [--version]\n"
    "  DIR   a lesson's output folder, one per seed (scripts/seeds.sh writes them)\n"
    "  Prints every metric's mean ± sd, min and max over the runs, the headline first.\n";

int run(const std::vector<std::string>& dirs) {
  if (dirs.empty()) throw UsageError("no folders given");
  for (const std::string& d : dirs)
    if (d.rfind("--", 0) == 0) throw UsageError("unknown argument '" + d + "'");
  std::vector<std::string> names;  // in the first run's order
  std::map<std::string, std::vector<double>> values;
  std::vector<double> seconds;
  std::vector<std::string> seeds;
  std::string lesson, headline;
  for (const std::string& d : dirs) {
    const Json m = Json::parse(read_file(d + "/metrics.json", "metric_spread"));
    if (lesson.empty()) lesson = m.value("lesson", "");
    if (m.value("lesson", "") != lesson)
      throw std::runtime_error(d + " is lesson " + m.value("lesson", "?") + ", not " + lesson);
    headline = m.value("headline", headline);
    seeds.push_back(m["seed"].dump());
    for (const auto& [k, v] : m["metrics"].items()) {
      if (!values.count(k)) names.push_back(k);
      values[k].push_back(v.get<double>());
    }
    seconds.push_back(m["timings"].value("seconds", 0.0));
  }
  if (!headline.empty()) {
    const auto it = std::find(names.begin(), names.end(), headline);
    if (it != names.end()) std::rotate(names.begin(), it, it + 1);
  }
  std::size_t w = 6;
  for (const std::string& n : names) w = std::max(w, n.size() + 2);
  std::cout << lesson << " over " << dirs.size() << " runs (seeds";
  for (const std::string& s : seeds) std::cout << " " << s;
  std::cout << ")\n\n";
  auto pad = [](std::string s, std::size_t n) { return s.size() >= n ? s : s + std::string(n - s.size(), ' '); };
  std::cout << pad("metric", w) << "  " << pad("mean ± sd", 24) << pad("min", 12) << pad("max", 12) << "runs\n";
  for (const std::string& n : names) {
    const std::vector<double>& v = values[n];
    const std::string label = n == headline ? n + " *" : n;
    std::cout << pad(label, w) << "  " << pad(metric_text(mean(v)) + " ± " + metric_text(stdev(v)), 23) << " "
              << pad(metric_text(*std::min_element(v.begin(), v.end())), 12) << pad(metric_text(*std::max_element(v.begin(), v.end())), 12)
              << v.size() << "\n";
  }
  std::cout << "\n" << (headline.empty() ? "" : "* the headline. ") << "Wall time per run: " << metric_text(mean(seconds))
            << " ± " << metric_text(stdev(seconds)) << " s.\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_program("metric_spread", kUsage, argc, argv, run); }
