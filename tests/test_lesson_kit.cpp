// The lesson kit: the command line, numbers in prose, the progress bar, the report and metrics,
// the one training loop (fit) and the standard figures.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include <xtensor/xview.hpp>

#include "core/runtime/parallel.hpp"
#include "core/runtime/thread_choice.hpp"
#include "io/files.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/seq2seq.hpp"
#include "lessons/story/book_layout.hpp"
#include "lessons/story/progress.hpp"
#include "nn/layers.hpp"
#include "nn/optim.hpp"
#include "tests/helpers.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace book = attnlab::lessons::book;
using attnlab::testing::contains;
using attnlab::testing::starts_with;
using attnlab::testing::TempDir;

namespace {
const LessonInfo kInfo{"99_test", "A test lesson", "Checks the harness.", "", "", {"model.npz", "other.npz"}};

LessonArgs parse(const std::vector<std::string>& args) { return parse_args(args, kInfo); }

LessonArgs args_in(const TempDir& d, std::uint64_t seed = 5) {
  LessonArgs a;
  a.out = d / "lesson";
  a.seed = seed;
  return a;
}
}  // namespace

TEST_CASE("command line: defaults, every flag, and bad input") {
  LessonArgs a = parse({});
  CHECK_FALSE(a.quick);
  CHECK(a.epochs == 0);
  CHECK(a.seed == 0);
  CHECK(a.out == "out/99_test");
  CHECK(a.threads == machine_threads());  // the machine's CPUs, at most 8
  CHECK_FALSE(a.pdf);
  a = parse({"--quick", "--epochs", "3", "--seed", "42", "--out", "x/y", "--threads", "2", "--pdf"});
  CHECK(a.quick);
  CHECK(a.pdf);
  CHECK(a.epochs == 3);
  CHECK(a.seed == 42);
  CHECK(a.out == "x/y");
  CHECK(a.threads == 2);
  CHECK_THROWS_AS(parse({"--bogus"}), UsageError);
  CHECK_THROWS_AS(parse({"--epochs"}), UsageError);
  CHECK_THROWS_AS(parse({"--epochs", "zero"}), UsageError);
  CHECK_THROWS_AS(parse({"--epochs", "0"}), UsageError);
  CHECK_THROWS_AS(parse({"--seed", "-1"}), UsageError);
  CHECK_THROWS_AS(parse({"--threads", "2x"}), UsageError);
  CHECK(usage(kInfo).find("--quick") != std::string::npos);
}

TEST_CASE("command line: --from names an earlier run's folder") {
  CHECK(parse({}).from.empty());
  CHECK(parse({"--from", "out/14_bert"}).from == "out/14_bert");
  CHECK_THROWS_AS(parse({"--from"}), UsageError);
  CHECK_THROWS_AS(parse({"--from", ""}), UsageError);
  CHECK(usage(kInfo).find("--from DIR") != std::string::npos);
  // A lesson that keeps no checkpoints refuses --from instead of ignoring it.
  const LessonInfo none{"98_none", "No checkpoints", "Trains from scratch."};
  CHECK_THROWS_WITH_AS(parse_args({"--from", "out/x"}, none), doctest::Contains("--from: 98_none keeps no checkpoints"),
                       UsageError);
}

TEST_CASE("command line: --long asks for the lesson's longer run") {
  CHECK_FALSE(parse({}).long_run);
  const LessonArgs a = parse({"--long", "--seed", "3"});
  CHECK(a.long_run);
  CHECK_FALSE(a.quick);
  CHECK(a.seed == 3);
  CHECK(usage(kInfo).find("--long") != std::string::npos);
}

TEST_CASE("numbers in prose") {
  CHECK(rounded(0.29812) == "0.2981");
  CHECK(rounded(3.71) == "3.71");
  CHECK(rounded(3.7) == "3.7");
  CHECK(rounded(12000.0) == "12000");
  CHECK(rounded(56.666) == "56.67");
  CHECK(rounded(4.8e-7) == "4.8e-07");
  CHECK(rounded(-0.5) == "-0.5");
  CHECK(fixed(1.0 / 3.0, 3) == "0.333");
  CHECK(sci(3.14e-15) == "3.1e-15");
  CHECK(percent(0.9531) == "95.3%");
  CHECK(text("We generate ", std::size_t(12000), " dates in ", 16, " formats, ", 0.5, " of them ", "long.") ==
        "We generate 12000 dates in 16 formats, 0.5 of them long.");
  CHECK(row("a", 2, 0.25) == std::vector<std::string>{"a", "2", "0.25"});
  CHECK(listing({"a", "b", "c"}) == "a, b and c");
  CHECK(listing({"a"}) == "a");
  CHECK(counted(1, "pixel") == "1 pixel");
  CHECK(counted(2, "pixel") == "2 pixels");
  CHECK(counted(0, "epoch") == "0 epochs");
}

TEST_CASE("summaries: median, mean and spread, windows of steps") {
  CHECK(median({3, 1, 2}) == 2);
  CHECK(mean_of({1, 2, 3, 6}) == 3);
  CHECK(mean_over({1, 2, 3, 6}, 1, 3) == 2.5);
  CHECK(mean_over({1, 2, 3, 6}, 2) == 4.5);           // to the end
  CHECK(mean_over({1, 2, 3, 6}, 3, 99) == 6);         // cut at the end
  CHECK(mean_over({1, 2, 3, 6}, 4) == 0);             // none
  CHECK_THROWS_WITH_AS(mean_over({1, 2}, 3, 5), "mean_over: from 3 lies past the end, 2", std::invalid_argument);
  CHECK(stdev({2, 4, 4, 4, 5, 5, 7, 9}) == doctest::Approx(2.13809).epsilon(1e-5));
  const Windowed w = windowed({1, 2, 3, 4, 5}, 2);
  CHECK(w.x == std::vector<double>{2, 4});
  CHECK(w.y == std::vector<double>{1.5, 3.5});
}

