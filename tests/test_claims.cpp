// Claims as data (lessons/story/claim.hpp): the condition language, the sentence said for each
// outcome, story.json and metrics.json, lesson_check failing a run whose promised claim does not
// hold (or whose record was altered), metric_spread counting claims over seeds and writing a
// reference; and formulas in prose (lessons/story/math.hpp).
#include <doctest/doctest.h>

#include <cstdlib>
#include <string>

#include "io/files.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/story/condition.hpp"
#include "lessons/story/math.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
using attnlab::testing::contains;
using attnlab::testing::kHaveCourse;
using attnlab::testing::TempDir;

namespace {

Lookup table_of(std::vector<std::pair<std::string, double>> values) {
  return [values](const std::string& name) -> std::optional<double> {
    for (const auto& [k, v] : values)
      if (k == name) return v;
    return std::nullopt;
  };
}

int shell(const std::string& command) { return std::system((command + " > /dev/null 2>&1").c_str()); }

const std::string kBin = ATTNLAB_BIN_DIR;

// A lesson that makes three claims: one that holds, one promised in full runs that fails, and one
// that may go either way and does not.
void claims_lesson(const std::string& out, bool quick, double accuracy, std::uint64_t seed = 3) {
  LessonArgs a;
  a.out = out;
  a.quick = quick;
  a.seed = seed;
  Lesson L({"99_claims", "Claims", "A lesson that claims.", "acc_h4"}, a);
  section("1. Heads");
  say("A paragraph long enough that lesson_check believes the report is one: the lesson trains two models and "
      "compares them, then says what it measured, sentence by sentence, each tied to its numbers.");
  plots::Figure fig(400, 300);
  bar_panel(fig.panel(0), {"1 head", "4 heads"}, {{"accuracy", {0.4, accuracy}}});
  save_figure(fig, "bars", "Accuracy by head count");
  metric("acc_h1", 0.40);
  metric("acc_h4", accuracy);
  claim({"four_beat_one", "acc_h4 >= acc_h1 + 0.2", "Four heads beat one.", "Four heads did not beat one."});
  claim({"near_perfect", "acc_h4 >= 0.99", "Four heads are near perfect.", "Four heads stay below 0.99.",
         Expect::full_run});
  claim({"offsets", "covered == 3", "Every offset has its head.", "Some offset has no head of its own.",
         Expect::either_way, {{"covered", 2}}});
  L.finish();
}

}  // namespace

