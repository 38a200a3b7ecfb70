// The course book and the course runner: escaping, pages from a story, a run with a failing and a
// hanging lesson, and the book in a real browser (headless Chromium, Debian's `chromium`): every
// image loaded, the lesson's headings there, and a missing figure caught. Then the questions to
// think about (answers only in the teacher's copy) and the slides, printed to PDF and rendered
// page by page with poppler (pdfinfo, pdftoppm).
#include <doctest/doctest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include <nlohmann/json.hpp>

#include "course/book.hpp"
#include "course/html.hpp"
#include "course/lesson_ids.hpp"
#include "course/markdown.hpp"
#include "course/questions.hpp"
#include "course/slides.hpp"
#include "io/files.hpp"
#include "io/program.hpp"
#include "lessons/story/book_layout.hpp"
#include "lessons/story/math.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::course;
using attnlab::testing::contains;
using attnlab::testing::TempDir;
using Json = nlohmann::ordered_json;
namespace fs = std::filesystem;
namespace book = attnlab::lessons::book;

namespace {

const std::string kBin = ATTNLAB_BIN_DIR;

int shell(const std::string& cmd) {
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// A lesson's output folder as lessons/story writes it, with hostile text everywhere. (Arrays of
// two strings are spelled Json::array: braces alone would make them a key and its value.)
void write_lesson(const std::string& dir) {
  make_dirs(dir);
  const Json story = {
      {"lesson", "98_escapes"}, {"title", "Escapes <b>&</b>"}, {"summary", "A \"summary\" with 'quotes'"},
      {"quick", true}, {"seed", 3}, {"headline", "accuracy"},
      {"blocks",
       {{{"kind", "section"}, {"title", "1. Scores <script>alert(1)</script>"}},
        {{"kind", "text"}, {"text", "a < b && c > d, <eos> stays text"}},
        {{"kind", "verbatim"}, {"text", "x = <tag>\n"}},
        {{"kind", "table"}, {"header", Json::array({"a|b", "<th>"})}, {"rows", Json::array({Json::array({"1.5", "</td>"})})}},
        {{"kind", "matrix"}, {"name", "M <1>"}, {"row_labels", {"r&1"}}, {"col_labels", Json::array({"c\"1", "c2"})},
         {"values", Json::array({Json::array({"0.50", "-1.00"})})}},
        {{"kind", "figure"}, {"stem", "fig one"}, {"caption", "A \"figure\" <here> of $\\sqrt{d_k}$"},
         {"files", Json::array({"fig one.png", "fig one.svg"})}},
        {{"kind", "page"}, {"file", "explorer.html"}, {"caption", "The explorer of $A$"}},
        {{"kind", "text"}, {"text", "The weights $A = \\mathrm{softmax}(QK^\\top / \\sqrt{d_k})$ sum to one: "
                                    "$$\\sum_j A_{ij} = 1$$ and cost \\$0."}},
        {{"kind", "claim"}, {"id", "c_held"}, {"when", "accuracy >= 0.8"}, {"expect", "every_run"},
         {"numbers", {{"accuracy", 0.875}}}, {"held", true}, {"text", "It learned the task <well>."}},
        {{"kind", "claim"}, {"id", "c_unseen"}, {"when", "accuracy >= 0.99"}, {"expect", "full_run"},
         {"numbers", {{"accuracy", 0.875}}}, {"held", false}, {"text", "Not near perfect in this quick run."}},
        {{"kind", "claim"}, {"id", "c_broken"}, {"when", "accuracy >= 0.95"}, {"expect", "every_run"},
         {"numbers", {{"accuracy", 0.875}}}, {"held", false}, {"text", "Below what every run should reach."}},
        {{"kind", "claim"}, {"id", "c_either"}, {"when", "heads == 1"}, {"expect", "either_way"},
         {"numbers", {{"heads", 2}}}, {"held", false}, {"text", "Two heads were needed this time."}}}},
      {"reference",
       {{"lesson", "98_escapes"}, {"seeds", Json::array({1, 2, 3})}, {"machine", "Test CPU, 2 CPUs"}, {"date", "2026-11-26"},
        {"metrics", {{"accuracy", {{"mean", 0.9}, {"sd", 0.01}, {"min", 0.89}, {"max", 0.91}, {"n", 3}}}}},
        {"claims", {{"c_held", {{"held", 3}, {"of", 3}, {"expect", "every_run"}}}}}}}};
  const Json metrics = {{"lesson", "98_escapes"}, {"metrics", {{"loss", 0.25}, {"accuracy", 0.875}}},
                        {"timings", {{"seconds", 2.5}}}, {"headline", "accuracy"}};
  write_file_atomic(dir + "/story.json", story.dump());
  write_file_atomic(dir + "/metrics.json", metrics.dump());
}

// What headless Chromium makes of a page: the DOM after every script ran (or a screenshot).
std::string chromium() {
  for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
    if (::access(p, X_OK) == 0) return p;
  return "";
}

// Runs a shell command, returning what it printed (stdout).
std::string output_of(const std::string& cmd) {
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[65536];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

std::string browser(const std::string& what, const std::string& page, const std::string& profile) {
  return output_of(chromium() +
                   " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                   " --disable-background-networking --disable-component-update --disable-sync"
                   " --hide-scrollbars --virtual-time-budget=15000 --user-data-dir='" + profile + "' " + what +
                   " 'file://" + page + "' 2>/dev/null");
}

std::string unescape(std::string s) {
  for (const auto& [entity, c] : std::vector<std::pair<std::string, std::string>>{
           {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&nbsp;", " "}, {"&amp;", "&"}})
    for (std::size_t at; (at = s.find(entity)) != std::string::npos;) s.replace(at, entity.size(), c);
  return s;
}

std::string attribute(const std::string& dom, const std::string& name) {
  const std::string key = name + "=\"";
  const auto at = dom.find(key);
  if (at == std::string::npos) return "";
  return unescape(dom.substr(at + key.size(), dom.find('"', at + key.size()) - at - key.size()));
}

// Empty when the rendered page shows `images` images, every one loaded (the page's own script
// counts naturalWidth > 0), and every heading as an <h2>; else what is wrong.
std::string page_problems(const std::string& dom, std::size_t images, const std::vector<std::string>& headings) {
  std::string problems;
  const std::string counted = attribute(dom, "data-images");
  if (counted != std::to_string(images) + "/" + std::to_string(images))
    problems += "images loaded/total: '" + counted + "', expected " + std::to_string(images) + " of " +
                std::to_string(images) + "; missing: " + attribute(dom, "data-missing") + ". ";
  std::vector<std::string> h2;
  for (std::size_t at = 0; (at = dom.find("<h2", at)) != std::string::npos;) {
    const auto open = dom.find('>', at) + 1, close = dom.find("</h2>", open);
    h2.push_back(unescape(dom.substr(open, close - open)));
    at = close;
  }
  for (const std::string& h : headings)
    if (std::find(h2.begin(), h2.end(), h) == h2.end()) problems += "no heading '" + h + "'. ";
  return problems;
}

}  // namespace

TEST_CASE("escaping: the five characters that open or end markup, and URLs of file names") {
  CHECK(escape("<script>alert('x') & \"q\"</script>") ==
        "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;q&quot;&lt;/script&gt;");
  CHECK(escape("plain text, ü and ±") == "plain text, ü and ±");
  CHECK(url("04_a/fig one.png") == "04_a/fig%20one.png");
  CHECK(url("a\"b<c>.png") == "a%22b%3Cc%3E.png");
  CHECK(url("é") == "%C3%A9");
  CHECK(looks_numeric("0.9650"));
  CHECK(looks_numeric("1.6x"));
  CHECK(looks_numeric("0.89 ± 0.01"));
  CHECK_FALSE(looks_numeric("dot"));
  CHECK_FALSE(looks_numeric(""));
}

TEST_CASE("a lesson's page: every kind of block, all text escaped, the headline first") {
  TempDir d;
  write_lesson(d / "98_escapes");
  const auto lessons = write_book(d.path);
  REQUIRE(lessons.size() == 1);
  CHECK(lessons[0].title == "Escapes <b>&</b>");
  CHECK(*lessons[0].headline_value == 0.875);
  CHECK(lessons[0].figures == 1);
  const std::string page = read_file(d / "98_escapes.html");
  CHECK(contains(page, "<h1>98_escapes: Escapes &lt;b&gt;&amp;&lt;/b&gt;</h1>"));
  CHECK(contains(page, "<h2 id=\"s1\">1. Scores &lt;script&gt;alert(1)&lt;/script&gt;</h2>"));
  CHECK_FALSE(contains(page, "<script>alert"));
  CHECK(contains(page, "<p>a &lt; b &amp;&amp; c &gt; d, &lt;eos&gt; stays text</p>"));
  CHECK(contains(page, "<pre>x = &lt;tag&gt;\n</pre>"));
  CHECK(contains(page, "<th>&lt;th&gt;</th>"));
  CHECK(contains(page, "<td class=\"num\">1.5</td><td>&lt;/td&gt;</td>"));
  CHECK(contains(page, "<th>r&amp;1</th>"));
  CHECK(contains(page, "<th class=\"num\">c&quot;1</th>"));
  CHECK(contains(page, "<img src=\"98_escapes/fig%20one.png\" alt=\"A &quot;figure&quot; &lt;here&gt; of √d_k\">"));
  // A caption's formula is typeset like the prose's.
  CHECK(contains(page, "<figcaption>A &quot;figure&quot; &lt;here&gt; of <span class=\"math\" data-tex=\"\\sqrt{d_k}\">√d_k</span>"));
  CHECK(contains(page, "href=\"98_escapes/fig%20one.svg\">SVG</a>"));
  // A lesson's interactive page, embedded, its caption typeset, a link to open it whole.
  CHECK(contains(page, "<figure class=\"page\"><iframe src=\"98_escapes/explorer.html\" title=\"The explorer of A\""));
  CHECK(contains(page, "<a href=\"98_escapes/explorer.html\">open full page</a>"));
  CHECK(page.find("accuracy (headline)") < page.find("<td>loss</td>"));  // the headline first
  CHECK(contains(page, "<a href=\"#metrics\">Metrics</a>"));
  // Formulas handed to KaTeX with their plain form inside, prose escaped, \$ a dollar sign.
  CHECK(contains(page, "<span class=\"math\" data-tex=\"A = \\mathrm{softmax}(QK^\\top / \\sqrt{d_k})\">A = softmax(QKᵀ / √d_k)</span>"));
  CHECK(contains(page, "<div class=\"math display\" data-tex=\"\\sum_j A_{ij} = 1\">"));
  CHECK(contains(page, " and cost $0."));
  CHECK(contains(page, "katex/katex.min.js"));
  // Claims: the sentence said, its verdict, the numbers folded beneath, the reference's count.
  CHECK(contains(page, "<div class=\"claim held\" data-claim=\"c_held\"><p>It learned the task &lt;well&gt;.</p>"));
  CHECK(contains(page, "✓ measured in this run"));
  CHECK(contains(page, "holds when <code>accuracy &gt;= 0.8</code>; measured accuracy = 0.875; in the reference full runs it held on 3 of 3 seeds."));
  // A full_run claim a quick run did not show is left to the full run, neutrally; an every_run
  // claim that did not hold is marked as not seen.
  CHECK(contains(page, "<div class=\"claim fullrun\" data-claim=\"c_unseen\">"));
  CHECK(contains(page, "◦ shown by the full run (this quick run is too small to show it)"));
  CHECK(contains(page, "<div class=\"claim unseen\" data-claim=\"c_broken\">"));
  CHECK(contains(page, "✗ not seen in this run"));
  CHECK(contains(page, "<div class=\"claim either\" data-claim=\"c_either\">"));
  CHECK(contains(page, "4 claims, each tied to the numbers it rests on: 1 measured in this run, 1 went the other way (an outcome that varies with the seed), 1 shown by the full run only (this quick run is too small), <span class=\"failed\">1 not seen in this run</span>"));
  // This run beside the reference, the run's kind said wherever its numbers are.
  CHECK(contains(page, "quick run, seed 3"));
  CHECK(contains(page, "the full lesson reaches <strong>0.900 ± 0.010</strong> (full run, mean ± sd over seeds 1, 2, 3 (Test CPU, 2 CPUs, 2026-11-26))"));
  CHECK(contains(page, "<td class=\"num\">0.875</td><td class=\"num\">0.900 ± 0.010</td>"));
  const std::string index = read_file(d / "index.html");
  CHECK(contains(index, "accuracy = 0.875"));
  CHECK(contains(index, "full run: 0.900 ± 0.010"));
  CHECK(contains(index, "quick run, seed 3"));
  CHECK(contains(index, "<a href=\"98_escapes.html\">98_escapes</a>"));
  CHECK_FALSE(fs::exists(d / "gradcheck.html"));  // no gradcheck table, no page
}

TEST_CASE("a failed lesson's page shows its status and the end of its log, not an older output") {
  TempDir d;
  write_lesson(d / "98_escapes");
  make_dirs(d / "logs");
  write_file_atomic(d / "logs/98_escapes.log", "line 1\n98_escapes: error: matmul: inner dimensions <differ>\n");
  const auto lessons = write_book(d.path, {{"98_escapes", false, "failed (exit 1)", 1.5, 0.5, "logs/98_escapes.log"}});
  REQUIRE(lessons.size() == 1);
  CHECK_FALSE(lessons[0].ok);
  CHECK_FALSE(lessons[0].headline_value);
  const std::string page = read_file(d / "98_escapes.html");
  CHECK(contains(page, "failed (exit 1)"));
  CHECK(contains(page, "inner dimensions &lt;differ&gt;"));
  CHECK_FALSE(contains(page, "<h2 id=\"s1\">"));
  CHECK(contains(read_file(d / "index.html"), "failed (exit 1)"));
}

TEST_CASE("course: a failing lesson and a hanging one do not stop the others; the summary lists all") {
  TempDir d;
  const std::string bin = d / "bin";
  make_dirs(bin);
  fs::create_symlink(kBin + "/01_attention_pooling", bin + "/01_attention_pooling");
  write_file_atomic(bin + "/02_broken", "#!/bin/sh\necho 'about to fail'\nexit 3\n");
  // The timeout applies to every lesson: 20 s leaves the real lesson 01 (under a second alone)
  // room on a loaded machine, where 3 s once timed it out.
  write_file_atomic(bin + "/03_hangs", "#!/bin/sh\nsleep 120\n");
  write_file_atomic(bin + "/04_after", "#!/bin/sh\nexit 0\n");  // ends well but writes no story
  for (const char* f : {"02_broken", "03_hangs", "04_after"}) fs::permissions(bin + "/" + f, fs::perms::owner_all);
  const std::string out = d / "out";
  const int code = shell("'" + kBin + "/course' --bin '" + bin + "' --out '" + out + "' --timeout 20 > '" + (d / "log") +
                         "' 2>&1");
  const std::string log = read_file(d / "log");
  CAPTURE(log);
  CHECK(code == 1);
  CHECK(contains(log, "01_attention_pooling  ok"));
  CHECK(contains(log, "val_mse_learned = "));
  CHECK(contains(log, "02_broken             failed (exit 3)"));
  CHECK(contains(log, "03_hangs              timed out after 20 s"));
  CHECK(contains(log, "04_after              no output (story.json missing)"));
  CHECK(contains(log, "gradcheck             not built"));
  CHECK(contains(read_file(out + "/logs/02_broken.log"), "about to fail"));
  CHECK(contains(read_file(out + "/02_broken.html"), "about to fail"));
  CHECK(fs::exists(out + "/01_attention_pooling/story.json"));
  CHECK(contains(read_file(out + "/index.html"), "timed out after 20 s"));
  CHECK_FALSE(fs::exists(out + "/logs/03_hangs.log.part"));
}

TEST_CASE("the book in a real browser: every figure loads, the headings are there, a missing figure is caught") {
  const std::string chrome = chromium();
  REQUIRE_MESSAGE(!chrome.empty(), "Debian's chromium is needed for this test: scripts/setup.sh --tests installs it");
  // The screenshots stay in the build folder, for a person to look at.
  const std::string artifacts = kBin + "/../course_book_test";
  TempDir d, profile;
  const std::string out = d / "out";
  REQUIRE(shell("'" + kBin + "/course' --only 01,06 --out '" + out + "' > '" + (d / "log") + "' 2>&1") == 0);

  // The summary as data: the machine, the mode, and every program that ran, gradcheck last.
  const Json runs = Json::parse(read_file(out + "/runs.json"));
  CHECK(contains(runs["machine"].get<std::string>(), "CPU"));
  CHECK(runs["mode"] == "quick");
  REQUIRE(runs["runs"].size() == 3);
  CHECK(runs["runs"][0]["id"] == "01_attention_pooling");
  CHECK(runs["runs"][2]["id"] == "gradcheck");
  for (const Json& r : runs["runs"]) CHECK((r["status"] == "ok" && r["seconds"].get<double>() > 0));

  const Json story = Json::parse(read_file(out + "/06_attention_backward/story.json"));
  std::vector<std::string> headings = {"Metrics"};
  std::size_t figures = 0;
  std::string a_figure;
  for (const Json& b : story["blocks"]) {
    if (b["kind"] == "section") headings.push_back(b["title"].get<std::string>());
    if (b["kind"] == "figure") {
      ++figures;
      a_figure = b["files"][0].get<std::string>();
    }
  }
  REQUIRE(figures >= 3);
  const std::string page = out + "/06_attention_backward.html";
  CHECK(page_problems(browser("--dump-dom", page, profile.path), figures, headings) == "");
  CHECK(page_problems(browser("--dump-dom", out + "/index.html", profile.path), 2, {"The lessons", "This run"}) == "");

  // The layout model lesson_check reads figures with (lessons/story/book_layout.hpp) is the one
  // Chromium lays them out by: each figure's width in a window as wide as the check's.
  const std::string laid_out =
      browser("--window-size=" + std::to_string(int(book::kCheckWindowW)) + ",800 --dump-dom", page, profile.path);
  std::size_t measured = 0;
  for (const Json& b : story["blocks"]) {
    if (b["kind"] != "figure" || !b.contains("png")) continue;
    const std::string src = "06_attention_backward/" + b["files"][0].get<std::string>();
    const std::size_t at = laid_out.find("src=\"" + src + "\"");
    REQUIRE_MESSAGE(at != std::string::npos, src);
    const std::size_t tag_end = laid_out.find('>', at), attr = laid_out.find("data-shown-width=\"", at);
    INFO("figure " << src);
    REQUIRE((attr != std::string::npos && attr < tag_end));
    const double shown = std::stod(laid_out.substr(attr + 18));
    const int natural = b["png"]["width_px"].get<int>();
    INFO(src << ": natural " << natural << " px, shown " << shown << " px, model " << natural * book::shown_scale(natural));
    CHECK(std::abs(shown - natural * book::shown_scale(natural)) <= 3);  // the image's 1 px border each side
    ++measured;
  }
  CHECK(measured >= 3);

  make_dirs(artifacts);
  browser("--window-size=1280,2000 --screenshot='" + artifacts + "/index.png'", out + "/index.html", profile.path);
  browser("--window-size=390,2400 --screenshot='" + artifacts + "/06_phone.png'", page, profile.path);
  CHECK(read_file(artifacts + "/06_phone.png").size() > 10000);

  // The check can fail: with one figure gone, the page says so and the checker reports it.
  fs::remove(out + "/06_attention_backward/" + a_figure);
  const std::string problems = page_problems(browser("--dump-dom", page, profile.path), figures, headings);
  CHECK(contains(problems, std::to_string(figures - 1) + "/" + std::to_string(figures)));
  CHECK(contains(problems, a_figure));
}

TEST_CASE("the book in a real browser: every formula typeset by KaTeX, no TeX left in sight, a broken one caught") {
  const std::string chrome = chromium();
  REQUIRE_MESSAGE(!chrome.empty(), "Debian's chromium is needed for this test: scripts/setup.sh --tests installs it");
  REQUIRE_MESSAGE(fs::exists("/usr/share/javascript/katex/katex.min.js"),
                  "Debian's libjs-katex is needed to typeset the book's formulas: scripts/setup.sh installs it");
  TempDir d, profile;
  write_lesson(d / "98_escapes");
  // A 1 x 1 PNG, so that the page's one image loads.
  const char png[] = "\x89\x50\x4e\x47\x0d\x0a\x1a\x0a\x00\x00\x00\x0d\x49\x48\x44\x52\x00\x00\x00\x01\x00\x00"
                     "\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\x0d\x49\x44\x41\x54\x78\xda\x63"
                     "\x64\x60\xf8\x5f\x0f\x00\x02\x87\x01\x80\xeb\x47\xba\x92\x00\x00\x00\x00\x49\x45\x4e\x44"
                     "\xae\x42\x60\x82";
  write_file_atomic(d / "98_escapes/fig one.png", std::string(png, sizeof png - 1));
  write_book(d.path);
  REQUIRE(fs::exists(d / "katex/katex.min.js"));
  REQUIRE(fs::exists(d / "katex/fonts/KaTeX_Main-Regular.woff2"));
  const std::string dom = browser("--dump-dom", d / "98_escapes.html", profile.path);
  CHECK(attribute(dom, "data-images") == "1/1");
  CHECK(attribute(dom, "data-math") == "4/4");  // two in the prose, one in the figure's caption, one in the page's
  CHECK(attribute(dom, "data-raw-tex") == "0");
  CHECK(contains(dom, "class=\"katex\""));

  // The check can fail: a formula KaTeX cannot parse is counted, and the TeX stays in sight.
  std::string story = read_file(d / "98_escapes/story.json");
  const std::string good = "\\\\sum_j A_{ij} = 1";
  const auto at = story.find(good);
  REQUIRE(at != std::string::npos);
  story.replace(at, good.size(), "\\\\frac{1}{");
  // and TeX written without its dollar signs shows as TeX: counted too.
  const std::string prose = "a < b && c > d";
  story.replace(story.find(prose), prose.size(), "a \\\\le b");
  write_file_atomic(d / "98_escapes/story.json", story);
  write_book(d.path);
  const std::string broken = browser("--dump-dom", d / "98_escapes.html", profile.path);
  CHECK(attribute(broken, "data-math") == "3/4");
  CHECK(attribute(broken, "data-raw-tex") == "1");
}

TEST_CASE("markdown_html: the little Markdown of docs/, escaped, links to other documents as text") {
  const std::string md =
      "## Weeks\n\nA paragraph\nover two lines with `a < b`, **bold**, *it* and [a page](x.html).\n\n"
      "- one\n  continued\n- two [the README](../README.md)\n\n1. first\n2. second\n\n"
      "| week | lessons |\n| --- | --- |\n| 1 | 01 <script> |\n";
  const std::string html = markdown_html(md);
  CHECK(contains(html, "<h2>Weeks</h2>"));
  CHECK(contains(html, "<p>A paragraph over two lines with <code>a &lt; b</code>, <strong>bold</strong>, <em>it</em> and "
                       "<a href=\"x.html\">a page</a>.</p>"));
  CHECK(contains(html, "<ul>\n<li>one continued</li>\n<li>two the README</li>\n</ul>"));
  CHECK(contains(html, "<ol>\n<li>first</li>\n<li>second</li>\n</ol>"));
  CHECK(contains(html, "<thead><tr><th>week</th><th>lessons</th></tr></thead>"));
  CHECK(contains(html, "<td>01 &lt;script&gt;</td>"));
  CHECK(!contains(html, "<script>"));
}

// ---- Questions to think about, and the slides ----

namespace {

const std::string kSource = ATTNLAB_SOURCE_DIR;

// The share of a binary PGM's pixels (P5, 8 bits, as pdftoppm -gray writes) darker than light grey.
double ink_share(const std::string& pgm) {
  std::istringstream in(pgm);
  std::string magic;
  int width = 0, height = 0, max = 0;
  in >> magic >> width >> height >> max;
  in.get();  // the one whitespace before the pixels
  REQUIRE(magic == "P5");
  REQUIRE(max == 255);
  const std::string pixels = pgm.substr(static_cast<std::size_t>(in.tellg()));
  REQUIRE(pixels.size() == std::size_t(width) * std::size_t(height));
  std::size_t ink = 0;
  for (unsigned char c : pixels) ink += c < 200;
  return double(ink) / double(pixels.size());
}

// Each page of a PDF rendered by poppler (what a PDF reader shows), as the share of its pixels
// with ink; "Pages:" and "Page size:" of pdfinfo into `pages` and `size`.
std::vector<double> rendered_pages(const std::string& pdf, const std::string& work, std::string& pages, std::string& size) {
  const std::string info = output_of("pdfinfo '" + pdf + "' 2>&1");
  auto field = [&](const std::string& name) {
    const auto at = info.find(name);
    if (at == std::string::npos) return std::string();
    const auto from = info.find_first_not_of(' ', at + name.size());
    return info.substr(from, info.find('\n', from) - from);
  };
  pages = field("Pages:");
  size = field("Page size:");
  make_dirs(work);
  REQUIRE(shell("pdftoppm -gray -r 24 '" + pdf + "' '" + work + "/page'") == 0);
  std::vector<std::string> files;
  for (const auto& f : fs::directory_iterator(work)) files.push_back(f.path().string());
  std::sort(files.begin(), files.end());  // page-01.pgm ... (pdftoppm pads the numbers)
  std::vector<double> ink;
  for (const std::string& f : files) ink.push_back(ink_share(read_file(f)));
  return ink;
}

bool have_poppler() { return ::access("/usr/bin/pdftoppm", X_OK) == 0 && ::access("/usr/bin/pdfinfo", X_OK) == 0; }

}  // namespace

TEST_CASE("numbered_items: a numbered Markdown list, continuation lines joined, titles and blank lines ignored") {
  CHECK(numbered_items("# Title\n\n1. first\n   goes on\n2. second\n\n10. tenth $a < b$\n\nstray line\n") ==
        std::vector<std::string>{"first goes on", "second", "tenth $a < b$"});
  CHECK(numbered_items("no list here\n").empty());
  CHECK(numbered_items("1.no space is not an item\n").empty());
}

TEST_CASE("questions to think about end a lesson's page; their answers appear only when the answers folder has them") {
  TempDir d;
  const std::string out = d / "out", questions = d / "questions", answers = d / "answers";
  write_lesson(out + "/98_escapes");
  make_dirs(questions);
  make_dirs(answers);
  write_file_atomic(questions + "/98_escapes.md",
                    "# Questions\n\n1. Why is $\\sqrt{d_k}$ the scale\n   and not $d_k$?\n2. What if <script>alert(1)</script>?\n");
  write_file_atomic(answers + "/98_escapes.md", "1. Because the variance is $d_k$.\n2. It stays text & escaped.\n");

  write_book(out, {}, {questions, answers});
  const std::string teacher = read_file(out + "/98_escapes.html");
  CHECK(contains(teacher, "<li><a href=\"#questions\">Questions to think about</a></li>"));
  CHECK(contains(teacher, "<h2 id=\"questions\">Questions to think about</h2>\n<ol class=\"questions\">"));
  CHECK(contains(teacher, "<li><p>Why is <span class=\"math\" data-tex=\"\\sqrt{d_k}\">√d_k</span> the scale and not "));
  CHECK(contains(teacher, "What if &lt;script&gt;alert(1)&lt;/script&gt;?"));
  CHECK_FALSE(contains(teacher, "<script>alert"));
  CHECK(contains(teacher, "<details class=\"answer\"><summary>Answer (teacher's copy)</summary><p>Because the variance is "));
  CHECK(contains(teacher, "It stays text &amp; escaped."));
  CHECK(teacher.find("id=\"metrics\"") < teacher.find("id=\"questions\""));  // at the end of the page

  // The student copy has no answers folder at all: the questions, no answer, nothing fails.
  write_book(out, {}, {questions, d / "no such folder"});
  const std::string student = read_file(out + "/98_escapes.html");
  CHECK(contains(student, "<h2 id=\"questions\">Questions to think about</h2>"));
  CHECK(contains(student, "Why is <span class=\"math\""));
  CHECK_FALSE(contains(student, "class=\"answer\""));
  CHECK_FALSE(contains(student, "Because the variance"));

  // A lesson without questions has no such section.
  write_book(out, {}, {d / "none", d / "none"});
  CHECK_FALSE(contains(read_file(out + "/98_escapes.html"), "id=\"questions\""));

  // Answers that are not one per question are refused, naming both files.
  write_file_atomic(answers + "/98_escapes.md", "1. Only one.\n");
  CHECK_THROWS_WITH_AS(write_book(out, {}, {questions, answers}),
                       doctest::Contains("asks 2 questions"), std::runtime_error);
}

TEST_CASE("every lesson has 3 to 5 questions to think about, and in the teacher's copy one answer for each") {
  std::size_t lessons = 0;
  const BookSources sources = default_sources();
  const bool teacher = fs::is_directory(sources.answers);
  for (const auto& f : fs::directory_iterator(kSource + "/lessons")) {
    const std::string name = f.path().filename().string();
    if (name.size() < 8 || !std::isdigit(static_cast<unsigned char>(name[0])) || f.path().extension() != ".cpp") continue;
    const std::string id = f.path().stem().string();
    CAPTURE(id);
    ++lessons;
    const std::vector<Question> qs = read_questions(sources, id);  // throws when the answers do not match
    CHECK(qs.size() >= 3);
    CHECK(qs.size() <= 5);
    for (const Question& q : qs) {
      CAPTURE(q.text);
      CHECK_NOTHROW(lessons::split_math(q.text));  // every $ closed: the formulas typeset
      CHECK(q.text.size() > 40);
      if (teacher) {
        CHECK_NOTHROW(lessons::split_math(q.answer));
        CHECK(q.answer.size() > 40);
      }
    }
  }
  CHECK(lessons >= 17);
}

TEST_CASE("slides: a lesson as a 16:9 PDF printed by Chromium, one page per slide, every page inked, nothing overflowing") {
  const std::string chrome = chromium();
  REQUIRE_MESSAGE(!chrome.empty(), "Debian's chromium is needed for this test: scripts/setup.sh --tests installs it");
  REQUIRE_MESSAGE(have_poppler(), "Debian's poppler-utils (pdfinfo, pdftoppm) render the slides' pages: scripts/setup.sh --tests installs it");
  const std::string artifacts = kBin + "/../course_book_test";
  TempDir d, profile;
  const std::string out = d / "out";
  REQUIRE(shell("'" + kBin + "/course' --only 06 --slides --out '" + out + "' > '" + (d / "log") + "' 2>&1") == 0);
  const std::string log = read_file(d / "log");
  CAPTURE(log);
  const std::string id = "06_attention_backward", html = out + "/slides/" + id + ".html", pdf = out + "/slides/" + id + ".pdf";
  REQUIRE(fs::exists(pdf));

  // The page as the browser lays it out: every figure and formula there, no slide too full.
  const std::string dom = browser("--dump-dom", html, profile.path);
  const std::string slides = attribute(dom, "data-slides");
  const std::size_t n = std::stoul(slides.empty() ? "0" : slides);
  CHECK(n >= 6);  // title, idea, figures, claims, questions
  CHECK(contains(log, std::to_string(n) + " slides, " + pdf));
  CHECK(attribute(dom, "data-overflow") == "");
  const std::string images = attribute(dom, "data-images");
  CHECK(images.size() >= 3);
  CHECK(images.substr(0, images.find('/')) == images.substr(images.find('/') + 1));
  const std::string math = attribute(dom, "data-math");
  CHECK(math.substr(0, math.find('/')) == math.substr(math.find('/') + 1));
  CHECK(attribute(dom, "data-raw-tex") == "0");
  // The questions are on the last slide; their answers never.
  const std::vector<Question> qs = read_questions(default_sources(), id);
  REQUIRE(!qs.empty());
  const std::string deck = read_file(html);
  CHECK(contains(deck, "Questions to think about"));
  for (const Question& q : qs) {  // the longest stretch of each answer's prose, as the deck would show it
    std::string prose;
    for (const lessons::TextPiece& p : lessons::split_math(q.answer))
      if (p.kind == lessons::TextPiece::prose && p.content.size() > prose.size()) prose = p.content;
    if (prose.size() < 20) continue;
    CAPTURE(prose);
    CHECK_FALSE(contains(deck, escape(prose)));
  }

  // The PDF as a reader shows it: one 16:9 page per slide, each with something on it.
  std::string pages, size;
  const std::vector<double> ink = rendered_pages(pdf, d / "pages", pages, size);
  CHECK(pages == std::to_string(n));
  CHECK(contains(size, "960 x 540 pts"));  // 1280 x 720 CSS px, 16:9
  CHECK(pdf_page_count(read_file(pdf)) == n);
  REQUIRE(ink.size() == n);
  for (std::size_t k = 0; k < n; ++k) {
    CAPTURE(k + 1);
    CHECK(ink[k] > 0.01);
  }

  // Slides as a projector shows them, kept for a person to look at.
  make_dirs(artifacts);
  for (std::size_t k : {std::size_t(1), std::size_t(2), std::size_t(3), std::size_t(4), n})
    browser("--window-size=1280,720 --screenshot='" + artifacts + "/slide_" + std::to_string(k) + ".png'",
            html + "?slide=" + std::to_string(k), profile.path);
  CHECK(read_file(artifacts + "/slide_3.png").size() > 10000);
}

TEST_CASE("slides: the checks can fail: a slide too full is named, a blank page has no ink, a spilled slide is refused") {
  const std::string chrome = chromium();
  REQUIRE_MESSAGE(!chrome.empty(), "Debian's chromium is needed for this test: scripts/setup.sh --tests installs it");
  REQUIRE_MESSAGE(have_poppler(), "Debian's poppler-utils (pdfinfo, pdftoppm) render the slides' pages: scripts/setup.sh --tests installs it");
  TempDir d, profile;
  write_lesson(d / "98_escapes");
  // One claim far too long for any slide.
  std::string story = read_file(d / "98_escapes/story.json");
  const std::string said = "It learned the task <well>.";
  std::string long_text;
  for (int i = 0; i < 120; ++i) long_text += "A sentence that keeps going. ";
  story.replace(story.find(said), said.size(), long_text);
  write_file_atomic(d / "98_escapes/story.json", story);
  const Deck deck = write_slides(d.path, "98_escapes", {d / "none", ""});
  const std::string dom = browser("--dump-dom", deck.html, profile.path);
  CHECK(contains(attribute(dom, "data-overflow"), "slide-"));

  // A page with nothing on it is seen as blank.
  const std::string two = d / "two.html";
  write_file_atomic(two, "<!DOCTYPE html><html><head><style>@page { size: 1280px 720px; margin: 0 } body { margin: 0 }"
                         " section { height: 720px; break-after: page; font-size: 60px }</style></head><body>"
                         "<section>A slide with words on it</section><section></section></body></html>");
  print_pdf(chrome, two, d / "two.pdf", 2, d / "two.log");
  std::string pages, size;
  const std::vector<double> ink = rendered_pages(d / "two.pdf", d / "two_pages", pages, size);
  REQUIRE(ink.size() == 2);
  CHECK(ink[0] > 0.01);
  CHECK(ink[1] < 0.001);
  // The same page printed as if it were one slide: the count is checked and refused.
  CHECK_THROWS_WITH_AS(print_pdf(chrome, two, d / "one.pdf", 1, d / "one.log"),
                       doctest::Contains("has 1 slides but printed as 2 pages"), std::runtime_error);
  CHECK_FALSE(fs::exists(d / "one.pdf"));
}

TEST_CASE("--only: lessons by number, in the order given; a list naming none, or a lesson not there, is refused") {
  CHECK(only_list("01,,04") == std::vector<std::string>{"01", "04"});
  CHECK_THROWS_AS(only_list(","), UsageError);
  CHECK_THROWS_AS(only_list(""), UsageError);
  const std::vector<std::string> ids = {"01_attention_pooling", "04_scaled_dot_product", "06_attention_backward"};
  CHECK(select_lessons(ids, {"06", "01"}, "bin") == std::vector<std::string>{"06_attention_backward", "01_attention_pooling"});
  CHECK(select_lessons(ids, {}, "bin") == ids);
  CHECK_THROWS_WITH_AS(select_lessons(ids, {"99"}, "bin"), "--only: no lesson '99' in bin", UsageError);
  CHECK(is_lesson_id("04_scaled_dot_product"));
  CHECK_FALSE(is_lesson_id("4_x"));
}