TEST_CASE("progress: plain periodic lines when not a terminal, with the status note") {
  char* buf = nullptr;
  std::size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  {
    Progress p(100, "train", f, false);
    for (int i = 0; i < 100; ++i) p.step(1.0, "epoch 1/1");
    CHECK(p.running_loss() == doctest::Approx(1.0));
  }
  std::fclose(f);
  const std::string out(buf, len);
  free(buf);
  int lines = 0;
  for (char c : out) lines += c == '\n';
  CHECK(lines == 10);
  CHECK(contains(out, "train, epoch 1/1 100%"));
  CHECK(contains(out, "ETA"));
}

TEST_CASE("a lesson writes report.md and metrics.json with its story, metrics and figures") {
  TempDir d;
  const LessonArgs args = args_in(d, 9007199254740993ULL);  // above 2^53: must survive as an integer
  {
    Lesson L(kInfo, args);
    CHECK_THROWS_AS(Lesson(kInfo, args), std::logic_error);  // one lesson at a time
    CHECK(quick() == false);
    CHECK(seed() == 9007199254740993ULL);
    CHECK(epochs(10, 2) == 10);
    section("1. Setup");
    say("Some words and a number, ", 0.25, ".");
    table({"a", "max |x|"}, {row(1, 2)});
    matrix("M", xt::xarray<double>{{1.0, 2.0}, {3.0, 4.0}}, {"r1", "r2"}, {"c1", "c2"}, 2);
    L.figure("fig", "A figure");
    config("hidden", 64);
    config({{"task", "copy"}, {"layers", 2}});
    metric("accuracy", 0.75);
    timing("ms_per_step", 1.5);
    L.finish();
  }
  CHECK_THROWS_AS(lesson(), std::logic_error);  // none runs any more
  const std::string report = read_file(args.out + "/report.md");
  CHECK(contains(report, "## 1. Setup"));
  CHECK(contains(report, "Some words and a number, 0.25."));
  CHECK(contains(report, "![A figure](fig.png)"));
  CHECK(contains(report, "| accuracy | 0.7500 |"));
  CHECK(contains(report, "| a | max \\|x\\| |"));  // a '|' in a cell is escaped
  CHECK(contains(report, "r1 [ "));
  const Json m = Json::parse(read_file(args.out + "/metrics.json"));
  CHECK(m["lesson"] == "99_test");
  CHECK(m["seed"].get<std::uint64_t>() == 9007199254740993ULL);
  CHECK(m["metrics"]["accuracy"] == 0.75);
  CHECK(m["configuration"]["hidden"] == 64);
  CHECK(m["configuration"]["task"] == "copy");
  CHECK(m["configuration"].back() == 2);  // "layers": the settings of one call in their order, after the earlier ones
  CHECK(m["figures"].size() == 2);
  CHECK(m["timings"]["ms_per_step"] == 1.5);
  CHECK(m["timings"].contains("seconds"));
  CHECK(m.begin().key() == "lesson");  // keys in the order they were set
}

TEST_CASE("story.json: the same story as data, block by block, in order") {
  TempDir d;
  const LessonArgs args = args_in(d);
  {
    Lesson L({"99_test", "A test lesson", "Checks the harness.", "accuracy"}, args);
    section("1. Setup <&>");
    say("Some words and a number, ", 0.25, ".");
    verbatim("x = 1\n");
    table({"a", "max |x|"}, {row(1, 2)});
    matrix("M", xt::xarray<double>{{1.0, 2.0}, {3.0, 4.0}}, {"r1", "r2"}, {"c1", "c2"}, 2);
    L.figure("fig", "A figure");
    metric("accuracy", 0.75);
    L.finish();
  }
  const Json story = Json::parse(read_file(args.out + "/story.json"));
  CHECK(story["lesson"] == "99_test");
  CHECK(story["title"] == "A test lesson");
  CHECK(story["headline"] == "accuracy");
  CHECK(story["quick"] == false);
  const Json& b = story["blocks"];
  REQUIRE(b.size() == 6);
  CHECK(b[0] == Json{{"kind", "section"}, {"title", "1. Setup <&>"}});
  CHECK(b[1] == Json{{"kind", "text"}, {"text", "Some words and a number, 0.25."}});
  CHECK(b[2] == Json{{"kind", "verbatim"}, {"text", "x = 1\n"}});
  CHECK(b[3]["kind"] == "table");
  CHECK(b[3]["header"][1] == "max |x|");
  CHECK(b[3]["rows"][0][1] == "2");
  CHECK(b[4]["kind"] == "matrix");  // one block, not a verbatim one as well
  CHECK(b[4]["values"][1][0] == "3.00");  // as printed
  CHECK(b[4]["row_labels"][1] == "r2");
  CHECK(b[5] == Json{{"kind", "figure"}, {"stem", "fig"}, {"caption", "A figure"}, {"files", {"fig.png", "fig.svg"}}});
  CHECK(Json::parse(read_file(args.out + "/metrics.json"))["headline"] == "accuracy");
}