TEST_CASE("conditions: arithmetic, comparisons, and/or/not, functions, and errors that say where") {
  const Lookup v = table_of({{"a", 0.5}, {"b", 0.25}, {"acc_h4", 1.0}});
  CHECK(evaluate("a + b * 2", v) == doctest::Approx(1.0));
  CHECK(evaluate("(a + b) * 2", v) == doctest::Approx(1.5));
  CHECK(evaluate("-a - -b", v) == doctest::Approx(-0.25));
  CHECK(evaluate("a / b", v) == doctest::Approx(2.0));
  CHECK(evaluate("2e-3 * 1000", v) == doctest::Approx(2.0));
  CHECK(holds("acc_h4 >= 0.99 and a > b", v));
  CHECK_FALSE(holds("acc_h4 < 0.99 or a <= b", v));
  CHECK(holds("not a < b", v));
  CHECK(holds("a != b and a == 0.5", v));
  CHECK(holds("abs(b - a) == 0.25 and max(a, b, 3) == 3 and min(a, b) == b and sqrt(4) == 2", v));
  CHECK(holds("android_ < 1 or 1", table_of({{"android_", 0}})));  // a name that starts like "and"
  CHECK(names_in("acc_h4 >= acc_h1 + 0.2 and abs(acc_h4 - x) < x") == std::vector<std::string>{"acc_h4", "acc_h1", "x"});

  CHECK_THROWS_WITH_AS(evaluate("a + c", v), doctest::Contains("no number named 'c' at column 5"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(evaluate("a >= ", v), doctest::Contains("ends early"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(evaluate("(a + b", v), doctest::Contains("missing ')'"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(evaluate("a b", v), doctest::Contains("unexpected 'b'"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(evaluate("log(a)", v), doctest::Contains("unknown function 'log'"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(evaluate("abs(a, b)", v), doctest::Contains("abs takes 1 argument"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(evaluate("a and", v), doctest::Contains("ends early"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(evaluate("and a", v), doctest::Contains("'and' where a value belongs"), std::invalid_argument);
}

TEST_CASE("formulas: split from the prose, and shown plain on the console") {
  const auto pieces = split_math("The weights $A = \\mathrm{softmax}(S)$ cost \\$5, and $$x^2$$ too.");
  REQUIRE(pieces.size() == 5);
  CHECK(pieces[0].kind == TextPiece::prose);
  CHECK(pieces[0].content == "The weights ");
  CHECK(pieces[1].kind == TextPiece::inline_math);
  CHECK(pieces[1].content == "A = \\mathrm{softmax}(S)");
  CHECK(pieces[2].content == " cost $5, and ");
  CHECK(pieces[3].kind == TextPiece::display_math);
  CHECK(pieces[3].content == "x^2");
  CHECK_THROWS_WITH_AS(split_math("a $x + 1"), doctest::Contains("never closed"), std::invalid_argument);

  CHECK(plain_math("$\\mathrm{softmax}(QK^\\top / \\sqrt{d_k})$") == "softmax(QKᵀ / √d_k)");
  CHECK(plain_math("$\\frac{1}{\\sqrt{d_k}}$") == "1/√d_k");
  CHECK(plain_math("$\\frac{a + b}{2}$") == "(a + b)/2");
  CHECK(plain_math("$x^2 + y^{n+1}$, $\\sigma^{2}$") == "x² + yⁿ⁺¹, σ²");
  CHECK(plain_math("$e^{-x/2}$") == "e^(-x/2)");
  CHECK(plain_math("$\\alpha \\cdot \\beta \\le \\gamma$") == "α · β ≤ γ");
  CHECK(plain_math("$\\sum_{j} a_{ij} v_j$") == "Σ_j a_ij v_j");
  CHECK(plain_math("$\\text{PE}(p, 2i)$ and $\\hat{y}$") == "PE(p, 2i) and y\u0302");
  CHECK(plain_math("no math, just \\$3") == "no math, just $3");
  CHECK(plain_math("$\\unknownmacro x$") == "unknownmacro x");
}

TEST_CASE("plus_minus: the sd to two significant digits from 1 to 2.9, one from 3, the mean to the same place") {
  CHECK(plus_minus(0.90134, 0.00213) == "0.9013 ± 0.0021");
  CHECK(plus_minus(0.90134, 0.0294) == "0.901 ± 0.029");
  CHECK(plus_minus(0.39, 0.41) == "0.4 ± 0.4");
  CHECK(plus_minus(0.867, 0.059) == "0.87 ± 0.06");
  CHECK(plus_minus(120.123, 4.2) == "120 ± 4");
  CHECK(plus_minus(120.123, 14.2) == "120 ± 14");
  CHECK(plus_minus(8.8e-11, 6.7e-11) == "8.8e-11 ± 7e-11");  // below 1e-4: scientific, not 0.00000000
  CHECK(plus_minus(3.04e-16, 0.81e-16) == "3.0e-16 ± 8e-17");
  CHECK(plus_minus(3.04e-16, 2.1e-17) == "3.0e-16 ± 2.1e-17");
  CHECK(plus_minus(0.997, 0.0) == "0.997 ± 0");
}

TEST_CASE("a claim says the sentence that matches the outcome and records its numbers") {
  TempDir d;
  claims_lesson(d / "run", false, 1.0);
  const Json story = Json::parse(read_file(d / "run/story.json"));
  std::vector<Json> claims;
  for (const Json& b : story["blocks"])
    if (b["kind"] == "claim") claims.push_back(b);
  REQUIRE(claims.size() == 3);
  CHECK(claims[0]["id"] == "four_beat_one");
  CHECK(claims[0]["held"] == true);
  CHECK(claims[0]["text"] == "Four heads beat one.");
  CHECK(claims[0]["numbers"] == Json{{"acc_h4", 1.0}, {"acc_h1", 0.40}});
  CHECK(claims[0]["expect"] == "every_run");
  CHECK(claims[1]["held"] == true);
  CHECK(claims[2]["held"] == false);
  CHECK(claims[2]["text"] == "Some offset has no head of its own.");
  CHECK(claims[2]["numbers"] == Json{{"covered", 2.0}});
  const Json m = Json::parse(read_file(d / "run/metrics.json"));
  CHECK(m["claims"]["near_perfect"] == Json{{"held", true}, {"expect", "full_run"}});
  const std::string report = read_file(d / "run/report.md");
  CHECK(contains(report, "Four heads beat one.\n\n> *Claim `four_beat_one` holds: `acc_h4 >= acc_h1 + 0.2`"));
  CHECK(contains(report, "Claims: 3 of 3 held or went as the run says."));
  CHECK(shell(kBin + "/lesson_check '" + (d / "run") + "'") == 0);
}

TEST_CASE("a claim that reads an unrecorded number, or is made twice, is the lesson's bug") {
  TempDir d;
  LessonArgs a;
  a.out = d / "x";
  Lesson L({"99_claims", "Claims", "x"}, a);
  CHECK_THROWS_WITH_AS(claim({"c", "missing > 1", "yes", "no"}), doctest::Contains("no metric or number named 'missing'"),
                       std::logic_error);
  CHECK_THROWS_WITH_AS(claim({"c", "1 >", "yes", "no"}), doctest::Contains("ends early"), std::logic_error);
  CHECK_THROWS_WITH_AS(claim({"c", "1 > 0", "yes", ""}), doctest::Contains("both wordings"), std::logic_error);
  CHECK(claim({"c", "1 > 0", "yes", "no"}));
  CHECK_THROWS_WITH_AS(claim({"c", "1 > 0", "yes", "no"}), doctest::Contains("made twice"), std::logic_error);
}

TEST_CASE("lesson_check fails a run whose promised claim does not hold, or whose record was altered") {
  TempDir d;
  const std::string check = kBin + "/lesson_check ";
  // Quick run, accuracy 0.95: four_beat_one holds, near_perfect (full_run) fails, which a quick run may.
  claims_lesson(d / "quick", true, 0.95);
  CHECK(shell(check + "'" + (d / "quick") + "'") == 0);
  // The same numbers in a full run: near_perfect was promised there.
  claims_lesson(d / "full", false, 0.95);
  CHECK(shell(check + "'" + (d / "full") + "'") != 0);
  // A story that embeds a page the folder does not hold.
  claims_lesson(d / "page", true, 0.95);
  std::string with_page = read_file(d / "page/story.json");
  const auto blocks = with_page.find("\"blocks\": [");
  REQUIRE(blocks != std::string::npos);
  with_page.insert(blocks + 11, "{\"kind\": \"page\", \"file\": \"explorer.html\", \"caption\": \"x\"}, ");
  write_file_atomic(d / "page/story.json", with_page);
  CHECK(shell(check + "'" + (d / "page") + "'") != 0);
  write_file_atomic(d / "page/explorer.html", "<!DOCTYPE html><title>x</title>");
  CHECK(shell(check + "'" + (d / "page") + "'") == 0);
  // An every-run claim that fails fails even a quick run.
  claims_lesson(d / "broken", true, 0.5);
  CHECK(shell(check + "'" + (d / "broken") + "'") != 0);
  // A record altered after the run: the verdict no longer follows from its numbers.
  claims_lesson(d / "edited", false, 1.0);
  std::string story = read_file(d / "edited/story.json");
  const auto at = story.find("\"acc_h4\": 1.0");
  REQUIRE(at != std::string::npos);
  story.replace(at, 13, "\"acc_h4\": 0.1");
  write_file_atomic(d / "edited/story.json", story);
  CHECK(shell(check + "'" + (d / "edited") + "'") != 0);
  // --same-as a run of the same seed: an either_way claim may come out otherwise (it may rest on
  // timings), an every_run claim may not.
  claims_lesson(d / "again", true, 0.95);
  CHECK(shell(check + "'" + (d / "quick") + "' --same-as '" + (d / "again") + "'") == 0);
  Json again = Json::parse(read_file(d / "again/metrics.json"));
  REQUIRE(again["claims"]["offsets"]["held"] == false);
  again["claims"]["offsets"]["held"] = true;
  write_file_atomic(d / "again/metrics.json", again.dump(2));
  CHECK(shell(check + "'" + (d / "quick") + "' --same-as '" + (d / "again") + "'") == 0);
  // So may a full_run claim in a quick run (it may rest on timings or page faults, as lesson 17's
  // fused_fresh_pages does); its numbers are still compared.
  again["claims"]["near_perfect"]["held"] = !again["claims"]["near_perfect"]["held"].get<bool>();
  write_file_atomic(d / "again/metrics.json", again.dump(2));
  CHECK(shell(check + "'" + (d / "quick") + "' --same-as '" + (d / "again") + "'") == 0);
  again["claims"]["four_beat_one"]["held"] = false;
  write_file_atomic(d / "again/metrics.json", again.dump(2));
  CHECK(shell(check + "'" + (d / "quick") + "' --same-as '" + (d / "again") + "'") != 0);
  // --same-as a folder whose metrics do not parse: the error names that file, not the good run.
  make_dirs(d / "junk");
  write_file_atomic(d / "junk/metrics.json", "{ not json");
  const std::string log = d / "same.log";
  CHECK(std::system((check + "'" + (d / "quick") + "' --same-as '" + (d / "junk") + "' > '" + log + "' 2>&1").c_str()) != 0);
  CHECK(contains(read_file(log), "'" + (d / "junk/metrics.json") + "' is not JSON"));
}

TEST_CASE("metric_spread: claims counted over seeds, a promised one that failed on a seed named, a reference written"
          * doctest::skip(!kHaveCourse)) {
  TempDir d;
  claims_lesson(d / "s1", false, 1.0, 1);
  claims_lesson(d / "s2", false, 1.0, 2);
  const std::string ref = d / "ref.json";
  CHECK(shell(kBin + "/metric_spread --reference '" + ref + "' '" + (d / "s1") + "' '" + (d / "s2") + "'") == 0);
  const Json r = Json::parse(read_file(ref));
  CHECK(r["lesson"] == "99_claims");
  CHECK(r["title"] == "Claims");  // what scripts/results.py lists the lesson as
  CHECK(r["headline"] == "acc_h4");
  CHECK(r["seeds"] == Json{1, 2});
  CHECK(r["metrics"]["acc_h4"]["mean"] == 1.0);
  CHECK(r["metrics"]["acc_h4"]["n"] == 2);
  CHECK(r["claims"]["four_beat_one"] == Json{{"held", 2}, {"of", 2}, {"expect", "every_run"}});
  CHECK(r["claims"]["offsets"]["held"] == 0);
  CHECK(contains(r["machine"].get<std::string>(), "CPUs"));

  claims_lesson(d / "s3", false, 0.95, 3);  // near_perfect fails on seed 3
  const std::string log = d / "spread.log";
  CHECK(std::system((kBin + "/metric_spread '" + (d / "s1") + "' '" + (d / "s3") + "' > '" + log + "' 2>&1").c_str()) != 0);
  CHECK(contains(read_file(log), "FAILED on seed 3"));
  // A quick run is no reference.
  claims_lesson(d / "q", true, 1.0, 4);
  CHECK(shell(kBin + "/metric_spread --reference '" + ref + "' '" + (d / "q") + "'") != 0);
  // A file that is not JSON is named.
  make_dirs(d / "junk");
  write_file_atomic(d / "junk/metrics.json", "{ not json");
  CHECK(std::system((kBin + "/metric_spread '" + (d / "junk") + "' > '" + log + "' 2>&1").c_str()) != 0);
  CHECK(contains(read_file(log), "junk/metrics.json' is not JSON"));
}
