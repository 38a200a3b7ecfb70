// The figures library: colormaps against published values, layout and pixels of written PNGs,
// well-formed SVG and PDF, atomic saves, and every bad input named in its error message.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <cairo.h>
#include <unistd.h>

#include "plots/axes.hpp"
#include "plots/plots.hpp"

namespace fs = std::filesystem;
using namespace attnlab::plots;
using Mat = xt::xarray<double>;

namespace {

// A fresh folder per test case, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    static int n = 0;
    path = fs::temp_directory_path() / ("attnlab_test_plots_" + std::to_string(getpid()) + "_" + std::to_string(n++));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
  std::vector<std::string> entries() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(path)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }
};

struct Png {
  int width = 0, height = 0;
  std::vector<std::uint32_t> pixels;  // ARGB, opaque figures so not premultiplied in effect
  std::array<int, 3> rgb(double x, double y) const {
    const std::uint32_t p = pixels[std::size_t(int(y)) * std::size_t(width) + std::size_t(int(x))];
    return {int((p >> 16) & 0xff), int((p >> 8) & 0xff), int(p & 0xff)};
  }
};

Png read_png(const std::string& path) {
  cairo_surface_t* s = cairo_image_surface_create_from_png(path.c_str());
  REQUIRE(cairo_surface_status(s) == CAIRO_STATUS_SUCCESS);
  Png png;
  png.width = cairo_image_surface_get_width(s);
  png.height = cairo_image_surface_get_height(s);
  const int stride = cairo_image_surface_get_stride(s);
  const unsigned char* data = cairo_image_surface_get_data(s);
  for (int y = 0; y < png.height; ++y)
    for (int x = 0; x < png.width; ++x)
      png.pixels.push_back(*reinterpret_cast<const std::uint32_t*>(data + y * stride + x * 4));
  cairo_surface_destroy(s);
  return png;
}

std::array<int, 3> bytes(const Color& c) {
  return {int(std::lround(c.r * 255)), int(std::lround(c.g * 255)), int(std::lround(c.b * 255))};
}

void check_close(const std::array<int, 3>& got, const std::array<int, 3>& want, int tol) {
  for (int k = 0; k < 3; ++k) CHECK(std::abs(got[k] - want[k]) <= tol);
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// True if every element opened in the SVG is closed in order: declarations, comments and
// self-closing tags aside, the tags form a balanced tree with one root.
bool svg_balanced(const std::string& s) {
  std::vector<std::string> stack;
  int roots = 0;
  for (std::size_t i = s.find('<'); i != std::string::npos; i = s.find('<', i + 1)) {
    if (s.compare(i, 4, "<!--") == 0) {
      i = s.find("-->", i);
      if (i == std::string::npos) return false;
      continue;
    }
    if (s.compare(i, 2, "<?") == 0 || s.compare(i, 2, "<!") == 0) continue;
    const std::size_t end = s.find('>', i);
    if (end == std::string::npos) return false;
    const std::string tag = s.substr(i + 1, end - i - 1);
    if (tag.empty()) return false;
    if (tag[0] == '/') {
      if (stack.empty() || stack.back() != tag.substr(1, tag.find_first_of(" \t\n", 1) - 1)) return false;
      stack.pop_back();
    } else if (tag.back() != '/') {
      if (stack.empty()) ++roots;
      stack.push_back(tag.substr(0, tag.find_first_of(" \t\n/")));
    }
    i = end;
  }
  return stack.empty() && roots == 1;
}

void check_svg(const std::string& path) {
  const std::string s = read_text(path);
  REQUIRE(!s.empty());
  CHECK((s.rfind("<?xml", 0) == 0 || s.rfind("<svg", 0) == 0));
  const std::size_t last = s.find_last_not_of(" \n\r\t");
  REQUIRE(last != std::string::npos);
  CHECK(s.substr(0, last + 1).size() >= 6);
  CHECK(s.compare(last + 1 - 6, 6, "</svg>") == 0);
  CHECK(svg_balanced(s));
}

// The message of the PlotError thrown by f ("" if none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const PlotError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("colormaps match the published tables") {
  const Colormap v = Colormap::viridis();
  check_close(bytes(v(0.0)), bytes(Color::hex("#440154")), 1);
  check_close(bytes(v(0.5)), bytes(Color::hex("#21918c")), 1);
  check_close(bytes(v(1.0)), bytes(Color::hex("#fde725")), 1);
  check_close(bytes(v(-3.0)), bytes(v(0.0)), 0);  // clamped
  CHECK(bytes(Colormap::reds()(1.0)) == bytes(Color::hex("#67000d")));
  CHECK(bytes(Colormap::reds()(0.0)) == bytes(Color::hex("#fff5f0")));
  CHECK(bytes(Colormap::blues()(1.0)) == bytes(Color::hex("#08306b")));
  const Colormap d = Colormap::rdbu();
  CHECK(d.diverging());
  CHECK(bytes(d(0.0)) == bytes(Color::hex("#053061")));  // negative: blue
  CHECK(bytes(d(0.5)) == bytes(Color::hex("#f7f7f7")));  // zero: near white
  CHECK(bytes(d(1.0)) == bytes(Color::hex("#67001f")));  // positive: red
  CHECK(bytes(Colormap::by_name("RdBu")(0.0)) == bytes(Color::hex("#67001f")));
  CHECK(bytes(v(std::nan(""))) == bytes(nan_color()));
  CHECK(contains(error_of([] { Colormap::by_name("jet"); }), "\"jet\""));
}