TEST_CASE("a headline that names no recorded metric is an error, not a silent blank") {
  TempDir d;
  Lesson L({"99_test", "A test lesson", "Checks the harness.", "accuracy"}, args_in(d));
  metric("loss", 0.5);
  CHECK_THROWS_WITH_AS(L.finish(), doctest::Contains("'accuracy' was never recorded"), std::logic_error);
}

TEST_CASE("--pdf: every figure also as a PDF page of the figure's size, listed and shown") {
  TempDir d;
  LessonArgs args = args_in(d);
  args.pdf = true;
  {
    Lesson L(kInfo, args);
    section("1. Figures for slides");
    say("A bar chart and a graph, each as PNG, SVG and PDF; lesson_check reads a report of some length, so this "
        "paragraph goes on a little longer than a test's paragraph would, to be a report worth the name.");
    plots::Figure fig(1600, 1000);  // 800 x 500 logical pixels: an 800 x 500 pt page
    bar_panel(fig.panel(0), {"a", "b"}, {{"first", {0.5, 0.25}}});
    save_figure(fig, "bars", "Bars");
    save_diagram("digraph { x -> y; }", "graph", "A graph");
    L.finish();
  }
  const std::string pdf = read_file(args.out + "/bars.pdf");
  CHECK(starts_with(pdf, "%PDF-1."));
  CHECK(pdf.find("%%EOF", pdf.size() - 8) != std::string::npos);
  CHECK(contains(pdf, "/MediaBox [ 0 0 800 500 ]"));
  CHECK(starts_with(read_file(args.out + "/graph.pdf"), "%PDF-1."));
  const Json m = Json::parse(read_file(args.out + "/metrics.json"));
  CHECK(m["figures"] == Json{"bars.png", "bars.svg", "bars.pdf", "graph.png", "graph.svg", "graph.pdf"});
  // lesson_check reads PDFs too: header, page size and trailer.
  const std::string check = std::string(ATTNLAB_BIN_DIR) + "/lesson_check '" + args.out + "' > /dev/null";
  CHECK(std::system(check.c_str()) == 0);
  write_file_atomic(args.out + "/bars.pdf", pdf.substr(0, pdf.size() / 2));  // cut short: no trailer
  CHECK(std::system(check.c_str()) != 0);
}

TEST_CASE("a figure's smallest text is read at the book's width: lesson_check fails a figure a student cannot read") {
  // Ticks of 10.5 logical pixels at scale 2 are 21 PNG pixels high. A 1600-pixel PNG is shown at
  // 1230 of a 1280-pixel window's pixels: 16 px text. A 5000-pixel one (five panels in a row) is
  // shrunk to a quarter: 5 px.
  auto run = [](const std::string& out, int width_px) {
    LessonArgs args;
    args.quick = true;
    args.out = out;
    Lesson L(kInfo, args);
    section("1. A figure");
    say("One figure of panels in a row; lesson_check reads a report of some length, so this paragraph goes on a "
        "little longer than a test's paragraph would, to be a report worth the name.");
    plots::Figure fig(width_px, 1000, 1, width_px / 1000);
    for (int p = 0; p < width_px / 1000; ++p) bar_panel(fig.panel(p), {"a", "b"}, {{"first", {0.5, 0.25}}});
    save_figure(fig, "bars", "Bars");
    L.finish();
  };
  TempDir d;
  const std::string readable = d / "readable", tiny = d / "tiny";
  run(readable, 2000);
  run(tiny, 5000);
  const Json block = Json::parse(read_file(tiny + "/story.json"))["blocks"][2];
  CHECK(block["png"]["width_px"] == 5000);
  CHECK(block["png"]["smallest_text_px"].get<double>() <= 21.0);
  CHECK(book::shown_scale(1600) == doctest::Approx(book::column_px(1280) / 1600));
  CHECK(book::shown_scale(600) == 1.0);  // never shown larger than its pixels
  const std::string check = std::string(ATTNLAB_BIN_DIR) + "/lesson_check '";
  CHECK(std::system((check + readable + "' > /dev/null 2>&1").c_str()) == 0);
  CHECK(std::system((check + tiny + "' > '" + (d / "log") + "' 2>&1").c_str()) != 0);
  CHECK(contains(read_file(d / "log"), "figure bars: its smallest text reads at"));
}

TEST_CASE("run_lesson: an error in the story is one line and exit status 1") {
  TempDir d;
  const std::string out = d / "out";
  std::vector<const char*> argv = {"99_test", "--quick", "--out", out.c_str()};
  const int rc = run_lesson(kInfo, int(argv.size()), const_cast<char**>(argv.data()),
                            [] { throw ShapeError("matmul: inner dimensions differ: (2,3) x (4,5)"); });
  CHECK(rc == 1);
  const int ok = run_lesson(kInfo, int(argv.size()), const_cast<char**>(argv.data()), [] { say("fine"); });
  CHECK(ok == 0);
  CHECK(contains(read_file(out + "/report.md"), "fine"));
}

