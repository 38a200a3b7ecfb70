// plots_gallery --out DIR [--scale S]: one figure of each kind, from made-up data, in PNG and SVG.
// A visual check of the figures library and the source of docs/gallery/.
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <xtensor/xview.hpp>

#include "io/files.hpp"
#include "io/program.hpp"
#include "plots/plots.hpp"

using namespace attnlab;
using namespace attnlab::plots;
using Mat = xt::xarray<double>;

namespace {

constexpr int kWidth = 800, kHeight = 500;  // logical px; PNG size is this times --scale

void softmax_rows(Mat& m) {
  for (std::size_t i = 0; i < m.shape()[0]; ++i) {
    double mx = -1e300, sum = 0;
    for (std::size_t j = 0; j < m.shape()[1]; ++j) mx = std::max(mx, m(i, j));
    for (std::size_t j = 0; j < m.shape()[1]; ++j) sum += m(i, j) = std::exp(m(i, j) - mx);
    for (std::size_t j = 0; j < m.shape()[1]; ++j) m(i, j) /= sum;
  }
}

// Scores: `peak` on the aligned pairs, uniform noise elsewhere; then a softmax per row.
Mat attention(std::size_t rows, std::size_t cols, const std::vector<std::pair<int, int>>& peaks, double peak,
              std::mt19937& rng, double noise = 1.0) {
  std::uniform_real_distribution<double> u(0, noise);
  Mat m = Mat::from_shape({rows, cols});
  for (auto& v : m) v = u(rng);
  for (auto [i, j] : peaks) m(i, j) += peak;
  softmax_rows(m);
  return m;
}

// PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(p / 10000^(2i/d)).
Mat positional_encoding(std::size_t n, std::size_t d) {
  Mat pe = Mat::from_shape({n, d});
  for (std::size_t p = 0; p < n; ++p)
    for (std::size_t i = 0; i < d; i += 2) {
      const double angle = double(p) / std::pow(10000.0, double(i) / double(d));
      pe(p, i) = std::sin(angle);
      if (i + 1 < d) pe(p, i + 1) = std::cos(angle);
    }
  return pe;
}

Figure alignment(double scale) {
  const std::vector<std::string> en = {"The", "agreement", "on", "the", "European", "Economic",
                                       "Area", "was", "signed", "in", "Porto", "."};
  const std::vector<std::string> fr = {"L'", "accord", "sur", "la", "zone", "économique", "européenne",
                                       "a", "été", "signé", "à", "Porto", "."};
  // French word order reverses "European Economic Area" -> "zone économique européenne".
  std::mt19937 rng(1);
  Mat a = attention(fr.size(), en.size(),
                    {{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 6}, {5, 5}, {6, 4}, {7, 7}, {8, 7}, {8, 8},
                     {9, 8}, {10, 9}, {11, 10}, {12, 11}},
                    4.0, rng);
  Figure fig(int(kWidth * scale), int(kHeight * scale), 1, 1, scale);
  fig.title("Cross-attention: English → French");
  HeatmapOptions o;
  o.x_labels = en;
  o.y_labels = fr;
  o.annotate = true;
  o.decimals = 2;
  o.vmin = 0;
  o.vmax = 1;
  o.colorbar_label = "attention weight";
  heatmap(fig.panel(0, 0).xlabel("Keys (English source)").ylabel("Queries (French output)"), a, o);
  return fig;
}

Figure heads(double scale) {
  const std::vector<std::string> tok = {"the", "cat", "sat", "on", "the", "mat", "."};
  const std::size_t n = tok.size();
  std::mt19937 rng(2);
  Mat all = Mat::from_shape({8, n, n});
  std::vector<std::vector<std::pair<int, int>>> patterns(8);
  for (int i = 0; i < int(n); ++i) {
    patterns[0].push_back({i, std::max(0, i - 1)});          // previous token
    patterns[1].push_back({i, i});                           // itself
    patterns[2].push_back({i, std::min(int(n) - 1, i + 1)});  // next token
    patterns[3].push_back({i, 0});                           // first token
    patterns[5].push_back({i, i % 2 == 0 ? 1 : 5});          // nouns: "cat" or "mat"
    patterns[6].push_back({i, 2});                           // the verb
    patterns[7].push_back({i, int(n) - 1});                  // the full stop
  }
  for (std::size_t h = 0; h < 8; ++h) {
    Mat m = attention(n, n, patterns[h], h == 4 ? 0.0 : 3.5, rng, h == 4 ? 0.6 : 1.0);  // head 5: nearly uniform
    xt::view(all, h, xt::all(), xt::all()) = m;
  }
  HeatmapGridOptions o;
  o.heatmap.x_labels = tok;
  o.heatmap.y_labels = tok;
  o.heatmap.vmin = 0;
  o.heatmap.vmax = 1;
  o.heatmap.colorbar_label = "attention weight";
  o.title = "Self-attention weights of 8 heads";
  o.width_px = int(kWidth * scale);
  o.height_px = int(kHeight * scale);
  o.scale = scale;
  return heatmap_grid(all, o);
}

Figure positional(double scale) {
  const std::size_t n = 50, d = 64;
  const Mat pe = positional_encoding(n, d);
  Figure fig(int(kWidth * scale), int(kHeight * scale), 1, 2, scale);
  fig.title("Sinusoidal positional encoding, d = 64");
  HeatmapOptions o;
  o.cmap = Colormap::rdbu();
  o.colorbar_label = "PE(p, i)";
  o.square_cells = false;
  heatmap(fig.panel(0, 0).title("PE as a matrix").xlabel("Dimension i").ylabel("Position p"), pe, o);
  std::vector<Series> curves;
  for (std::size_t i : {6, 7, 8, 9}) curves.emplace_back("i = " + std::to_string(i), Mat(xt::view(pe, xt::all(), i)));
  LineOptions lo;
  lo.ymin = -1.2;
  lo.ymax = 1.2;
  line_plot(fig.panel(0, 1).title("Columns 6 to 9").xlabel("Position p").ylabel("PE(p, i)"), curves, lo);
  return fig;
}

Figure loss(double scale) {
  const std::size_t epochs = 40;
  std::mt19937 rng(3);
  std::normal_distribution<double> noise(0, 0.04);
  Mat ep = Mat::from_shape({epochs}), train = ep, val = ep;
  for (std::size_t e = 0; e < epochs; ++e) {
    ep(e) = double(e + 1);
    train(e) = (2.3 * std::exp(-double(e) / 5.0) + 0.03 * std::exp(-double(e) / 40.0)) * std::exp(noise(rng));
    // Validation: follows training, bottoms out, then creeps up (overfitting).
    val(e) = (2.3 * std::exp(-double(e) / 5.5) + 0.09 + 0.0025 * double(e)) * std::exp(noise(rng) / 2);
  }
  Figure fig(int(kWidth * scale), int(kHeight * scale), 1, 1, scale);
  fig.title("Training curves of a Transformer on the copy task");
  LineOptions o;
  o.log_y = true;
  o.markers = true;
  line_plot(fig.panel(0, 0).xlabel("Epoch").ylabel("Cross-entropy loss"),
            {Series("train", ep, train), Series("validation", ep, val)}, o);
  return fig;
}

// Var(q . k) for q, k with independent N(0, 1) entries is d_k; dividing by sqrt(d_k) brings it to 1.
Figure variance(double scale) {
  std::mt19937 rng(4);
  std::normal_distribution<double> g(0, 1);
  const std::vector<int> dks = {2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  Mat x = Mat::from_shape({dks.size()}), raw = x, scaled = x, theory = x;
  const int samples = 2000;
  for (std::size_t k = 0; k < dks.size(); ++k) {
    double s1 = 0, s2 = 0;
    for (int s = 0; s < samples; ++s) {
      double dot = 0;
      for (int i = 0; i < dks[k]; ++i) dot += g(rng) * g(rng);
      s1 += dot, s2 += dot * dot;
    }
    const double mean = s1 / samples, var = s2 / samples - mean * mean;
    x(k) = dks[k];
    raw(k) = var;
    scaled(k) = var / dks[k];
    theory(k) = dks[k];
  }
  Figure fig(int(kWidth * scale), int(kHeight * scale), 1, 1, scale);
  fig.title("Variance of attention scores against d_k");
  Series th("theory: d_k", x, theory);
  th.dashed = true;
  th.color = Color{0.45, 0.45, 0.45};
  LineOptions o;
  o.log_x = o.log_y = true;
  o.markers = true;
  line_plot(fig.panel(0, 0).xlabel("Key dimension d_k").ylabel("Variance over 2000 random (q, k)"),
            {Series("q · k", x, raw), Series("q · k / √d_k", x, scaled), th}, o);
  return fig;
}

Figure bars(double scale) {
  const Mat acc = {{0.97, 0.41, 0.35, 0.62}, {0.99, 0.93, 0.81, 0.90}, {0.99, 0.95, 0.86, 0.92}, {1.00, 0.99, 0.94, 0.97}};
  BarOptions o;
  o.categories = {"Copy", "Reverse", "Sort", "Date format"};
  o.series = {"Seq2seq, no attention", "Additive (Bahdanau)", "Dot-product (Luong)", "Transformer"};
  o.value_labels = true;
  Figure fig(int(kWidth * scale), int(kHeight * scale), 1, 1, scale);
  fig.title("Exact-match accuracy by task and model");
  bar_chart(fig.panel(0, 0).xlabel("Task").ylabel("Accuracy"), acc, o);
  return fig;
}

Figure diverging(double scale) {
  const std::vector<std::string> tok = {"<s>", "le", "chat", "a", "mangé", "la", "souris"};
  const std::size_t n = tok.size();
  std::mt19937 rng(5);
  std::vector<std::pair<int, int>> diag;
  for (int i = 0; i < int(n); ++i) diag.push_back({i, std::max(0, i - 1)});
  Mat before = attention(n, n, {}, 0, rng), after = attention(n, n, diag, 3.0, rng);
  Mat delta = after - before;
  // Causal mask: a query never sees later keys, so those cells have no value at all.
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i + 1; j < n; ++j) delta(i, j) = std::nan("");
  const Mat pe = positional_encoding(24, 32);
  Mat cosine = Mat::from_shape({24, 24});
  for (std::size_t a = 0; a < 24; ++a)
    for (std::size_t b = 0; b < 24; ++b) {
      double ab = 0, aa = 0, bb = 0;
      for (std::size_t i = 0; i < 32; ++i) ab += pe(a, i) * pe(b, i), aa += pe(a, i) * pe(a, i), bb += pe(b, i) * pe(b, i);
      cosine(a, b) = ab / std::sqrt(aa * bb);
    }
  Figure fig(int(kWidth * scale), int(kHeight * scale), 1, 2, scale);
  fig.title("Diverging colormap, centred on zero");
  HeatmapOptions o;
  o.cmap = Colormap::rdbu();
  o.x_labels = o.y_labels = tok;
  o.annotate = true;
  o.colorbar_label = "Δ weight";
  heatmap(fig.panel(0, 0).title("Weights after − before training").xlabel("Keys").ylabel("Queries"), delta, o);
  HeatmapOptions c;
  c.cmap = Colormap::rdbu();
  c.colorbar_label = "cosine";
  heatmap(fig.panel(0, 1).title("Cosine similarity of PE rows").xlabel("Position").ylabel("Position"), cosine, c);
  return fig;
}

// 28x28 images of simple shapes, and a 7x7 "attention" map: the share of each 4x4 patch covered
// by the shape, sharpened.
Mat shape_image(int kind) {
  Mat img = xt::zeros<double>({28, 28});
  for (int y = 0; y < 28; ++y)
    for (int x = 0; x < 28; ++x) {
      const double dx = x - 13.5, dy = y - 13.5;
      bool on = false;
      switch (kind) {
        case 0: on = std::abs(std::hypot(dx, dy) - 8) < 2.2; break;                    // ring
        case 1: on = x >= 4 && x < 16 && y >= 6 && y < 20; break;                      // box, left
        case 2: on = (std::abs(dx) < 2 || std::abs(dy) < 2) && std::hypot(dx, dy) < 12; break;  // cross
        case 3: on = y >= 8 && y < 24 && std::abs(x - 19.5) <= (y - 8) * 0.45; break;  // triangle, right
      }
      if (on) img(y, x) = 0.95 - 0.2 * (y / 28.0);
    }
  return img;
}

Mat patch_attention(const Mat& img) {
  Mat a = xt::zeros<double>({7, 7});
  for (int py = 0; py < 7; ++py)
    for (int px = 0; px < 7; ++px) {
      double s = 0;
      for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 4; ++x) s += img(py * 4 + y, px * 4 + x);
      a(py, px) = std::exp(s / 4.0);
    }
  return a / xt::sum(a)();
}