TEST_CASE("annotation text is black on light cells and white on dark ones") {
  const Colormap v = Colormap::viridis();
  CHECK(bytes(text_color_on(v(1.0))) == std::array<int, 3>{0, 0, 0});
  CHECK(bytes(text_color_on(v(0.0))) == std::array<int, 3>{255, 255, 255});
  CHECK(luminance(Color{1, 1, 1}) == doctest::Approx(1.0));
  CHECK(luminance(Color{0, 0, 0}) == doctest::Approx(0.0));
}

TEST_CASE("heatmap ranges: data range, symmetric around 0 for diverging maps, or fixed") {
  const Mat m = {{-0.2, 0.1}, {0.5, std::nan("")}};
  HeatmapOptions o;
  auto r = heatmap_range(m, o);
  CHECK(r.first == doctest::Approx(-0.2));
  CHECK(r.second == doctest::Approx(0.5));
  o.cmap = Colormap::rdbu();
  r = heatmap_range(m, o);
  CHECK(r.first == doctest::Approx(-0.5));
  CHECK(r.second == doctest::Approx(0.5));
  o.vmin = -1;
  o.vmax = 2;
  r = heatmap_range(m, o);
  CHECK(r.first == -1);
  CHECK(r.second == 2);
  o.vmin = 3;
  CHECK(contains(error_of([&] { heatmap_range(m, o); }), "vmin = 3"));
}

TEST_CASE("nice ticks are 1, 2 or 5 times a power of ten") {
  auto t = nice_ticks(0, 1, 5);
  REQUIRE(t.size() == 6);
  CHECK(t[1].value == doctest::Approx(0.2));
  CHECK(t[1].label == "0.2");
  t = nice_ticks(3, 97, 5);
  REQUIRE(!t.empty());
  CHECK(t.front().value == doctest::Approx(20));
  CHECK(t.back().value == doctest::Approx(80));
  t = nice_ticks(-1, 1, 4);
  CHECK(t.front().label == "\u22121.0");
  std::vector<std::string> labels;
  for (const Tick& k : log_ticks(0.01, 10))
    if (!k.label.empty()) labels.push_back(k.label);
  CHECK(labels == std::vector<std::string>{"0.01", "0.1", "1", "10"});
  // Within one decade, where 1, 2 and 5 would leave one label, every digit is labelled.
  labels.clear();
  for (const Tick& k : log_ticks(0.3, 0.9))
    if (!k.label.empty()) labels.push_back(k.label);
  CHECK(labels == std::vector<std::string>{"0.3", "0.4", "0.5", "0.6", "0.7", "0.8", "0.9"});
  CHECK(format_power_of_ten(-5) == "10\u207b\u2075");
}