TEST_CASE("checkpoint_from: the file in --from's folder, empty without --from, an error naming both when missing") {
  TempDir d;
  const std::string out = d / "out", earlier = d / "earlier";
  make_dirs(earlier);
  write_file_atomic(earlier + "/model.npz", "weights");
  std::string found, none;
  std::vector<const char*> with = {"99_test", "--quick", "--out", out.c_str(), "--from", earlier.c_str()};
  CHECK(run_lesson(kInfo, int(with.size()), const_cast<char**>(with.data()),
                   [&] { found = checkpoint_from("model.npz"); }) == 0);
  CHECK(found == earlier + "/model.npz");
  std::vector<const char*> without = {"99_test", "--quick", "--out", out.c_str()};
  CHECK(run_lesson(kInfo, int(without.size()), const_cast<char**>(without.data()),
                   [&] { none = checkpoint_from("model.npz"); }) == 0);
  CHECK(none.empty());
  std::string error;
  CHECK(run_lesson(kInfo, int(with.size()), const_cast<char**>(with.data()), [&] {
          try {
            checkpoint_from("other.npz");
          } catch (const IoError& e) {
            error = e.what();
            throw;
          }
        }) == 1);
  CHECK(contains(error, "--from " + earlier + ": no readable other.npz there"));
  // A file the lesson never declared is the lesson's bug, named.
  CHECK(run_lesson(kInfo, int(without.size()), const_cast<char**>(without.data()), [&] {
          try {
            checkpoint_from("stray.npz");
          } catch (const std::logic_error& e) {
            error = e.what();
            throw;
          }
        }) == 1);
  CHECK(contains(error, "'stray.npz' is not among the lesson's checkpoints"));
}

TEST_CASE("joined: a later phase's history continues an earlier one's, every step and epoch") {
  History a, b;
  a.loss = {3, 2}, a.lr = {0.1, 0.1}, a.step_ms = {5, 6}, a.step_cpu_ms = {5, 6}, a.epoch_loss = {2.5};
  a.validation = {{"accuracy", {0.4}}}, a.steps = 2, a.steps_per_epoch = 2, a.seconds = 1.5;
  b.loss = {1}, b.lr = {0.05}, b.step_ms = {7}, b.step_cpu_ms = {7}, b.epoch_loss = {1};
  b.validation = {{"accuracy", {0.6}}}, b.steps = 1, b.steps_per_epoch = 1, b.seconds = 0.5;
  const History h = joined(a, b);
  CHECK(h.loss == std::vector<double>{3, 2, 1});
  CHECK(h.lr == std::vector<double>{0.1, 0.1, 0.05});
  CHECK(h.step_cpu_ms == std::vector<double>{5, 6, 7});
  CHECK(h.epoch_loss == std::vector<double>{2.5, 1});
  CHECK(h.validation_of("accuracy") == std::vector<double>{0.4, 0.6});
  CHECK(h.steps == 3);
  CHECK(h.seconds == doctest::Approx(2.0));
  CHECK(h.threads_text() == "1 thread");  // neither phase had more
  a.threads = 2, a.steps_at_one_thread = 1, b.threads = 2, b.steps_at_one_thread = 0;
  const History mixed = joined(a, b);
  CHECK(mixed.threads == 2);
  CHECK(mixed.steps_at_one_thread == 1);
  CHECK(mixed.threads_text() == "1 thread in 1 of 3 steps and 2 in the rest, the loop keeping whichever it measured faster");
  b.steps_at_one_thread = 1;
  CHECK(joined(a, b).threads_text() == "1 thread in 2 of 3 steps and 2 in the rest, the loop keeping whichever it measured faster");
  a.steps_at_one_thread = 2;
  CHECK(joined(a, b).threads_text() == "1 thread");
  a.steps_at_one_thread = 0, b.steps_at_one_thread = 0;
  CHECK(joined(a, b).threads_text() == "2 threads");
  b.validation = {{"loss", {0.9}}};  // a score the earlier phase had and the later one lacks
  CHECK_THROWS_AS(joined(a, b), std::out_of_range);
}

namespace {
// y = w x on 20 points of y = 3 x: one parameter, an exact answer.
struct Line : nn::Module<float> {
  Line() : w(Tensor<float>::zeros({1})) { w = register_parameter("w", w); }
  Tensor<float> w;
};
}  // namespace