Figure images(double scale) {
  std::vector<Mat> imgs, overlays;
  std::vector<std::string> captions;
  const char* names[] = {"ring", "box", "cross", "triangle"};
  for (int k = 0; k < 4; ++k) {
    imgs.push_back(shape_image(k));
    overlays.push_back(Mat());
    captions.push_back(names[k]);
  }
  for (int k = 0; k < 4; ++k) {
    imgs.push_back(shape_image(k));
    overlays.push_back(patch_attention(imgs.back()));
    captions.push_back(std::string(names[k]) + " + attention");
  }
  ImageOptions style;
  style.overlay_alpha = 0.5;
  ImageGridOptions g;
  g.title = "[CLS] attention over 7×7 patches of 28×28 images";
  g.width_px = int(kWidth * scale);
  g.height_px = int(kHeight * scale);
  g.scale = scale;
  return image_grid(imgs, captions, overlays, style, g);
}

constexpr const char* kUsage =
    "usage: plots_gallery --out DIR [--scale S] [--help] [--version]\n"
    "Writes one figure of each kind (PNG at 800x500 x S px, and SVG) into DIR.\n";

int run(const std::vector<std::string>& args) {
  std::string out;
  double scale = 2.0;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--out") {
      if (i + 1 >= args.size()) throw UsageError("--out needs a directory");
      out = args[++i];
    } else if (a == "--scale") {
      if (i + 1 >= args.size()) throw UsageError("--scale needs a number");
      char* end = nullptr;
      scale = std::strtod(args[++i].c_str(), &end);
      if (*end != '\0' || !(scale >= 0.5 && scale <= 8)) throw UsageError("--scale must be a number in [0.5, 8]");
    } else {
      throw UsageError("unknown argument \"" + a + "\"");
    }
  }
  if (out.empty()) throw UsageError("missing --out DIR");
  if (const std::string why = make_dirs_or_why(out); !why.empty()) throw IoError("--out '" + out + "': " + why);
  const std::vector<std::pair<std::string, Figure (*)(double)>> figures = {
      {"alignment", alignment}, {"heads", heads},   {"positional_encoding", positional},
      {"loss", loss},           {"variance_dk", variance}, {"bars", bars},
      {"diverging", diverging}, {"image_attention", images}};
  for (const auto& [name, make] : figures) {
    const Figure fig = make(scale);
    for (const char* ext : {".png", ".svg"}) {
      const std::string path = out + "/" + name + ext;
      fig.save(path);
      std::cout << path << "\n";
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return run_program("plots_gallery", kUsage, argc, argv, run); }