TEST_CASE("a heatmap PNG has the figure's size and the hottest cell the colormap's top color") {
  TempDir dir;
  Mat m = xt::zeros<double>({4, 5});
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 5; ++j) m(i, j) = 0.1 * double(i + j);
  m(2, 3) = 5.0;  // hottest
  m(0, 0) = -1.0; // coldest
  for (const Colormap& cmap : {Colormap::viridis(), Colormap::reds(), Colormap::blues()}) {
    Figure fig(1200, 800, 1, 1, 2.0);
    fig.title("Test été");
    HeatmapOptions o;
    o.cmap = cmap;
    o.x_labels = {"a", "b", "c", "d", "à"};
    o.y_labels = {"q1", "q2", "q3", "été"};
    heatmap(fig.panel(0, 0).xlabel("Keys").ylabel("Queries"), m, o);
    const std::string path = dir / ("heat_" + cmap.name() + ".png");
    fig.save(path);
    const Png png = read_png(path);
    CHECK(png.width == 1200);
    CHECK(png.height == 800);
    const Rect d = fig.plot_rect(0, 0);
    CHECK(d.w > 300);
    const double cw = d.w / 5, ch = d.h / 4;
    check_close(png.rgb(d.x + 3.5 * cw, d.y + 2.5 * ch), bytes(cmap(1.0)), 2);
    check_close(png.rgb(d.x + 0.5 * cw, d.y + 0.5 * ch), bytes(cmap(0.0)), 2);
  }
}

TEST_CASE("a figure's text log: the smallest font drawn, ticks by default, shrunk cell numbers when they are smaller") {
  TempDir dir;
  Mat m = xt::zeros<double>({3, 3});
  HeatmapOptions o;
  o.annotate = false;
  Figure plain(1200, 800, 1, 1, 2.0);
  heatmap(plain.panel(0, 0).xlabel("Keys"), m, o);
  TextLog ticks;
  plain.save(dir / "plain.png", &ticks);
  CHECK(ticks.drawn > 3);
  CHECK(ticks.smallest == doctest::Approx(font_size::tick));
  // 20 columns of numbers in a panel about 500 pixels wide: the numbers shrink to fit their cells.
  Mat wide = xt::zeros<double>({2, 20}) + 0.123;
  o.annotate = true;
  o.decimals = 3;
  Figure crowded(1200, 800, 1, 1, 2.0);
  heatmap(crowded.panel(0, 0), wide, o);
  TextLog cells;
  crowded.save(dir / "crowded.svg", &cells);  // any format draws the same text
  CHECK(cells.drawn > ticks.drawn);
  CHECK(cells.smallest < font_size::annotation);
  CHECK(cells.smallest >= 6);  // below 6 px the numbers are left out
}

TEST_CASE("a log axis says so in its label, once") {
  LineOptions lo;
  lo.log_y = true;
  Figure fig(800, 500, 1, 3, 1.0);
  line_plot(fig.panel(0, 0).xlabel("n").ylabel("milliseconds"), {Series("t", Mat{1.0, 10.0})}, lo);
  line_plot(fig.panel(0, 1).xlabel("n").ylabel("loss (log)"), {Series("t", Mat{1.0, 10.0})}, lo);
  line_plot(fig.panel(0, 2), {Series("t", Mat{1.0, 10.0})}, lo);
  CHECK(fig.panel(0, 0).shown_ylabel() == "milliseconds (log scale)");
  CHECK(fig.panel(0, 0).shown_xlabel() == "n");  // a linear axis is left as it is
  CHECK(fig.panel(0, 1).shown_ylabel() == "loss (log)");
  CHECK(fig.panel(0, 2).shown_ylabel() == "log scale");
}

TEST_CASE("a diverging heatmap puts zero at the middle color and NaN in grey") {
  TempDir dir;
  const Mat m = {{-2.0, 0.0}, {1.0, std::nan("")}};
  Figure fig(600, 500, 1, 1, 1.0);
  HeatmapOptions o;
  o.cmap = Colormap::rdbu();
  o.square_cells = true;
  heatmap(fig.panel(0, 0), m, o);
  fig.save(dir / "div.png");
  const Png png = read_png(dir / "div.png");
  const Rect d = fig.plot_rect(0, 0);
  const double cw = d.w / 2, ch = d.h / 2;
  check_close(png.rgb(d.x + 0.5 * cw, d.y + 0.5 * ch), bytes(o.cmap(0.0)), 2);   // -2: bottom of [-2, 2]
  check_close(png.rgb(d.x + 1.5 * cw, d.y + 0.5 * ch), bytes(o.cmap(0.5)), 2);   // 0: the middle
  check_close(png.rgb(d.x + 0.5 * cw, d.y + 1.5 * ch), bytes(o.cmap(0.75)), 2);  // 1
  // The NaN cell: grey fill or grey hatch, never a colormap color.
  const auto nan_px = png.rgb(d.x + 1.5 * cw + 1, d.y + 1.5 * ch);
  CHECK(nan_px[0] == nan_px[1]);
  CHECK(nan_px[1] == nan_px[2]);
  CHECK(nan_px[0] < 240);
}