TEST_CASE("train: the recipe's schedule, its description, a checkpoint written and resumed with --from") {
  Recipe r;
  r.label = "line";
  r.epochs = 4, r.batch = 6, r.lr = 0.1, r.seed = 3;
  CHECK(fit_steps(20, r) == 16);
  r.warmup = 0.25;  // a share: 4 of 16 steps
  CHECK(warmup_steps(r, 16) == 4);
  const nn::Schedule cosine = schedule_of(r, 16);
  CHECK(cosine(2) == doctest::Approx(0.05));
  CHECK(cosine(4) == doctest::Approx(0.1));
  CHECK(cosine(16) == doctest::Approx(0.0));
  r.floor = 0.05;
  CHECK(schedule_of(r, 16)(16) == doctest::Approx(0.005));
  CHECK(describe(r, 16) == "Adam (peak learning rate 0.1), a linear warm-up over 4 steps then a cosine decay to 1/20 of "
                           "the peak, gradients clipped at norm 1, batches of 6, 16 steps");
  r.decay = Decay::inverse_sqrt;
  CHECK(schedule_of(r, 16)(4) == doctest::Approx(0.1));
  CHECK(schedule_of(r, 16)(16) == doctest::Approx(0.05));
  r.decay = Decay::inverse_sqrt_no_warmup;  // the same schedule without its warm-up: the peak from step 1
  CHECK(schedule_of(r, 16)(1) == doctest::Approx(0.1));
  CHECK(schedule_of(r, 16)(4) == doctest::Approx(0.1));
  CHECK(schedule_of(r, 16)(16) == doctest::Approx(0.05));
  CHECK(describe(r, 16) == "Adam (peak learning rate 0.1), the peak from the first step and from step 4 a decay as "
                           "1/√step (the Noam schedule without its warm-up), gradients clipped at norm 1, batches of 6, "
                           "16 steps");
  r.decay = Decay::constant;
  CHECK(schedule_of(r, 16)(1) == doctest::Approx(0.025));
  CHECK(schedule_of(r, 16)(100) == doctest::Approx(0.1));
  r.warmup = 0.0, r.decay = Decay::cosine;
  r.weight_decay = 0.1, r.beta2 = 0.99;
  CHECK(describe(r, 16) == "AdamW (peak learning rate 0.1, weight decay 0.1, betas 0.9 and 0.99), a cosine decay to 1/20 "
                           "of the peak, gradients clipped at norm 1, batches of 6, 16 steps");
  Recipe bad = r;
  bad.epochs = 0;
  CHECK_THROWS_WITH_AS(schedule_of(bad, 1), doctest::Contains("train 'line': epochs must be at least 1"), std::invalid_argument);

  // Two runs of a lesson: the first writes model.npz, the second starts from it with --from.
  TempDir d;
  const std::size_t n = 20;
  const Array<float> x = xt::linspace<float>(-1.0f, 1.0f, n), y = 3.0f * x;
  double first_w = 0.0, resumed_start = 0.0;
  auto run = [&](const std::vector<const char*>& argv, double* w_after, double* w_before) {
    return run_lesson(kInfo, int(argv.size()), const_cast<char**>(argv.data()), [&] {
      Line m;
      Recipe rr;
      rr.label = "line";
      rr.epochs = 3, rr.batch = 5, rr.lr = 0.2, rr.checkpoint = "model.npz";
      rr.after_step = [&](std::size_t step) {
        if (step == 1 && w_before) *w_before = m.w.item();
      };
      train(m, n, [&](const std::vector<std::size_t>& rows) {
        Array<float> xb = xt::zeros<float>({rows.size()}), yb = xt::zeros<float>({rows.size()});
        for (std::size_t i = 0; i < rows.size(); ++i) xb(i) = x(rows[i]), yb(i) = y(rows[i]);
        return mse(mul(Tensor<float>(xb), m.w), Tensor<float>(yb));
      }, rr);
      if (w_after) *w_after = m.w.item();
    });
  };
  const std::string first = d / "first", second = d / "second";
  REQUIRE(run({"99_test", "--out", first.c_str()}, &first_w, nullptr) == 0);
  CHECK(std::ifstream(first + "/model.npz").good());
  CHECK(first_w > 0.5);  // it learned something of w = 3
  REQUIRE(run({"99_test", "--out", second.c_str(), "--from", first.c_str()}, nullptr, &resumed_start) == 0);
  CHECK(resumed_start > first_w - 0.5);  // one step after loading: near where the first run ended, not at 0
  CHECK(contains(read_file(second + "/report.md"), "Starting line from " + first + "/model.npz"));
}

TEST_CASE("train: seeded batches, held-out scores per epoch, the same history twice") {
  TempDir d;
  Lesson L(kInfo, args_in(d));
  const std::size_t n = 20;
  Array<float> x = xt::linspace<float>(-1.0f, 1.0f, n);
  const Array<float> y = 3.0f * x;
  auto run = [&](std::vector<std::vector<std::size_t>>* batches) {
    Line m;
    Recipe o;  // Adam at a constant 0.1
    o.label = "line";
    o.epochs = 4;
    o.batch = 6;
    o.seed = 3;
    o.clip = 10.0;
    o.lr = 0.1, o.decay = Decay::constant;
    o.validate = [&] { return Scores{{"loss", mse(mul(Tensor<float>(x), m.w), Tensor<float>(y)).item()}, {"w", m.w.item()}}; };
    std::size_t snapshots = 0;
    o.after_step = [&](std::size_t step) { snapshots += step == 2; };
    History h = train(m, n, [&](const std::vector<std::size_t>& rows) {
      if (batches) batches->push_back(rows);
      Array<float> xb = xt::zeros<float>({rows.size()}), yb = xt::zeros<float>({rows.size()});
      for (std::size_t i = 0; i < rows.size(); ++i) xb(i) = x(rows[i]), yb(i) = y(rows[i]);
      return mse(mul(Tensor<float>(xb), m.w), Tensor<float>(yb));
    }, o);
    CHECK(snapshots == 1);
    CHECK_FALSE(m.training());
    return h;
  };
  std::vector<std::vector<std::size_t>> batches;
  const History a = run(&batches), b = run(nullptr);
  CHECK(a.steps == 16);
  CHECK(a.steps_per_epoch == 4);
  Recipe same;  // what a schedule meant to end with this training is told: 4 epochs of 20 in sixes
  same.epochs = 4, same.batch = 6;
  CHECK(fit_steps(n, same) == long(a.steps));
  same.batch = 0;  // full batch: one step an epoch
  CHECK(fit_steps(n, same) == 4);
  CHECK(batches.size() == 16);
  CHECK(batches[0].size() == 6);
  CHECK(batches[3].size() == 2);  // the last, partial batch is kept
  CHECK(batches[0] != batches[4]);  // another order every epoch
  CHECK(a.loss == b.loss);
  CHECK(a.loss.size() == 16);
  CHECK(a.lr == std::vector<double>(16, 0.1));
  CHECK(a.epoch_loss.size() == 4);
  CHECK(a.validation_of("loss").size() == 4);
  CHECK(a.validation_of("loss").back() < a.validation_of("loss").front());
  CHECK(a.validation_of("w").back() > 0.5);
  CHECK_THROWS_AS(a.validation_of("accuracy"), std::out_of_range);
  CHECK(a.step_ms.size() == 16);
  CHECK(a.median_step_ms() >= 0.0);
  // Given two threads, the loop tries one thread on some steps (ThreadChoice): the same losses,
  // the steps at one thread counted, and the thread count set back to two after.
  const int before = threads();
  set_threads(2);
  const History two = run(nullptr);
  CHECK(threads() == 2);
  set_threads(before);
  CHECK(two.loss == a.loss);
  CHECK(two.threads == 2);
  CHECK(two.steps_at_one_thread >= ThreadChoice::kTrialSteps);
  CHECK(contains(two.threads_text(), "1 thread in " + std::to_string(two.steps_at_one_thread) + " of 16 steps and 2"));
  const std::vector<double> cpu = a.epoch_cpu_seconds();  // the running total at the end of each epoch
  REQUIRE(cpu.size() == 4);
  double first_epoch = 0;
  for (std::size_t s = 0; s < 4; ++s) first_epoch += a.step_cpu_ms[s] / 1000.0;
  CHECK(cpu[0] == doctest::Approx(first_epoch));
  CHECK(std::is_sorted(cpu.begin(), cpu.end()));
  Line m;
  Recipe none;
  none.label = "empty";
  CHECK_THROWS_WITH_AS(train(m, 0, [](const std::vector<std::size_t>&) { return Tensor<float>(); }, none),
                       "train 'empty': no training examples", std::invalid_argument);
  none.epochs = 0;
  CHECK_THROWS_WITH_AS(train(m, n, [](const std::vector<std::size_t>&) { return Tensor<float>(); }, none),
                       "train 'empty': epochs must be at least 1, got 0", std::invalid_argument);
}

