// metric_spread: the mean and spread of every metric over several runs of one lesson (one folder
// per seed, as scripts/seeds.sh writes them).
//
//   metric_spread out/seeds/04_scaled_dot_product/full/seed_1 .../seed_2 .../seed_3
//
// One row per metric, the headline first: mean ± sd (sample standard deviation), min, max, and
// the seeds' count. Then the wall time of the runs, and every claim (lessons/story/claim.hpp) with
// the seeds it held on; a claim expected to hold that failed on any seed is listed as such, and
// the program then exits 1. A folder without metrics.json is an error.
//
//   metric_spread --reference lessons/reference/04_scaled_dot_product.json DIR...
//
// also writes the runs as the lesson's reference (lessons/story/reference.hpp): full runs only.
#include <algorithm>
#include <iostream>
#include <filesystem>
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
    "usage: metric_spread [--reference FILE] DIR... [--help] [--version]\n"
    "  DIR               a lesson's output folder, one per seed (scripts/seeds.sh writes them)\n"
    "  --reference FILE  also write the runs as the lesson's reference (full runs only)\n"
    "  Prints every metric's mean ± sd, min and max over the runs, the headline first, and how\n"
    "  many seeds each claim held on; exits 1 when a claim expected to hold failed on some seed.\n";

struct ClaimTally {
  std::string expect;
  std::vector<std::string> held_on, failed_on;  // seeds
};

int run(const std::vector<std::string>& args) {
  std::vector<std::string> dirs;
  std::string reference_file;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--reference") {
      if (i + 1 >= args.size()) throw UsageError("--reference needs a file name");
      reference_file = args[++i];
    } else if (args[i].rfind("--", 0) == 0) {
      throw UsageError("unknown argument '" + args[i] + "'");
    } else {
      dirs.push_back(args[i]);
    }
  }
  if (dirs.empty()) throw UsageError("no folders given");
  std::vector<std::string> claim_ids;
  std::map<std::string, ClaimTally> claims;
  std::vector<long long> seed_numbers;
  bool all_full = true;
  int threads = 1;
  std::vector<std::string> names;  // in the first run's order
  std::map<std::string, std::vector<double>> values;
  std::vector<double> seconds;
  std::vector<std::string> seeds;
  std::string lesson, headline, title, summary;
  for (const std::string& d : dirs) {
    const std::string file = d + "/metrics.json";
    Json m;
    try {
      m = Json::parse(read_file(file, "metric_spread"));
    } catch (const Json::exception& e) {
      throw std::runtime_error("'" + file + "' is not JSON: " + e.what());
    }
    if (lesson.empty()) lesson = m.value("lesson", "");
    if (m.value("lesson", "") != lesson)
      throw std::runtime_error(d + " is lesson " + m.value("lesson", "?") + ", not " + lesson);
    headline = m.value("headline", headline);
    if (title.empty() && std::filesystem::exists(d + "/story.json")) {  // what the lesson is, for docs/results.md and the README
      const Json story = Json::parse(read_file(d + "/story.json", "metric_spread"), nullptr, false);
      if (story.is_object()) title = story.value("title", ""), summary = story.value("summary", "");
    }
    seeds.push_back(m["seed"].dump());
    seed_numbers.push_back(m["seed"].get<long long>());
    const Json& c = m.value("configuration", Json::object());
    if (c.value("quick", false) || c.value("long", false)) all_full = false;
    threads = c.value("threads", threads);
    const Json run_claims = m.value("claims", Json::object());  // a copy: items() must not outlive it
    for (const auto& [id, v] : run_claims.items()) {
      if (!claims.count(id)) claim_ids.push_back(id);
      claims[id].expect = v.value("expect", "every_run");
      (v.value("held", false) ? claims[id].held_on : claims[id].failed_on).push_back(m["seed"].dump());
    }
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
    std::cout << pad(label, w) << "  " << pad(metric_text(mean_of(v)) + " ± " + metric_text(stdev(v)), 23) << " "
              << pad(metric_text(*std::min_element(v.begin(), v.end())), 12) << pad(metric_text(*std::max_element(v.begin(), v.end())), 12)
              << v.size() << "\n";
  }
  std::cout << "\n" << (headline.empty() ? "" : "* the headline. ") << "Wall time per run: " << metric_text(mean_of(seconds))
            << " ± " << metric_text(stdev(seconds)) << " s.\n";

  // The claims: on how many seeds each held; the ones that must hold and failed somewhere.
  int broken = 0;
  if (!claim_ids.empty()) {
    std::cout << "\nclaims (held on / runs):\n";
    for (const std::string& id : claim_ids) {
      const ClaimTally& t = claims[id];
      const bool must = t.expect == "every_run" || (t.expect == "full_run" && all_full);
      const bool bad = must && !t.failed_on.empty();
      broken += bad;
      std::cout << "  " << pad(id, w) << t.held_on.size() << " / " << t.held_on.size() + t.failed_on.size() << "  "
                << t.expect;
      if (!t.failed_on.empty()) {
        std::cout << (bad ? "  FAILED on seed" : "  other way on seed") << (t.failed_on.size() > 1 ? "s" : "");
        for (const std::string& s : t.failed_on) std::cout << " " << s;
      }
      std::cout << "\n";
    }
    if (broken)
      std::cout << broken << " claim" << (broken > 1 ? "s" : "") << " that must hold failed on some seed: reword "
                << (broken > 1 ? "them" : "it") << " to what holds on every seed, or fix the lesson.\n";
  }

  if (!reference_file.empty()) {
    if (!all_full) throw std::runtime_error("--reference: a reference is made of full runs; these include quick or long runs");
    Json r = Json::object();
    r["lesson"] = lesson;
    r["title"] = title;
    r["summary"] = summary;
    r["headline"] = headline;
    r["mode"] = "full";
    r["seeds"] = seed_numbers;
    r["machine"] = machine_name();
    r["date"] = today_utc();
    r["threads"] = threads;
    r["seconds"] = {{"mean", mean_of(seconds)}, {"sd", stdev(seconds)}};
    Json ms = Json::object();
    for (const std::string& n : names) {
      const std::vector<double>& v = values[n];
      ms[n] = {{"mean", mean_of(v)}, {"sd", stdev(v)}, {"min", *std::min_element(v.begin(), v.end())},
               {"max", *std::max_element(v.begin(), v.end())}, {"n", v.size()}};
    }
    r["metrics"] = ms;
    Json cs = Json::object();
    for (const std::string& id : claim_ids)
      cs[id] = {{"held", claims[id].held_on.size()}, {"of", claims[id].held_on.size() + claims[id].failed_on.size()},
                {"expect", claims[id].expect}};
    r["claims"] = cs;
    write_file_atomic(reference_file, r.dump(1) + "\n");
    std::cout << "\nWrote the reference " << reference_file << ".\n";
  }
  return broken ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) { return run_program("metric_spread", kUsage, argc, argv, run); }