TEST_CASE("heatmap_grid: Head i titles, one shared range, tick labels on the outer panels only") {
  TempDir dir;
  Mat heads = xt::zeros<double>({3, 4, 4});
  heads(1, 2, 2) = 1.0;  // the hottest cell of all heads is in head 2
  heads(0, 0, 0) = 0.5;
  HeatmapGridOptions o;
  o.cols = 2;
  o.heatmap.x_labels = o.heatmap.y_labels = {"the", "cat", "sat", "."};
  o.width_px = 1000;
  o.height_px = 900;
  Figure fig = heatmap_grid(heads, o);
  REQUIRE(fig.rows() == 2);
  REQUIRE(fig.cols() == 2);
  CHECK(fig.panel(0, 0).title() == "Head 1");
  CHECK(fig.panel(1, 0).title() == "Head 3");
  CHECK(!fig.panel(0, 0).shown().x);  // head 3 below it
  CHECK(fig.panel(0, 0).shown().y);
  CHECK(fig.panel(0, 1).shown().x);   // nothing below head 2
  CHECK(!fig.panel(0, 1).shown().y);
  CHECK(fig.panel(1, 0).shown().x);
  CHECK(fig.panel(1, 0).xlabel() == "Keys");
  CHECK(fig.panel(0, 0).ylabel() == "Queries");
  const Rect a = fig.plot_rect(0, 0), b = fig.plot_rect(0, 1);
  CHECK(a.w == doctest::Approx(b.w));  // panels of one grid have one size
  CHECK(a.h == doctest::Approx(b.h));
  fig.save(dir / "grid.png");
  const Png png = read_png(dir / "grid.png");
  CHECK(png.width == 1000);
  const Colormap v = Colormap::viridis();
  check_close(png.rgb(b.x + 2.5 * b.w / 4, b.y + 2.5 * b.h / 4), bytes(v(1.0)), 2);
  check_close(png.rgb(a.x + 0.5 * a.w / 4, a.y + 0.5 * a.h / 4), bytes(v(0.5)), 2);  // 0.5 of the shared [0, 1]
}

TEST_CASE("heatmap cell text: characters printed in their cells, blank cells left alone; grid panel titles") {
  TempDir dir;
  Figure fig(800, 400, 1, 1, 1.0);
  HeatmapOptions o;
  o.vmin = 0.0;
  o.vmax = 1.0;
  o.colorbar = false;
  o.cell_text = {"W", "", "M", ""};  // row-major: W and M in the first row
  heatmap(fig.panel(0, 0), Mat{{0.0, 0.0, 0.0, 0.0}}, o);
  fig.save(dir / "text.png");
  const Png png = read_png(dir / "text.png");
  const Rect d = fig.plot_rect(0, 0);
  const double cw = d.w / 4;
  const auto dark = bytes(Colormap::viridis()(0.0));
  // Count the pixels of each cell that differ from its fill: the letters (white on dark) show.
  auto inked = [&](int j) {
    int n = 0;
    for (double x = d.x + j * cw + 2; x < d.x + (j + 1) * cw - 2; x += 1)
      for (double y = d.y + 2; y < d.bottom() - 2; y += 1) n += png.rgb(x, y) != dark;
    return n;
  };
  CHECK(inked(0) > 10);
  CHECK(inked(1) == 0);
  CHECK(inked(2) > 10);
  CHECK(inked(3) == 0);
  o.cell_text = {"a", "b"};
  CHECK(contains(error_of([&] { heatmap(fig.panel(0, 0), Mat{{0.0, 0.0, 0.0, 0.0}}, o); }),
                 "heatmap: 2 cell texts for a matrix of shape (1,4) with 4 cells"));

  HeatmapGridOptions g;
  g.panel_titles = {"Layer 1, head 1", "Layer 1, head 2"};
  Figure grid = heatmap_grid(Mat(xt::zeros<double>({2, 3, 3})), g);
  CHECK(grid.panel(0, 1).title() == "Layer 1, head 2");
  g.panel_titles = {"only one"};
  CHECK(contains(error_of([&] { heatmap_grid(Mat(xt::zeros<double>({2, 3, 3})), g); }), "1 panel titles for 2 panels"));
}