TEST_CASE("figures: attention maps, head grids, curves and bars are saved and shown") {
  TempDir d;
  Lesson L(kInfo, args_in(d));
  const xt::xarray<double> w = {{0.7, 0.3}, {0.1, 0.9}};
  save_figure(attention_figure({{w, {"a", "b"}, {"x", "y"}, "one"}, {w, {}, {}, "two"}, {w, {}, {}, "three"}},
                               {"Attention", 2}),
              "maps", "Three maps");
  xt::xarray<double> heads = xt::zeros<double>({3, 2, 2});
  xt::view(heads, 0) = w;
  save_figure(head_grid(heads, {"a", "b"}, {"x", "y"}, "Heads", 2), "heads", "Heads");
  History h;
  h.loss = {3, 2.5, 2, 1.5, 1.2, 1.1, 1.0, 0.9};
  h.epoch_loss = {2.5, 1.05};
  h.validation = {{"loss", {2.0, 1.2}}};
  save_figure(loss_curves({{"run", &h}}, {"Loss"}), "curves", "Curves");
  h.steps_per_epoch = 4;
  h.step_cpu_ms = std::vector<double>(8, 2.0);
  h.validation.push_back({"accuracy", {0.5, 0.75}});
  ScoreFigureOptions by_cost{"Accuracy"};
  by_cost.chance = 0.25;
  save_figure(score_against_cost({{"run", &h}, {"again", &h}}, by_cost), "by_cost", "Accuracy against steps and time");
  CHECK_THROWS_AS(score_against_cost({}, by_cost), plots::PlotError);
  by_cost.score = "bleu";
  CHECK_THROWS_AS(score_against_cost({{"run", &h}}, by_cost), std::out_of_range);
  plots::Figure bars(1200, 800);
  bar_panel(bars.panel(0), {"a", "b"}, {{"first", {0.5, 0.25}}, {"second", {1.0, 0.75}}}, 2, 1.1);
  save_figure(bars, "bars", "Bars");
  save_figure(heatmap_figure(w, plots::HeatmapOptions{}, {"One map", "key", "query"}), "one_map", "One map");
  // "+" marks: two strokes per point, the pen lifted (NaN) after each stroke.
  const plots::Series marks = plus_marks(xt::xarray<double>{1.0, 2.0}, xt::xarray<double>{5.0, 6.0}, 0.1, 0.5);
  CHECK(marks.x.size() == 12);
  CHECK(marks.x(0) == doctest::Approx(0.9));
  CHECK(marks.y(4) == doctest::Approx(5.5));
  CHECK(std::isnan(marks.x(2)));
  CHECK_THROWS_AS(plus_marks(xt::xarray<double>{1.0}, xt::xarray<double>{1.0, 2.0}, 0.1, 0.1), plots::PlotError);
  CHECK_THROWS_AS(bar_panel(bars.panel(0), {"a", "b"}, {{"short", {0.5}}}), plots::PlotError);
  CHECK_THROWS_AS(attention_figure({}, {"none"}), plots::PlotError);
  for (const char* stem : {"maps", "heads", "curves", "by_cost", "bars", "one_map"})
    for (const char* ext : {".png", ".svg"}) CHECK(read_file(lesson().path(std::string(stem) + ext)).size() > 1000);
  CHECK(number_labels(5, 2) == std::vector<std::string>{"0", "", "2", "", "4"});
  CHECK(numbered("head ", 3, 1) == std::vector<std::string>{"head 1", "head 2", "head 3"});
  CHECK(numbered("p=", 2) == std::vector<std::string>{"p=0", "p=1"});
  CHECK(numbered("x", 0).empty());
  CHECK(value_labels(xt::xarray<double>{0.5, 1.25, 2.0}, 2, 1) == std::vector<std::string>{"0.5", "", "2.0"});
  CHECK(char_labels("a b", true) == std::vector<std::string>{"a", "\u2423", "b", "<eos>"});
  CHECK(char_labels("x\n\ty") == std::vector<std::string>{"x", "\u23ce", "\u21e5", "y"});
  CHECK(visible("<eos>") == "<eos>");
}
TEST_CASE("bar_figure and line_panels: the panels a lesson would lay out by hand, drawn the same; none refused") {
  TempDir d;
  Lesson L(kInfo, args_in(d));
  plots::Figure by_hand(1200, 800, 2, 1);
  by_hand.title("Bars");
  bar_panel(by_hand.panel(0).title("top").ylabel("share"), {"a", "b"}, {{"first", {0.5, 0.25}}}, 2, 1.1);
  bar_panel(by_hand.panel(1).ylabel("share"), {"c"}, {{"first", {0.75}}, {"second", {1.0}}}, 2, 1.1);
  save_figure(by_hand, "bars_by_hand", "Bars");
  save_figure(bar_figure({{"top", "share", {"a", "b"}, {{"first", {0.5, 0.25}}}},
                          {"", "share", {"c"}, {{"first", {0.75}}, {"second", {1.0}}}}},
                         {"Bars", 2, 1.1, 1200, 800}),
              "bars_helper", "Bars");
  CHECK(read_file(lesson().path("bars_helper.png")) == read_file(lesson().path("bars_by_hand.png")));
  CHECK_THROWS_WITH_AS(bar_figure({}, {"Nothing"}), doctest::Contains("bar_figure: no panels for 'Nothing'"),
                       plots::PlotError);
  CHECK_THROWS_AS(bar_figure({{"", "", {"a", "b"}, {{"short", {0.5}}}}}, {"Short"}), plots::PlotError);
  const std::vector<plots::Series> first = {curve("up", {1.0, 2.0, 3.0})}, second = {curve("", {3.0, 1.0, 2.0})};
  plots::LineOptions o;
  o.markers = true, o.ymin = 0.0;
  plots::Figure lines(1200, 900, 2, 1);
  lines.title("Lines");
  plots::line_plot(lines.panel(0).title("one").ylabel("y").xlabel(""), first, o);
  plots::line_plot(lines.panel(1).title("two").ylabel("y").xlabel("x"), second, o);
  save_figure(lines, "lines_by_hand", "Lines");
  LinePanelsOptions style{"Lines", "x", "y", o, 1200, 900};
  save_figure(line_panels({{"one", first}, {"two", second}}, style), "lines_helper", "Lines");
  CHECK(read_file(lesson().path("lines_helper.png")) == read_file(lesson().path("lines_by_hand.png")));
  CHECK_THROWS_AS(line_panels({}, style), plots::PlotError);
  save_diagram(multi_head_diagram(), "multi_head", "Multi-head attention");
  CHECK(read_file(lesson().path("multi_head.svg")).find("head h") != std::string::npos);
}

