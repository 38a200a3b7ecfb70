// The lesson harness: command line, JSON, atomic files, the progress bar, report and metrics.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <unistd.h>

#include "lessons/common/cli.hpp"
#include "io/files.hpp"
#include "lessons/common/json.hpp"
#include "lessons/common/lesson.hpp"
#include "lessons/common/progress.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

namespace {
const LessonInfo kInfo{"99_test", "A test lesson", "Checks the harness."};

LessonArgs parse(std::vector<const char*> argv, bool& help) {
  argv.insert(argv.begin(), "99_test");
  return parse_args(static_cast<int>(argv.size()), argv.data(), kInfo, help);
}

std::string temp_dir() {
  char tmpl[] = "/tmp/attnlab_lesson_XXXXXX";
  const char* d = mkdtemp(tmpl);
  REQUIRE(d != nullptr);
  return d;
}
}  // namespace

TEST_CASE("command line: defaults, every flag, and bad input") {
  bool help = false;
  LessonArgs a = parse({}, help);
  CHECK_FALSE(a.quick);
  CHECK(a.epochs == 0);
  CHECK(a.seed == 0);
  CHECK(a.out == "out/99_test");
  CHECK(a.threads == 1);
  a = parse({"--quick", "--epochs", "3", "--seed", "42", "--out", "x/y", "--threads", "2"}, help);
  CHECK(a.quick);
  CHECK(a.epochs == 3);
  CHECK(a.seed == 42);
  CHECK(a.out == "x/y");
  CHECK(a.threads == 2);
  CHECK_FALSE(help);
  parse({"--help"}, help);
  CHECK(help);
  CHECK_THROWS_AS(parse({"--bogus"}, help), UsageError);
  CHECK_THROWS_AS(parse({"--epochs"}, help), UsageError);
  CHECK_THROWS_AS(parse({"--epochs", "zero"}, help), UsageError);
  CHECK_THROWS_AS(parse({"--epochs", "0"}, help), UsageError);
  CHECK_THROWS_AS(parse({"--seed", "-1"}, help), UsageError);
  CHECK_THROWS_AS(parse({"--threads", "2x"}, help), UsageError);
  CHECK(usage(kInfo).find("--quick") != std::string::npos);
}

TEST_CASE("json: writes and reads back exactly, keys in order") {
  Json j = Json::object();
  j.set("lesson", "01");
  j.set("pi", 3.141592653589793);
  j.set("third", 1.0 / 3.0);
  j.set("list", Json::array({1, 2.5, "été"}));
  j.set("flag", true);
  j.set("nothing", Json());
  Json nested = Json::object();
  nested.set("a", 1);
  j.set("nested", nested);
  const Json back = Json::parse(j.dump());
  CHECK(back == j);
  CHECK(back["third"].as_number() == 1.0 / 3.0);
  CHECK(back["list"].items()[2].as_string() == "été");
  CHECK(back.members()[0].first == "lesson");
  CHECK_THROWS(Json::parse("{\"a\": }"));
  CHECK_THROWS(Json::parse("[1, 2"));
  CHECK_THROWS(Json::parse("{} extra"));
  CHECK_THROWS(back["missing"]);
}

TEST_CASE("progress: plain periodic lines when not a terminal") {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  {
    Progress p(100, "train", f, false);
    for (int i = 0; i < 100; ++i) p.step(1.0);
    CHECK(p.running_loss() == doctest::Approx(1.0));
  }
  std::fclose(f);
  const std::string out(buf, len);
  free(buf);
  int lines = 0;
  for (char c : out) lines += c == '\n';
  CHECK(lines == 10);
  CHECK(out.find("100%") != std::string::npos);
  CHECK(out.find("ETA") != std::string::npos);
}

TEST_CASE("a lesson writes report.md and metrics.json with its story, metrics and figures") {
  LessonArgs args;
  args.out = temp_dir() + "/lesson";
  args.seed = 5;
  Lesson L(kInfo, args);
  L.section("1. Setup");
  L.say("Some words.");
  L.table({"a", "max |x|"}, {{"1", "2"}});
  L.matrix("M", {{1.0, 2.0}, {3.0, 4.0}}, {"r1", "r2"}, {"c1", "c2"});
  L.figure("fig", "A figure");
  L.config("hidden", 64);
  L.metric("accuracy", 0.75);
  L.timing("ms_per_step", 1.5);
  CHECK(L.finish() == 0);
  const std::string report = read_file(args.out + "/report.md");
  CHECK(report.find("## 1. Setup") != std::string::npos);
  CHECK(report.find("![A figure](fig.png)") != std::string::npos);
  CHECK(report.find("| accuracy | 0.7500 |") != std::string::npos);
  CHECK(report.find("| a | max \\|x\\| |") != std::string::npos);  // a '|' in a cell is escaped
  const Json m = Json::parse(read_file(args.out + "/metrics.json"));
  CHECK(m["lesson"].as_string() == "99_test");
  CHECK(m["seed"].as_number() == 5);
  CHECK(m["metrics"]["accuracy"].as_number() == 0.75);
  CHECK(m["configuration"]["hidden"].as_number() == 64);
  CHECK(m["figures"].items().size() == 2);
  CHECK(m["timings"]["ms_per_step"].as_number() == 1.5);
  CHECK(m["timings"].has("seconds"));
}