TEST_CASE("heatmap outlined cells: a box inside the cell, the cell's middle and the other cells untouched") {
  TempDir dir;
  Figure fig(800, 400, 1, 1, 1.0);
  HeatmapOptions o;
  o.vmin = 0.0;
  o.vmax = 1.0;
  o.colorbar = false;
  o.outlined = {{0, 2}};
  heatmap(fig.panel(0, 0), Mat{{0.0, 0.0, 0.0, 0.0}}, o);
  fig.save(dir / "outline.png");
  const Png png = read_png(dir / "outline.png");
  const Rect d = fig.plot_rect(0, 0);
  const double cw = d.w / 4;
  const auto dark = bytes(Colormap::viridis()(0.0)), red = bytes(o.outline_color);
  const double mid_y = d.y + d.h / 2;
  check_close(png.rgb(d.x + 2 * cw + 1.5, mid_y), red, 40);      // the box's left side
  check_close(png.rgb(d.x + 3 * cw - 1.5, mid_y), red, 40);      // and its right side
  check_close(png.rgb(d.x + 2.5 * cw, mid_y), dark, 2);          // the weight still shows inside
  check_close(png.rgb(d.x + 1 * cw + 1.5, mid_y), dark, 2);      // other cells keep their color
  o.outlined = {{1, 0}};
  CHECK(contains(error_of([&] { heatmap(fig.panel(0, 0), Mat{{0.0, 0.0, 0.0, 0.0}}, o); }),
                 "heatmap: outlined cell (1, 0) outside a matrix of shape (1,4)"));
}

TEST_CASE("float arrays are accepted") {
  xt::xarray<float> m = {{0.f, 1.f}, {2.f, 3.f}};
  Figure fig(400, 300, 1, 1, 1.0);
  heatmap(fig.panel(0, 0), m);
  CHECK(fig.panel(0, 0).plot() != nullptr);
  line_plot(fig.panel(0, 0), {Series("f", xt::xarray<float>{1.f, 2.f, 3.f})});
}

TEST_CASE("every kind of figure writes well-formed SVG, PDF and PNG") {
  TempDir dir;
  Figure fig(1600, 1000, 2, 2);
  fig.title("All kinds: été, à");
  HeatmapOptions ho;
  ho.annotate = true;
  ho.x_labels = {"un", "été", "à"};
  heatmap(fig.panel(0, 0).title("heatmap"), Mat{{0.1, 0.2, 0.7}, {0.3, 0.3, 0.4}}, ho);
  LineOptions lo;
  lo.log_y = true;
  lo.markers = true;
  line_plot(fig.panel(0, 1).title("loss").xlabel("step").ylabel("loss"),
            {Series("train", Mat{2.0, 1.0, 0.5, std::nan(""), 0.1}), Series("val", Mat{2.1, 1.2, 0.8, 0.7, 0.7})}, lo);
  BarOptions bo;
  bo.categories = {"copy", "sort"};
  bo.series = {"additive", "dot"};
  bo.value_labels = true;
  bar_chart(fig.panel(1, 0).title("bars"), Mat{{0.9, 0.5}, {0.95, 0.7}}, bo);
  ImageOptions io;
  io.caption = "image";
  io.overlay = Mat{{0.0, 1.0}, {0.5, 0.2}};
  image(fig.panel(1, 1), xt::zeros<double>({8, 8}), io);
  for (const char* ext : {".svg", ".pdf", ".png"}) fig.save(dir / (std::string("all") + ext));
  check_svg(dir / "all.svg");
  CHECK(read_text(dir / "all.pdf").rfind("%PDF-", 0) == 0);
  CHECK(read_png(dir / "all.png").width == 1600);
  CHECK(dir.entries() == std::vector<std::string>{"all.pdf", "all.png", "all.svg"});  // no temporaries left
  CHECK(svg_balanced("<svg><g><rect/></g></svg>"));
  CHECK(!svg_balanced("<svg><g></svg>"));
}