TEST_CASE("in_batches: consecutive rows, the last batch shorter") {
  std::vector<std::vector<std::size_t>> seen;
  in_batches(7, 3, [&](const std::vector<std::size_t>& rows) { seen.push_back(rows); });
  CHECK(seen == std::vector<std::vector<std::size_t>>{{0, 1, 2}, {3, 4, 5}, {6}});
  seen.clear();
  in_batches(0, 3, [&](const std::vector<std::size_t>& rows) { seen.push_back(rows); });
  CHECK(seen.empty());
  CHECK_THROWS_WITH_AS(in_batches(3, 0, [](const std::vector<std::size_t>&) {}),
                       "in_batches: the batch size must be positive, got 0", std::invalid_argument);
}

TEST_CASE("rows_in_batches: the blocks in row order, without the tape, and bad blocks named") {
  const Tensor<float> w(Array<float>{2.0f, 3.0f}, true);
  const Array<float> got = rows_in_batches(5, 2, [&](const std::vector<std::size_t>& rows) {
    CHECK_FALSE(grad_enabled());
    Array<float> x = Array<float>::from_shape({rows.size(), 2});
    for (std::size_t i = 0; i < rows.size(); ++i) x(i, 0) = x(i, 1) = float(rows[i]);
    const Tensor<float> y = mul(Tensor<float>(x), w);  // (B, 2): row r is (2r, 3r)
    CHECK_FALSE(y.requires_grad());
    return y.value();
  });
  REQUIRE(got.shape() == std::vector<std::size_t>{5, 2});
  for (std::size_t r = 0; r < 5; ++r) {
    CHECK(got(r, 0) == 2.0f * float(r));
    CHECK(got(r, 1) == 3.0f * float(r));
  }
  CHECK_THROWS_WITH_AS(rows_in_batches(5, 2, [](const std::vector<std::size_t>&) { return Array<float>(xt::zeros<float>({3})); }),
                       doctest::Contains("rows_in_batches: a block for 2 rows has shape (3)"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(rows_in_batches(5, 2, [](const std::vector<std::size_t>& rows) {
                         return Array<float>(xt::zeros<float>({rows.size(), rows.front() == 0 ? std::size_t(2) : 3}));
                       }),
                       doctest::Contains("unlike the first block's rows"), std::invalid_argument);
  CHECK_THROWS_AS(rows_in_batches(0, 2, [](const std::vector<std::size_t>&) { return Array<float>(); }),
                  std::invalid_argument);
}

TEST_CASE("class_scores: accuracy and the mean cross-entropy of the probabilities") {
  const Array<float> p = {{0.7f, 0.2f, 0.1f}, {0.1f, 0.1f, 0.8f}, {0.5f, 0.25f, 0.25f}};
  const Scores s = class_scores(p, IndexArray{0, 2, 1});
  REQUIRE(s.size() == 2);
  CHECK(s[0].first == "accuracy");
  CHECK(s[0].second == doctest::Approx(2.0 / 3));
  CHECK(s[1].first == "loss");
  CHECK(s[1].second == doctest::Approx(-(std::log(0.7) + std::log(0.8) + std::log(0.25)) / 3).epsilon(1e-6));
}

TEST_CASE("train_seq2seq and record: the recipe trains an encoder-decoder, the validation loss after every epoch; the plan in the configuration; empty splits named") {
  // Copy two-token sequences over tokens 4..7 (0..3 are <pad> <bos> <eos> <unk>).
  nn::data::EncodedSplits data;
  for (Index a = 4; a < 8; ++a)
    for (Index b = 4; b < 8; ++b) {
      nn::data::EncodedPairs& split = (a + b) % 5 == 0 ? data.validation : data.train;
      split.source.push_back({a, b});
      split.target.push_back({a, b});
    }
  REQUIRE(data.validation.size() > 0);
  nn::rnn::Seq2SeqConfig c;
  c.embed = 4, c.encoder_hidden = 4, c.decoder_hidden = 8, c.attention_hidden = 4;
  Generator gen(1);
  nn::rnn::Seq2Seq model(c, 8, 8, gen);
  const double before = nn::rnn::mean_loss(model, data.validation);
  Recipe r;
  r.label = "copy";
  r.epochs = 3, r.batch = 4, r.lr = 0.01, r.decay = Decay::constant;
  const History h = train_seq2seq(model, data, r);
  CHECK(h.steps == std::size_t(fit_steps(data.train.size(), r)));
  REQUIRE(h.validation_of("loss").size() == 3);
  CHECK(h.validation_of("loss").back() == doctest::Approx(nn::rnn::mean_loss(model, data.validation)));
  CHECK(h.validation_of("loss").back() < before);
  TempDir d;  // the plan, recorded in the run's configuration
  {
    Lesson L(kInfo, args_in(d));
    record(Seq2SeqPlan{3000, c, r});
    nn::rnn::Evaluation test;
    test.exact_match = 0.25, test.char_accuracy = 0.5;
    record_scores("_copy", test, h);
    CHECK_THROWS_WITH_AS(record_scores("_raw", test, History{}), doctest::Contains("record_scores '_raw'"),
                         std::invalid_argument);
    L.finish();
  }
  const Json m = Json::parse(read_file(d / "lesson" + "/metrics.json"));
  CHECK(m["metrics"]["test_exact_match_copy"] == 0.25);
  CHECK(m["metrics"]["test_char_accuracy_copy"] == 0.5);
  CHECK(m["metrics"]["validation_loss_copy"] == doctest::Approx(h.validation_of("loss").back()));
  CHECK(m["configuration"]["examples"] == 3000);
  CHECK(m["configuration"]["hidden"] == 8);
  CHECK(m["configuration"]["epochs"] == 3);
  CHECK(m["configuration"]["lr"] == doctest::Approx(0.01));
  nn::data::EncodedSplits no_validation = data;
  no_validation.validation = {};
  CHECK_THROWS_WITH_AS(train_seq2seq(model, no_validation, r),
                       doctest::Contains("train_seq2seq 'copy': the validation split is empty"), std::invalid_argument);
}

TEST_CASE("History: the step at the end of each epoch, and the first epoch's end at which a score reached a level") {
  History h;
  h.steps_per_epoch = 5, h.epoch_loss = {1.0, 0.5, 0.25};
  h.validation = {{"accuracy", {0.3, 0.9, 0.95}}};
  CHECK(h.epoch_steps() == std::vector<double>{5, 10, 15});
  CHECK(h.steps_to_reach("accuracy", 0.9) == 10);
  CHECK(h.steps_to_reach("accuracy", 0.2) == 5);
  CHECK(h.steps_to_reach("accuracy", 0.99) == 0);  // never
  CHECK_THROWS_WITH_AS(h.steps_to_reach("loss", 0.1), doctest::Contains("loss"), std::out_of_range);
}

TEST_CASE("score_panels: a held-out score by step, a panel per group of runs; no groups, an empty group, a missing score named") {
  TempDir d;
  Lesson L(kInfo, args_in(d));
  History h;
  h.steps_per_epoch = 4, h.epoch_loss = {2.5, 1.05};
  h.validation = {{"accuracy", {0.5, 0.75}}};
  ScoreFigureOptions style{"Accuracy by task"};
  style.width = 1200, style.height = 1400;
  save_figure(score_panels({{"task a", {{"run", &h}, {"again", &h}}}, {"task b", {{"run", &h}}}}, style), "panels", "Two panels");
  for (const char* ext : {".png", ".svg"}) CHECK(read_file(lesson().path(std::string("panels") + ext)).size() > 1000);
  CHECK_THROWS_WITH_AS(score_panels({}, style), doctest::Contains("score_panels"), plots::PlotError);
  CHECK_THROWS_WITH_AS(score_panels({{"task a", {}}}, style), doctest::Contains("'task a' has no runs"), plots::PlotError);
  style.score = "bleu";
  CHECK_THROWS_AS(score_panels({{"task a", {{"run", &h}}}}, style), std::out_of_range);
}