TEST_CASE("images are scaled up without blurring and overlays blend with alpha") {
  TempDir dir;
  Mat img = xt::zeros<double>({4, 4});
  img(0, 0) = 1.0;  // one white pixel in the top-left corner
  Figure fig(800, 800, 1, 2, 1.0);
  image(fig.panel(0, 0), img);
  ImageOptions io;
  io.overlay = Mat{{1.0, 0.0}, {0.0, 0.0}};
  io.overlay_alpha = 0.5;
  image(fig.panel(0, 1), xt::zeros<double>({28, 28}), io);
  fig.save(dir / "img.png");
  const Png png = read_png(dir / "img.png");
  const Rect d = fig.plot_rect(0, 0);
  const double px = d.w / 4;
  // Nearest-neighbour: the white block is uniformly white up to its edge, its neighbour black.
  check_close(png.rgb(d.x + 2, d.y + 2), {255, 255, 255}, 0);
  check_close(png.rgb(d.x + px - 2, d.y + px - 2), {255, 255, 255}, 0);
  check_close(png.rgb(d.x + px + 2, d.y + 2), {0, 0, 0}, 0);
  const Rect e = fig.plot_rect(0, 1);
  const auto top = bytes(Colormap::viridis()(1.0));
  check_close(png.rgb(e.x + e.w / 4, e.y + e.h / 4), {top[0] / 2, top[1] / 2, top[2] / 2}, 2);
}

TEST_CASE("a patch grid is drawn between the image's pixels, in its color") {
  TempDir dir;
  Figure fig(800, 800, 1, 1, 1.0);
  ImageOptions io;
  io.grid = 7;
  image(fig.panel(0, 0), xt::zeros<double>({28, 28}), io);
  fig.save(dir / "grid.png");
  const Png png = read_png(dir / "grid.png");
  const Rect d = fig.plot_rect(0, 0);
  const double px = d.w / 28;
  const auto line = png.rgb(d.x + 7 * px, d.y + 3 * px);  // on the line after 7 pixels: orange, antialiased
  CHECK(line[0] >= 100);
  CHECK(line[0] > line[1]);
  CHECK(line[2] <= 30);
  check_close(png.rgb(d.x + 3.5 * px, d.y + 3.5 * px), {0, 0, 0}, 0);     // inside the first patch
  io.grid = 5;
  CHECK(contains(error_of([&] { image(fig.panel(0, 0), xt::zeros<double>({28, 28}), io); }), "a grid of 5 pixels"));
}

TEST_CASE("bad input throws PlotError naming the function and the values") {
  Figure fig(800, 500);
  Panel& p = fig.panel(0, 0);
  std::string e = error_of([&] { heatmap(p, Mat(xt::zeros<double>({0, 3}))); });
  CHECK(contains(e, "heatmap"));
  CHECK(contains(e, "(0,3)"));
  HeatmapOptions o;
  o.x_labels = {"a", "b", "c", "d"};
  e = error_of([&] { heatmap(p, Mat(xt::zeros<double>({3, 5})), o); });
  CHECK(contains(e, "heatmap: 4 x labels"));
  CHECK(contains(e, "(3,5)"));
  o.x_labels.clear();
  o.y_labels = {"q"};
  e = error_of([&] { heatmap(p, Mat(xt::zeros<double>({3, 5})), o); });
  CHECK(contains(e, "1 y labels"));
  CHECK(contains(error_of([&] { heatmap(p, Mat(xt::zeros<double>({2, 2, 2}))); }), "(2,2,2)"));
  e = error_of([] { Figure f(0, 500); });
  CHECK(contains(e, "Figure"));
  CHECK(contains(e, "0 x 500"));
  CHECK(contains(error_of([] { Figure f(800, -5); }), "800 x -5"));
  CHECK(contains(error_of([] { Figure f(800, 500, 0, 2); }), "0 x 2"));
  CHECK(contains(error_of([&] { fig.panel(1, 0); }), "panel (1,0) outside a 1 x 1 grid"));
  const Mat nans = {std::nan(""), std::nan("")};
  e = error_of([&] { line_plot(p, {Series("loss", nans)}); });
  CHECK(contains(e, "line_plot"));
  CHECK(contains(e, "\"loss\""));
  CHECK(contains(e, "all NaN"));
  LineOptions lo;
  lo.log_y = true;
  CHECK(contains(error_of([&] { line_plot(p, {Series("neg", Mat{-1.0, 0.0})}, lo); }), "log y"));
  CHECK(contains(error_of([&] { line_plot(p, {Series("s", Mat{1.0, 2.0}, Mat{1.0, 2.0, 3.0})}); }), "(2)"));
  CHECK(contains(error_of([&] { line_plot(p, {}); }), "no series"));
  {  // Eleven curves on the ten colors of tab10: the eleventh looks like the first, and saving says so.
    TempDir dir;
    Figure many(800, 500, 1, 1, 1.0);
    std::vector<Series> curves;
    for (int k = 0; k < 11; ++k) curves.emplace_back("curve " + std::to_string(k), Mat{double(k), double(k + 1)});
    line_plot(many.panel(0, 0), curves);
    e = error_of([&] { many.save(dir / "many.png"); });
    CHECK(contains(e, "legend"));
    CHECK(contains(e, "\"curve 0\" and \"curve 10\" are drawn alike"));
    curves.back().dashed = true;  // told apart by its dash
    Figure told(800, 500, 1, 1, 1.0);
    line_plot(told.panel(0, 0), curves);
    CHECK_NOTHROW(told.save(dir / "told.png"));
  }
  BarOptions bo;
  bo.categories = {"a"};
  bo.series = {"x", "y"};
  CHECK(contains(error_of([&] { bar_chart(p, Mat{{1.0, 2.0}, {3.0, 4.0}}, bo); }), "1 category labels"));
  CHECK(contains(error_of([&] { image(p, Mat(xt::zeros<double>({4, 4, 4}))); }), "(4,4,4)"));
  Mat bad = xt::zeros<double>({2, 2});
  bad(1, 1) = std::nan("");
  CHECK(contains(error_of([&] { image(p, bad); }), "not finite"));
  CHECK(contains(error_of([&] { heatmap_grid(Mat(xt::zeros<double>({2, 3}))); }), "heatmap_grid"));
}

TEST_CASE("a failed save names the path and leaves no file or temporary behind") {
  TempDir dir;
  Figure fig(400, 300, 1, 1, 1.0);
  heatmap(fig.panel(0, 0), Mat{{1.0, 2.0}});
  // A folder that does not exist.
  const std::string missing = dir / "no/such/folder/fig.png";
  std::string e = error_of([&] { fig.save(missing); });
  CHECK(contains(e, "Figure::save"));
  CHECK(contains(e, missing));
  // A "folder" that is a file.
  std::ofstream(dir / "plain").put('x');
  e = error_of([&] { fig.save(dir / "plain/fig.svg"); });
  CHECK(contains(e, "plain/fig.svg"));
  // The destination is a directory: the temporary is written, the rename fails, and the
  // temporary must be removed.
  fs::create_directory(dir / "taken.png");
  e = error_of([&] { fig.save(dir / "taken.png"); });
  CHECK(contains(e, "taken.png"));
  // An unknown extension.
  e = error_of([&] { fig.save(dir / "fig.jpg"); });
  CHECK(contains(e, "fig.jpg"));
  CHECK(contains(e, ".png, .svg or .pdf"));
  CHECK(dir.entries() == std::vector<std::string>{"plain", "taken.png"});
  CHECK(fs::is_empty(dir.path / "taken.png"));
  // And a good save replaces an existing file in one step.
  fig.save(dir / "ok.png");
  fig.save(dir / "ok.png");
  CHECK(dir.entries() == std::vector<std::string>{"ok.png", "plain", "taken.png"});
}

TEST_CASE("plots_gallery writes every figure and rejects bad flags") {
  const std::string bin = std::string(ATTNLAB_BIN_DIR) + "/plots_gallery";
  REQUIRE_MESSAGE(fs::exists(bin), "plots_gallery is not built (tests/CMakeLists.txt makes test_plots depend on it)");
  TempDir dir;
  const std::string out = dir / "gallery";
  REQUIRE(std::system((bin + " --out " + out + " --scale 1 > /dev/null").c_str()) == 0);
  for (const char* name : {"alignment", "heads", "positional_encoding", "loss", "variance_dk", "bars", "diverging",
                           "image_attention"}) {
    const Png png = read_png(out + "/" + name + ".png");
    CHECK(png.width == 800);
    CHECK(png.height == 500);
    check_svg(out + "/" + name + ".svg");
  }
  CHECK(WEXITSTATUS(std::system((bin + " --bogus 2> /dev/null").c_str())) == 2);
  CHECK(WEXITSTATUS(std::system((bin + " --out 2> /dev/null").c_str())) == 2);
  CHECK(WEXITSTATUS(std::system((bin + " 2> /dev/null").c_str())) == 2);
}

TEST_CASE("save_graph: DOT laid out by Graphviz into PNG and SVG; bad DOT and formats are PlotErrors") {
  TempDir dir;
  const std::string dot = "digraph G { rankdir=LR; x [label=" + dot_quote("x\n(B, L, d)") + "]; y [label=" +
                          dot_quote("say \"hi\"") + "]; x -> y; }";
  save_graph(dot, dir / "g.png");
  save_graph(dot, dir / "g.svg");
  const Png png = read_png(dir / "g.png");
  CHECK(png.width > 100);
  check_svg(dir / "g.svg");
  std::ifstream svg(dir / "g.svg");
  const std::string text((std::istreambuf_iterator<char>(svg)), std::istreambuf_iterator<char>());
  CHECK(contains(text, "(B, L, d)"));
  CHECK(contains(text, "say &quot;hi&quot;"));
  CHECK(dot_quote("a\"b\\c\nd") == "\"a\\\"b\\\\c\\nd\"");
  CHECK(contains(error_of([&] { save_graph("digraph { x -> ", dir / "bad.png"); }), "save_graph: the text is not a DOT graph"));
  CHECK(contains(error_of([&] { save_graph(dot, dir / "g.gif"); }), ".png, .svg or .pdf"));
  CHECK(contains(error_of([&] { save_graph(dot, dir / "no/such/folder/g.png"); }), "save_graph: cannot write"));
  CHECK(dir.entries() == std::vector<std::string>{"g.png", "g.svg"});
}

TEST_CASE("tick labels that would run into each other give way, the roundest kept") {
  // A log axis from 0.07 to 1.3 labels every 0.07, 0.08, 0.09, 0.1, 0.2 ... 1: on 400 px the
  // first decade's labels, each 4 characters wide at 8 px a character, overlap.
  const std::vector<Tick> ticks = axis_ticks(0.07, 1.3, true);
  auto at = [](double v) { return 400 * (std::log10(v) - std::log10(0.07)) / (std::log10(1.3) - std::log10(0.07)); };
  auto width = [](const std::string& label) { return 8.0 * label.size(); };
  const std::vector<std::size_t> kept = labels_that_fit(ticks, at, width, 4.0);
  std::vector<std::string> labels;
  for (std::size_t i : kept) labels.push_back(ticks[i].label);
  CHECK(std::find(labels.begin(), labels.end(), "0.1") != labels.end());  // the round ones stay
  CHECK(std::find(labels.begin(), labels.end(), "0.5") != labels.end());
  CHECK(std::find(labels.begin(), labels.end(), "0.08") == labels.end());  // a crowded one goes
  for (std::size_t a = 1; a < kept.size(); ++a) {  // and no two kept labels touch
    const double left = at(ticks[kept[a]].value) - width(ticks[kept[a]].label) / 2;
    const double right = at(ticks[kept[a - 1]].value) + width(ticks[kept[a - 1]].label) / 2;
    CHECK(left >= right + 4.0);
  }
  // Labels with room are all kept.
  const std::vector<Tick> linear = axis_ticks(0, 1000, false);
  CHECK(labels_that_fit(linear, [](double v) { return v; }, width, 4.0).size() ==
        std::size_t(std::count_if(linear.begin(), linear.end(), [](const Tick& t) { return !t.label.empty(); })));
}
