// Lesson 15: the cost of attention, and attention that scales.
//
// Attention compares every query with every key: n^2 scores, and the fused op of lesson 06 keeps
// all n^2 weights for its backward. We measure that wall (time and peak bytes against n, up to
// the memory budget of this run), then take it down without changing a single output: tiles of
// queries and keys, and an online softmax that updates a running max and a running sum block by
// block (FlashAttention), so that nothing n x n is ever stored and the backward recomputes what
// it needs from one number per row. Then the approximations that change the output to change the
// cost: a sliding window (local), a kernel feature map (linear attention) and a projection along
// the sequence (Linformer). We look at the singular values of trained attention matrices to see
// when a low-rank projection can work, measure each approximation's output error, time and
// memory, and train all of them on a long-sequence lookup task to see what they cost in accuracy.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <string>

#include <sys/resource.h>
#include <unistd.h>

#include <xtensor/xbuilder.hpp>
#include <xtensor/xview.hpp>

#include "core/runtime/allocator.hpp"
#include "lessons/kit/kit.hpp"
#include "lessons/kit/spectrum.hpp"
#include "nn/attention/linformer.hpp"
#include "nn/data/recall.hpp"
#include "nn/layers.hpp"
#include "nn/positional/sinusoidal.hpp"
#include "nn/schedule.hpp"

using namespace attnlab;
using namespace attnlab::lessons;
namespace data = attnlab::nn::data;

namespace {

constexpr std::size_t kD = 64;        // the head width of every measurement and of the model
constexpr std::size_t kBand = 64;     // local attention's window and Linformer's rank
constexpr double kMiB = 1024.0 * 1024.0;

using AttentionFn = std::function<Tensor<float>(const Tensor<float>&, const Tensor<float>&, const Tensor<float>&)>;

// ---------------------------------------------------------------------------------------------
// What each op costs against n: forward + backward of one sequence, one head, d = 64.

struct Op {
  std::string name;
  // The op at length n (Linformer's projections have n columns, so it is built per n).
  std::function<AttentionFn(std::size_t n)> at;
};

struct Curve {
  std::string name;
  std::vector<double> n, ms, cpu_ms, mib;  // one entry per measured n
  std::vector<double> faults;              // minor page faults of the last timed call
  // The value at length n; NaN if not measured there.
  double value_at(const std::vector<double>& v, double at) const {
    for (std::size_t i = 0; i < n.size(); ++i)
      if (n[i] == at) return v[i];
    return std::nan("");
  }
};

std::vector<Op> all_ops() {
  return {
      {"fused (lesson 06)", [](std::size_t) -> AttentionFn {
         return [](auto& q, auto& k, auto& v) { return scaled_dot_product_attention(q, k, v).output; };
       }},
      {"tiled", [](std::size_t) -> AttentionFn { return [](auto& q, auto& k, auto& v) { return tiled_attention(q, k, v); }; }},
      {text("local, window ", kBand), [](std::size_t) -> AttentionFn {
         return [](auto& q, auto& k, auto& v) { return local_attention(q, k, v, kBand); };
       }},
      {"linear", [](std::size_t) -> AttentionFn { return [](auto& q, auto& k, auto& v) { return linear_attention(q, k, v); }; }},
      {"linear, causal", [](std::size_t) -> AttentionFn {
         return [](auto& q, auto& k, auto& v) { return linear_attention(q, k, v, {true}); };
       }},
      {text("Linformer, rank ", kBand), [](std::size_t n) -> AttentionFn {
         auto lin = std::make_shared<nn::Linformer<float>>(n, std::min(kBand, n));
         return [lin](auto& q, auto& k, auto& v) { return lin->forward(q, k, v); };
       }},
  };
}

// The minor page faults (pages the kernel had to map in) while `work` runs.
double page_faults_of(const std::function<void()>& work) {
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  work();
  getrusage(RUSAGE_SELF, &after);
  return double(after.ru_minflt - before.ru_minflt);
}

// Forward and backward of every op at every n, the ops in turn within each round (so that load
// from other programs hits them alike). The first call of each op also measures the most bytes it
// holds beyond its inputs, at one thread (peak_bytes_at_one_thread: exact and the same on every run;
// with two, how much of the second thread's scratch is alive at the peak depends on timing). The
// fused op stops at the last n whose next doubling would need more than `budget` bytes (4x, its n^2).
std::vector<Curve> measure_costs(const std::vector<std::size_t>& sizes, double budget) {
  const std::vector<Op> ops = all_ops();
  std::vector<Curve> curves;
  for (const Op& op : ops) curves.push_back({op.name, {}, {}, {}, {}, {}});
  bool fused_stopped = false;
  for (std::size_t n : sizes) {
    Generator gen(1000 + n);
    const Tensor<float> q(random_normal<float>({1, n, kD}, gen), true), k(random_normal<float>({1, n, kD}, gen), true),
        v(random_normal<float>({1, n, kD}, gen), true);
    const Array<float> up = random_normal<float>({1, n, kD}, gen);
    std::vector<std::size_t> which;
    std::vector<double> peak(ops.size(), 0.0), faults(ops.size(), 0.0);
    std::vector<std::function<void()>> work;
    std::vector<AttentionFn> fns;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      if (i == 0 && fused_stopped) continue;
      which.push_back(i);
      fns.push_back(ops[i].at(n));
    }
    for (std::size_t w = 0; w < which.size(); ++w) {
      const std::size_t i = which[w];
      work.push_back([&, w, i, first = true]() mutable {
        // The inputs' gradients are dropped before each call, outside what is measured: the bytes
        // counted are the call's own (its output, saved state, scratch and the new gradients).
        for (const auto* x : {&q, &k, &v}) x->zero_grad();
        auto once = [&] { fns[w](q, k, v).backward(up); };
        if (first) peak[i] = double(peak_bytes_at_one_thread(once)), first = false;  // the warm-up round
        else faults[i] = page_faults_of(once);
      });
    }
    const int rounds = n <= 1024 ? full_or_quick(7, 3) : n <= 4096 ? full_or_quick(3, 1) : 1;
    const std::vector<Timing> t = interleaved_medians(work, rounds);
    for (std::size_t w = 0; w < which.size(); ++w) {
      Curve& c = curves[which[w]];
      c.n.push_back(double(n));
      c.ms.push_back(t[w].wall_ms);
      c.cpu_ms.push_back(t[w].cpu_ms);
      c.mib.push_back(peak[which[w]] / kMiB);
      c.faults.push_back(faults[which[w]]);
    }
    if (!fused_stopped && 4.0 * peak[0] > budget) fused_stopped = true;
  }
  return curves;
}

// A dashed reference c n^p through the last point of a curve.
plots::Series power_line(const std::string& name, const Curve& c, const std::vector<double>& y, double power) {
  const double scale = y.back() / std::pow(c.n.back(), power);
  std::vector<double> ys;
  for (double n : c.n) ys.push_back(scale * std::pow(n, power));
  return reference(name, c.n, ys);
}

plots::Figure cost_figure(const std::vector<const Curve*>& curves, const std::string& title, bool n_line) {
  plots::Figure fig(2600, 1050, 1, 2);
  fig.title(title);
  plots::LineOptions lo;
  lo.log_x = lo.log_y = lo.markers = true;
  std::vector<plots::Series> time, memory;
  for (const Curve* c : curves) time.push_back(curve(c->name, c->n, c->cpu_ms)), memory.push_back(curve(c->name, c->n, c->mib));
  time.push_back(power_line("∝ n²", *curves[0], curves[0]->cpu_ms, 2.0));
  memory.push_back(power_line("∝ n²", *curves[0], curves[0]->mib, 2.0));
  if (n_line) memory.push_back(power_line("∝ n", *curves[1], curves[1]->mib, 1.0));
  plots::line_plot(fig.panel(0).title("Forward + backward, CPU time (median)").xlabel("sequence length n").ylabel("CPU milliseconds"),
                   time, lo);
  plots::line_plot(fig.panel(1).title("Peak memory beyond Q, K, V").xlabel("sequence length n").ylabel("MiB"), memory, lo);
  return fig;
}

// The machine's memory (MemTotal), for the extrapolation; 0 where /proc/meminfo does not exist.
double machine_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  while (in >> key >> kib)
    if (key == "MemTotal:") return kib * 1024.0;
  return 0.0;
}

// ---------------------------------------------------------------------------------------------
// 1. The wall.

void the_wall(const std::vector<Curve>& costs, double budget) {
  const Curve& fused = costs[0];
  say("The fused op of lesson 06 on one sequence of n tokens, one head, d = ", kD, ", float: forward and backward, "
      "timed with the other ops of this lesson in turn (medians), and the most bytes it holds at any moment beyond Q, K "
      "and V, counted exactly by the allocator (every block through operator new, core/runtime/allocator.hpp). Saved for "
      "backward: the weights P, n x n. The figures show CPU time, this process's own work: the machine is shared, and "
      "wall time also counts the neighbours.");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < fused.n.size(); ++i) {
    const double weights = fused.n[i] * fused.n[i] * sizeof(float) / kMiB;
    rows.push_back(row(rounded(fused.n[i]), fixed(fused.ms[i], 2), fixed(fused.cpu_ms[i], 2), fixed(weights, 2),
                       fixed(fused.mib[i], 2), fixed(fused.mib[i] / weights, 2)));
  }
  table({"n", "fwd + bwd ms (wall)", "CPU ms", "saved weights P, MiB", "peak MiB", "peak / P"}, rows);
  const std::vector<double> big_n(fused.n.end() - 3, fused.n.end()), big_mib(fused.mib.end() - 3, fused.mib.end()),
      big_ms(fused.cpu_ms.end() - 3, fused.cpu_ms.end());
  const double mem_slope = log_log_slope(big_n, big_mib), time_slope = log_log_slope(big_n, big_ms);
  const double per_n2 = fused.mib.back() * kMiB / (fused.n.back() * fused.n.back());
  const double next = 2 * fused.n.back();
  say("Over the last three sizes the peak grows like n^", fixed(mem_slope, 2), " and the time like n^", fixed(time_slope, 2),
      ". The peak is about twice the weights: P is kept for backward, and backward makes dS, another n x n matrix, "
      "while P is still alive (", fixed(per_n2, 1), " bytes per n²). This run's memory budget is ", fixed(budget / kMiB, 0),
      " MiB, so the fused op stops at n = ", rounded(fused.n.back()), ": n = ", rounded(next), " would need about ",
      fixed(per_n2 * next * next / kMiB, 0), " MiB.");
  // Where the time jumps: the n x n blocks reach glibc's threshold for mapping a block afresh.
  for (std::size_t i = 1; i < fused.n.size(); ++i) {
    const double growth = fused.cpu_ms[i] / fused.cpu_ms[i - 1];
    if (growth < 6.0 || fused.faults[i] < 1000) continue;
    say("From n = ", rounded(fused.n[i - 1]), " to ", rounded(fused.n[i]), " the CPU time grows ", fixed(growth, 1),
        " times, more than the 4 of n². Each n x n matrix is ", rounded(fused.n[i] * fused.n[i] * 4 / kMiB),
        " MiB there, at glibc's threshold for mapping a block afresh (core/runtime/allocator.hpp keeps smaller freed "
        "blocks for reuse), so every call maps fresh pages and touches them for the first time: ",
        rounded(fused.faults[i]), " page faults in one call (", fixed(fused.faults[i] * double(sysconf(_SC_PAGESIZE)) / kMiB, 0), " MiB of pages), "
        "against ", rounded(fused.faults[i - 1]), " at n = ", rounded(fused.n[i - 1]), ".");
    break;
  }
  const double ram = machine_bytes();
  if (ram > 0) {
    const double n_max = std::sqrt(ram / per_n2), heads = 8, batch = 16;
    say("This machine has ", fixed(ram / (1024 * kMiB), 1), " GiB. At ", fixed(per_n2, 1), " bytes per n², one head of "
        "one sequence runs out of it near n = ", rounded(std::round(n_max / 100) * 100), ", and a batch of ", batch,
        " sequences with ", heads, " heads (", batch * heads, " such blocks at once, one layer) near n = ",
        rounded(std::round(n_max / std::sqrt(batch * heads) / 10) * 10), ". That is the wall.");
    config("machine_memory_gib", ram / (1024 * kMiB));
  }
  metric("fused_memory_slope", mem_slope);
  metric("fused_peak_mib_n4096", fused.value_at(fused.mib, 4096));
  timing("fused_time_slope", time_slope);
  save_figure(cost_figure({&fused}, text("The wall: the fused op, one head, d = ", kD, " (float)"), false), "the_wall",
              "Forward + backward time and peak memory of the fused attention op against sequence length, log-log, "
              "with the n² line through the last point");
}

// ---------------------------------------------------------------------------------------------
// 2. Tiling: the online softmax.

struct OnlineStep {
  double tile_max, m, rescale, l, l_final_frame;
  std::vector<double> out;  // acc / l so far
};

// The online softmax of one row of scores s against values v (n x dv), tile by tile.
std::vector<OnlineStep> online_softmax(const std::vector<double>& s, const xt::xarray<double>& v, std::size_t tile) {
  const std::size_t dv = v.shape()[1];
  double m = -INFINITY, l = 0;
  std::vector<double> acc(dv, 0.0);
  std::vector<OnlineStep> steps;
  for (std::size_t j0 = 0; j0 < s.size(); j0 += tile) {
    const std::size_t j1 = std::min(s.size(), j0 + tile);
    const double tile_max = *std::max_element(s.begin() + j0, s.begin() + j1);
    const double m_new = std::max(m, tile_max), alpha = std::exp(m - m_new);
    l *= alpha;
    for (double& a : acc) a *= alpha;
    for (std::size_t j = j0; j < j1; ++j) {
      const double p = std::exp(s[j] - m_new);
      l += p;
      for (std::size_t c = 0; c < dv; ++c) acc[c] += p * v(j, c);
    }
    m = m_new;
    OnlineStep st{tile_max, m, alpha, l, 0, {}};
    for (double a : acc) st.out.push_back(a / l);
    steps.push_back(st);
  }
  for (OnlineStep& st : steps) st.l_final_frame = st.l * std::exp(st.m - m);
  return steps;
}

void online_softmax_row() {
  // One row of 16 scores in 4 tiles: the running max moves in tiles 2 and 4, not in tile 3.
  const std::vector<double> s = {0.3, -1.2, 0.8, 0.1, 1.9, 0.4, -0.5, 1.1, -0.8, 0.2, 1.5, -0.3, 2.6, 0.7, -1.0, 0.9};
  const std::size_t tile = 4, n = s.size();
  Generator gen(12);
  const xt::xarray<double> v = random_normal<double>({n, 2}, gen);
  say("softmax(s)_j = e^(s_j - m) / sum_l e^(s_l - m) with m = max_l s_l needs the whole row before the first weight: "
      "the max, then the sum. The online softmax needs neither. Keep three things per row, the largest score seen so far "
      "m, the sum l = sum e^(s_j - m) over the keys seen so far, and the output so far acc = sum e^(s_j - m) v_j. A new "
      "tile of scores with largest entry t gives m' = max(m, t), and every old term e^(s_j - m) becomes e^(s_j - m') = "
      "e^(s_j - m) e^(m - m'): multiply l and acc by e^(m - m') (at most 1, so nothing overflows), then add the tile's own "
      "terms. After the last tile, acc / l is exactly softmax(s) V: every term carries the same e^(-m) once the "
      "rescalings are multiplied out. Here is one row of ", n, " scores with 2-D values, in ", n / tile, " tiles of ", tile, ":");
  const std::vector<OnlineStep> steps = online_softmax(s, v, tile);
  std::vector<std::vector<std::string>> rows;
  for (std::size_t t = 0; t < steps.size(); ++t) {
    std::string scores;
    for (std::size_t j = t * tile; j < (t + 1) * tile; ++j) scores += (j > t * tile ? ", " : "") + fixed(s[j], 1);
    const OnlineStep& st = steps[t];
    rows.push_back(row(t + 1, scores, fixed(st.tile_max, 1), fixed(st.m, 1), t == 0 ? "-" : fixed(st.rescale, 4), fixed(st.l, 4),
                       text("(", fixed(st.out[0], 4), ", ", fixed(st.out[1], 4), ")")));
  }
  table({"tile", "scores", "tile max", "running max m", "rescale e^(m_old - m)", "running sum l", "output so far acc / l"},
        rows);
  // The direct softmax, for comparison.
  const double mx = *std::max_element(s.begin(), s.end());
  double total = 0;
  for (double x : s) total += std::exp(x - mx);
  std::vector<double> exact(2, 0.0);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t c = 0; c < 2; ++c) exact[c] += std::exp(s[j] - mx) / total * v(j, c);
  const double diff = std::max(std::abs(steps.back().out[0] - exact[0]), std::abs(steps.back().out[1] - exact[1]));
  say("Tile 3 brings no new max, so its rescale factor is 1; tiles 2 and 4 shrink what came before. The last row is the "
      "softmax output computed directly, (", fixed(exact[0], 4), ", ", fixed(exact[1], 4), "), to ", sci(diff, 1),
      " (double). The sum seen from the final max, l e^(m - m_final), only grows tile by tile towards the true total ",
      fixed(total, 4), ".");
  metric("online_softmax_row_max_abs_diff", diff);

  plots::Figure fig(2700, 1000, 1, 3);
  fig.title("The online softmax on one row: 16 scores in 4 tiles of 4");
  plots::LineOptions lo;
  lo.markers = true;
  std::vector<double> j(n), stair_x, stair_y;
  std::iota(j.begin(), j.end(), 0.0);
  for (std::size_t t = 0; t < steps.size(); ++t) {  // the running max over each tile, the pen lifted between tiles
    stair_x.insert(stair_x.end(), {double(t * tile), double((t + 1) * tile - 1), NAN});
    stair_y.insert(stair_y.end(), {steps[t].m, steps[t].m, NAN});
  }
  lo.ymin = -1.5, lo.ymax = 4.5;
  plots::line_plot(fig.panel(0).title("Scores and the running max").xlabel("key j (tiles 0-3, 4-7, 8-11, 12-15)").ylabel("score"),
                   {curve("score s_j", j, s), curve("running max m after each tile", stair_x, stair_y)}, lo);
  std::vector<double> seen, l_own, l_final, total_line, out0, out1, exact0, exact1;
  for (std::size_t t = 0; t < steps.size(); ++t) {
    seen.push_back(double((t + 1) * tile));
    l_own.push_back(steps[t].l), l_final.push_back(steps[t].l_final_frame), total_line.push_back(total);
    out0.push_back(steps[t].out[0]), out1.push_back(steps[t].out[1]);
    exact0.push_back(exact[0]), exact1.push_back(exact[1]);
  }
  lo.ymin = 0.0, lo.ymax = 5.5;
  plots::line_plot(fig.panel(1).title("Running sum l").xlabel("keys seen").ylabel("sum of e^(s - m)"),
                   {curve("l, relative to the running max", seen, l_own),
                    curve("l e^(m - m_final), relative to the final max", seen, l_final),
                    reference("the true total", seen, total_line)},
                   lo);
  lo.ymin = -1.0, lo.ymax = 1.0;
  plots::line_plot(fig.panel(2).title("Output so far, acc / l").xlabel("keys seen").ylabel("output"),
                   {curve("coordinate 1", seen, out0), curve("coordinate 2", seen, out1),
                    reference("softmax(s) V, computed directly", seen, exact0), reference("", seen, exact1)},
                   lo);
  save_figure(fig, "online_softmax_row",
              "The online softmax on one row of 16 scores in 4 tiles: the running max (left), the running sum, which "
              "is rescaled whenever the max moves (middle), and the output so far, which ends exactly at the softmax "
              "output (right)");
}

// The largest |difference| between two arrays of any float type.
template <class A, class B>
double worst(const A& a, const B& b) {
  return max_abs_diff(xt::xarray<double>(xt::cast<double>(a)), xt::xarray<double>(xt::cast<double>(b)));
}

// Tiled against fused, with a causal and a padding mask, in double and in float: outputs and gradients.
template <class T>
double tiled_against_fused(std::uint64_t seed) {
  const std::size_t B = 2, n = 300;
  Generator gen(seed);
  const Array<T> q = random_normal<T>({B, n, kD}, gen), k = random_normal<T>({B, n, kD}, gen),
                 v = random_normal<T>({B, n, kD}, gen), up = random_normal<T>({B, n, kD}, gen);
  Mask real = xt::ones<bool>(Shape{B, 1, n});
  for (std::size_t j = 250; j < n; ++j) real(1, 0, j) = false;  // the second sequence is 250 tokens long
  double diff = 0;
  std::vector<Array<T>> results[2];
  for (int tiled = 0; tiled < 2; ++tiled) {
    const Tensor<T> Q(q, true), K(k, true), V(v, true);
    Tensor<T> out;
    if (tiled) {
      TiledAttentionOptions<T> o;
      o.allowed = Allowed::where(real);
      o.causal = true;
      out = tiled_attention(Q, K, V, o);
    } else {
      AttentionOptions<T> o;
      o.allowed = Allowed::where(real);
      o.causal = true;
      out = scaled_dot_product_attention(Q, K, V, o).output;
    }
    out.backward(up);
    results[tiled] = {out.value(), Q.grad(), K.grad(), V.grad()};
  }
  for (std::size_t i = 0; i < 4; ++i) diff = std::max(diff, worst(results[0][i], results[1][i]));
  return diff;
}

// Returns the fused op's CPU time over the tiled op's at n = 4096 (above 1: tiling is faster).
double tiling(const std::vector<Curve>& costs) {
  online_softmax_row();
  say("tiled_attention (core/ops/tiled_attention.hpp) does this for every query row at once: a tile of 64 queries "
      "meets the key tiles one after another (32 keys each at d = 64, so that each tile product fits a kernel generated "
      "for its shape), computes the tile's scores with one small matrix product, updates m, l and acc, and never keeps "
      "the scores. It saves the output O and, per row, L = m + log l (the log of the softmax denominator). Backward "
      "recomputes each tile of weights as P = e^(S - L), the softmax itself, and needs the row sums of lesson 06's "
      "softmax rule, D_i = sum_j P_ij dP_ij, which equal dO_i . O_i (because O_i = sum_j P_ij V_j): no pass over a row "
      "first. Five small products per tile pair (S, dV, dP, dQ, dK) against the fused op's four big ones per block "
      "(plus S and O in the forward of both): the price of not storing P is computing S twice.");
  const double d64 = tiled_against_fused<double>(seed() + 21), d32 = tiled_against_fused<float>(seed() + 21);
  say("The same function, not an approximation: on 2 sequences of 300 tokens (the second 250 long, padded), causal, "
      "output and dQ, dK, dV of the tiled op against the fused op differ by at most ", sci(d64, 1), " in double and ",
      sci(d32, 1), " in float, rounding (tests/test_efficient_attention.cpp checks every mask and tile size).");
  metric("tiled_vs_fused_max_abs_diff_double", d64);
  metric("tiled_vs_fused_max_abs_diff_float", d32);

  const Curve &fused = costs[0], &tiled = costs[1];
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < tiled.n.size(); ++i) {
    const double at = tiled.n[i], f_cpu = fused.value_at(fused.cpu_ms, at), f_mib = fused.value_at(fused.mib, at);
    const bool has = !std::isnan(f_cpu);
    rows.push_back(row(rounded(at), has ? fixed(f_cpu, 2) : "over budget", fixed(tiled.cpu_ms[i], 2),
                       has ? fixed(f_cpu / tiled.cpu_ms[i], 2) : "-",
                       has ? fixed(fused.value_at(fused.ms, at) / tiled.ms[i], 2) : "-", has ? fixed(f_mib, 2) : "-",
                       fixed(tiled.mib[i], 2), has ? fixed(f_mib / tiled.mib[i], 1) : "-"));
  }
  table({"n", "fused CPU ms", "tiled CPU ms", "time fused / tiled: CPU", "wall", "fused peak MiB", "tiled peak MiB",
         "memory fused / tiled"},
        rows);
  const double t_ratio = fused.value_at(fused.ms, 4096) / tiled.value_at(tiled.ms, 4096),
               c_ratio = fused.value_at(fused.cpu_ms, 4096) / tiled.value_at(tiled.cpu_ms, 4096),
               m_ratio = fused.value_at(fused.mib, 4096) / tiled.value_at(tiled.mib, 4096);
  const std::vector<double> big_n(tiled.n.end() - 3, tiled.n.end()), big_mib(tiled.mib.end() - 3, tiled.mib.end());
  const double slope = log_log_slope(big_n, big_mib);
  say("At n = 4096 (d = ", kD, ") the tiled op holds ", fixed(m_ratio, 1), " times less memory than the fused op (target: "
      "at least 10), and its forward and backward together take ", fixed(1 / t_ratio, 2), " times the fused op's wall time (",
      fixed(1 / c_ratio, 2), " times its CPU time; target: no slower). ",
      c_ratio >= 1 ? "Faster while doing more arithmetic: the fused op streams n x n matrices through memory (S, P, dP, dS: "
                   : "Slower: its extra arithmetic costs more here than the fused op's traffic through memory (S, P, dP, dS: ",
      fixed(4096.0 * 4096 * 4 / kMiB, 0), " MiB each at n = 4096, written and read again), while a tile of the tiled op "
      "stays in cache. Its memory grows like n^", fixed(slope, 2),
      " (last three sizes): the output and the upstream gradient, one number per row, the three gradients, and one "
      "more copy of dQ (the key tiles are dealt to two groups that run in parallel, each adding into its own dQ, summed "
      "in a fixed order at the end: the same bits at any thread count).");
  metric("memory_ratio_fused_over_tiled_n4096", m_ratio);
  metric("tiled_memory_slope", slope);
  timing("time_ratio_fused_over_tiled_n4096", t_ratio);
  timing("cpu_time_ratio_fused_over_tiled_n4096", c_ratio);
  save_figure(cost_figure({&fused, &tiled}, text("Exact attention two ways: fused (stores P) and tiled (online softmax), d = ", kD),
                          true),
              "exact_fused_vs_tiled",
              "Time and peak memory of forward + backward against n: the fused op (n² memory) and the tiled op (n "
              "memory), the same outputs and gradients");
  return c_ratio;
}

// ---------------------------------------------------------------------------------------------
// The long-sequence task and its model (sections 3 and 4).

enum class Kind { exact, local, linear, linformer };
struct Variant {
  std::string name;
  Kind kind;
};

// One attention layer on the recall tokens: x = key embedding + value embedding, q, k, v
// projections (no biases), the attention of the variant, a linear read-out of the value. No
// positions: a lookup by content needs none (local attention's window is positional by itself).
class RecallModel : public nn::Module<float> {
 public:
  RecallModel(const data::RecallConfig& c, Kind kind, std::size_t band, Generator& gen)
      : key_embed(c.keys + 1, kD, gen), value_embed(c.values + 1, kD, gen), q_proj(kD, kD, gen, false),
        k_proj(kD, kD, gen, false), v_proj(kD, kD, gen, false), out(kD, c.values, gen),
        linformer(c.length, band), kind_(kind), band_(band) {
    register_module("key_embed", key_embed);
    register_module("value_embed", value_embed);
    register_module("q_proj", q_proj);
    register_module("k_proj", k_proj);
    register_module("v_proj", v_proj);
    register_module("out", out);
    if (kind == Kind::linformer) register_module("linformer", linformer);
  }
  // logits (B, L, values)
  Tensor<float> forward(const data::Recall& b) const {
    const Tensor<float> x = embed(b);
    return out(attend(q_proj(x), k_proj(x), v_proj(x)));
  }
  // The attention weights (B, L, L) of exact attention on these sequences.
  Array<float> weights(const data::Recall& b) const {
    NoGrad ng;
    const Tensor<float> x = embed(b), k = k_proj(x);
    return scaled_dot_product_attention(q_proj(x), k, k).weights.value();
  }

  nn::Embedding<float> key_embed, value_embed;
  nn::Linear<float> q_proj, k_proj, v_proj, out;
  nn::Linformer<float> linformer;

 private:
  Tensor<float> embed(const data::Recall& b) const { return add(key_embed(b.keys), value_embed(b.values)); }
  Tensor<float> attend(const Tensor<float>& q, const Tensor<float>& k, const Tensor<float>& v) const {
    switch (kind_) {
      case Kind::exact: return tiled_attention(q, k, v);
      case Kind::local: return local_attention(q, k, v, band_);
      case Kind::linear: return linear_attention(q, k, v);
      case Kind::linformer: return linformer.forward(q, k, v);
    }
    throw std::logic_error("RecallModel: unknown kind");
  }
  Kind kind_;
  std::size_t band_;
};

struct Task {
  data::RecallConfig config;
  data::Recall train, held_out;
  std::size_t band;  // window and rank: an eighth of the length
};

Task make_task() {
  Task t;
  t.config.length = full_or_quick<std::size_t>(512, 128);
  t.config.keys = 64;
  t.config.values = 16;
  t.config.pairs = full_or_quick<std::size_t>(32, 16);
  t.band = t.config.length / 8;
  Generator gen(seed() + 5);
  t.train = data::make_recall(t.config, full_or_quick<std::size_t>(1024, 512), gen);
  t.held_out = data::make_recall(t.config, full_or_quick<std::size_t>(512, 256), gen);
  return t;
}

// The share of the held-out queries whose value is predicted right.
double recall_accuracy(const RecallModel& m, const data::Recall& set) {
  NoGrad ng;
  std::size_t right = 0, asked = 0;
  for (std::size_t from = 0; from < set.size(); from += 64) {
    std::vector<std::size_t> rows(std::min<std::size_t>(64, set.size() - from));
    std::iota(rows.begin(), rows.end(), from);
    const data::Recall b = set.rows(rows);
    const Tensor<float> logits = m.forward(b);
    const std::size_t V = logits.shape()[2];
    for (std::size_t i = 0; i < b.targets.size(); ++i) {
      if (b.targets.data()[i] == data::kNotAsked) continue;
      const float* l = logits.value().data() + i * V;
      ++asked;
      right += Index(std::max_element(l, l + V) - l) == b.targets.data()[i];
    }
  }
  return double(right) / double(asked);
}

struct Trained {
  Variant variant;
  std::unique_ptr<RecallModel> model;
  History history;
  double accuracy = 0;
};

Trained train(const Task& task, const Variant& v) {
  Generator gen(seed() + 9);  // every variant starts from the same embeddings and projections
  Trained t{v, std::make_unique<RecallModel>(task.config, v.kind, task.band, gen), {}, 0};
  RecallModel& m = *t.model;
  const double lr = 3e-3;
  nn::Adam<float> opt(m.parameters(), lr);
  FitOptions fo;
  fo.label = v.name;
  fo.epochs = epochs(8, 4);
  fo.batch = 32;
  fo.clip = 1.0;
  fo.seed = seed() + 3;
  const long total = fit_steps(task.train.size(), fo);
  fo.lr = nn::warmup_cosine_lr(lr, std::max(1L, total / 20), total, lr / 20);
  fo.validate = [&] { return Scores{{"accuracy", recall_accuracy(m, task.held_out)}}; };
  t.history = fit(m, opt, task.train.size(), [&](const std::vector<std::size_t>& rows) {
    const data::Recall b = task.train.rows(rows);
    return cross_entropy(m.forward(b), b.targets);
  }, fo);
  t.accuracy = t.history.validation_of("accuracy").back();
  return t;
}

void describe_task(const Task& t) {
  const data::RecallConfig& c = t.config;
  say("The task: multi-query associative recall. A sequence of ", c.length, " tokens; each shows a key (", c.keys,
      " possible) and a value (", c.values, " possible). The first half holds ", c.pairs, " facts \"key k has value v\" "
      "with distinct keys at random places, fillers in between; the second half asks for each fact once, in random order "
      "and at random places, by showing its key with no value. The model must answer each question with the value: a "
      "lookup by content across up to the whole sequence, since the fact can be anywhere in the first half. Chance is 1/",
      c.values, " = ", fixed(1.0 / double(c.values), 4), ". ", t.train.size(), " training sequences, ", t.held_out.size(),
      " held-out ones (every accuracy below is on those). The model is one attention layer of width ", kD, ": embeddings of "
      "the key and of the value, added; q, k and v projections; attention; a linear read-out of the value. No positions.");
}

// ---------------------------------------------------------------------------------------------
// 3. Low rank.

// Queries and keys made of position codes: q_i = k_i = a PE(i) (sinusoidal, d = 64), so q_i . k_j
// depends on i - j alone and is largest at i = j. The sharpness a sets the width of the band the
// attention forms around the diagonal: broad and smooth for small a, a few tokens wide for large a.
Array<float> position_codes(std::size_t n, double sharpness) {
  Array<float> pe = nn::sinusoidal_table<float>(n, kD) * float(sharpness);
  pe.reshape({1, n, kD});
  return pe;
}

// The input families of sections 3 and 4: iid normal queries and keys, a broad band, a narrow band.
struct Family {
  std::string name, key;
  double sharpness;  // 0: iid normal
};
const std::vector<Family>& families() {
  static const std::vector<Family> f = {{"iid normal q, k", "random", 0.0},
                                        {"broad band (q = k = 0.75 PE)", "broad", 0.75},
                                        {"narrow band (q = k = 2 PE)", "narrow", 2.0}};
  return f;
}

// (q, k) of one family at length n, each (1, n, d).
std::pair<Array<float>, Array<float>> family_qk(double sharpness, std::size_t n, Generator& gen) {
  if (sharpness > 0) {
    const Array<float> p = position_codes(n, sharpness);
    return {p, p};
  }
  return {random_normal<float>({1, n, kD}, gen), random_normal<float>({1, n, kD}, gen)};
}

struct Spectrum {
  std::string name;
  std::vector<double> sigma;  // mean over the matrices, each normalized by its largest value
  double rank90 = 0, best_share = 0, segment_share = 0;
};

// The share of sum_ij P_ij^2 that the segment means keep: P's rows projected onto the span of
// the rows of Linformer's starting E (averages of `band` equal segments of positions).
double segment_share(const xt::xarray<double>& P, std::size_t rank) {
  const std::size_t n = P.shape()[1], m = n / rank;
  double kept = 0, total = 0;
  for (std::size_t i = 0; i < P.shape()[0]; ++i)
    for (std::size_t r = 0; r < rank; ++r) {
      const std::size_t begin = r * m, end = r + 1 == rank ? n : begin + m;
      double s = 0;
      for (std::size_t j = begin; j < end; ++j) s += P(i, j), total += P(i, j) * P(i, j);
      kept += s * s / double(end - begin);
    }
  return kept / total;
}

Spectrum spectrum_of(const std::string& name, const std::vector<xt::xarray<double>>& matrices, std::size_t band) {
  Spectrum sp{name, {}, 0, 0, 0};
  for (const auto& P : matrices) {
    const std::vector<double> s = singular_values(P);
    if (sp.sigma.empty()) sp.sigma.assign(s.size(), 0.0);
    for (std::size_t r = 0; r < s.size(); ++r) sp.sigma[r] += s[r] / s[0] / double(matrices.size());
    double total = 0, top = 0;
    for (std::size_t r = 0; r < s.size(); ++r) total += s[r] * s[r], top += r < band ? s[r] * s[r] : 0;
    sp.rank90 += double(rank_for_energy(s, 0.9)) / double(matrices.size());
    sp.best_share += top / total / double(matrices.size());
    sp.segment_share += segment_share(P, band) / double(matrices.size());
  }
  return sp;
}

Trained low_rank(const Task& task) {
  describe_task(task);
  say("First the exact model (the tiled op). Then its attention matrices, and the question behind Linformer: is an "
      "attention matrix close to one of low rank?");
  Trained exact = train(task, {"exact (tiled)", Kind::exact});
  say("Held-out accuracy of exact attention after ", exact.history.steps, " steps: ", fixed(exact.accuracy, 3), ".");
  const std::size_t n = task.config.length, count = 4;
  std::vector<std::size_t> first(count);
  std::iota(first.begin(), first.end(), 0);
  const data::Recall some = task.held_out.rows(first);
  Generator init_gen(seed() + 9);
  const RecallModel untrained(task.config, Kind::exact, task.band, init_gen);
  // The first `count` matrices of a batch of weights (B, n, n), or one of family_qk's.
  auto matrices = [&](const Array<float>& w) {
    std::vector<xt::xarray<double>> out;
    for (std::size_t s = 0; s < std::min(count, w.shape()[0]); ++s) out.push_back(xt::cast<double>(xt::view(w, s)));
    return out;
  };
  Generator gen(seed() + 31);
  auto family = [&](double sharpness) {
    std::vector<xt::xarray<double>> out;
    for (std::size_t s = 0; s < (sharpness > 0 ? 1 : count); ++s) {  // a band is the same every time
      const auto [q, k] = family_qk(sharpness, n, gen);
      const Tensor<float> K(k);
      out.push_back(matrices(scaled_dot_product_attention(Tensor<float>(q), K, K).weights.value())[0]);
    }
    return out;
  };
  std::vector<Spectrum> spectra = {spectrum_of("trained on recall", matrices(exact.model->weights(some)), task.band),
                                   spectrum_of("same model, untrained", matrices(untrained.weights(some)), task.band)};
  for (const Family& f : families()) spectra.push_back(spectrum_of(f.name, family(f.sharpness), task.band));
  std::vector<std::vector<std::string>> rows;
  for (const Spectrum& sp : spectra)
    rows.push_back(row(sp.name, fixed(sp.rank90, 1), percent(sp.best_share, 1), percent(sp.segment_share, 1)));
  table({"attention matrix (n = " + rounded(double(n)) + ")", "rank for 90 % of the energy",
         text("energy in the best rank ", task.band), text("energy kept by ", task.band, " segment means")},
        rows);
  const Spectrum &trained = spectra[0], &iid = spectra[2], &broad = spectra[3], &narrow = spectra[4];
  say("The energy of a matrix is the sum of its squared entries, which is also the sum of its squared singular values, "
      "so the best rank-r approximation (keep the r largest singular values) keeps the share of the r largest. The "
      "trained matrices need ", fixed(trained.rank90, 0), " singular values for 90 % of their energy (of ", n,
      "), and the best rank ", task.band, " keeps ", percent(trained.best_share, 1), ": they attend from every question "
      "to one of ", task.config.pairs, " facts, so they have few independent columns. The broad band needs ",
      fixed(broad.rank90, 0), ", the iid matrices ", fixed(iid.rank90, 0), ", the narrow band ", fixed(narrow.rank90, 0),
      ": a narrow band is close to the identity, which is full rank. Linformer's observation (Wang et al. 2020) is "
      "that trained attention is often nearly low-rank, so keys and values projected to a few rows should lose little. "
      "The last column asks the harder question: how much survives a projection fixed in advance, the same for every "
      "input, as Linformer's E is once trained (here its starting point, ", task.band, " segment means)? For the broad "
      "band, ", percent(broad.segment_share, 0), ": its low-rank structure is smooth in position, where a fixed "
      "projection finds it. For the trained recall matrices, ", percent(trained.segment_share, 0), ": they are "
      "low-rank too, but their important columns are the facts, and the facts move with every input. A fixed E "
      "cannot follow them; section 4 trains Linformer on this task.");
  metric("rank90_share_trained_recall", trained.rank90 / double(n));  // as a share of the full rank n
  metric("rank90_share_broad", broad.rank90 / double(n));
  metric("rank90_share_narrow", narrow.rank90 / double(n));
  metric("best_rank_share_trained_recall", trained.best_share);
  metric("segment_share_trained_recall", trained.segment_share);
  metric("segment_share_broad", broad.segment_share);

  plots::Figure fig(2600, 1000, 1, 2);
  fig.title(text("Singular values of attention matrices, n = ", n));
  plots::LineOptions lo;
  lo.log_y = true;
  std::vector<plots::Series> sv, cum;
  for (const Spectrum& sp : spectra) {
    std::vector<double> idx, s, c;
    double total = 0, run = 0;
    for (double x : sp.sigma) total += x * x;
    for (std::size_t r = 0; r < sp.sigma.size(); ++r) {
      idx.push_back(double(r + 1));
      s.push_back(sp.sigma[r] >= 1e-4 ? sp.sigma[r] : NAN);  // below 1e-4: rounding, not drawn
      run += sp.sigma[r] * sp.sigma[r];
      c.push_back(run / total);
    }
    sv.push_back(curve(sp.name, idx, s));
    cum.push_back(curve(sp.name, idx, c));
  }
  plots::line_plot(fig.panel(0).title("σ_r / σ_1 (mean over matrices; below 10⁻⁴ not drawn)").xlabel("r").ylabel("σ_r / σ_1"),
                   sv, lo);
  cum.push_back(reference(text("rank ", task.band), {double(task.band), double(task.band)}, {0.0, 1.0}));
  plots::LineOptions lc;
  lc.log_x = true;
  lc.legend = false;  // the colours of the left panel
  lc.ymin = 0.0, lc.ymax = 1.02;
  plots::line_plot(fig.panel(1).title(text("Share of the energy in the r largest (dashed: r = ", task.band, ")"))
                       .xlabel("r").ylabel("share of Σ σ²"),
                   cum, lc);
  save_figure(fig, "singular_values",
              "Singular values of attention matrices: trained on the recall task, the same model untrained, iid "
              "queries and keys, a broad and a narrow band; left, each normalized by the largest; right, the cumulative "
              "share of the energy");
  return exact;
}

// ---------------------------------------------------------------------------------------------
// 4. Approximations at a price.

// ||a - b|| / ||b|| (Frobenius).
double relative_error(const Array<float>& a, const Array<float>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = double(a.data()[i]) - double(b.data()[i]);
    num += d * d, den += double(b.data()[i]) * b.data()[i];
  }
  return std::sqrt(num / den);
}

// The share of each query's weight on the keys within `window` of it, averaged over the queries.
double weight_in_window(const Array<float>& P, std::size_t window) {
  const std::size_t n = P.shape()[1];
  double in = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i > window ? i - window : 0; j < std::min(n, i + window + 1); ++j) in += P(0, i, j);
  return in / double(n);
}

void output_errors() {
  const std::size_t n = full_or_quick<std::size_t>(2048, 512);
  Generator gen(seed() + 41);
  const Array<float> v = random_normal<float>({1, n, kD}, gen);
  const std::vector<Op> ops = all_ops();
  const std::size_t approx[] = {2, 3, 5};  // local, linear (non-causal), Linformer
  const char* short_names[] = {"local", "linear", "linformer"};
  // The errors of the three approximations on one family, and what its attention looks like.
  auto errors_of = [&](double sharpness) {
    const auto [q, k] = family_qk(sharpness, n, gen);
    const Tensor<float> Q(q), K(k), V(v);
    const AttentionResult<float> exact = scaled_dot_product_attention(Q, K, V);
    std::vector<double> e;
    for (std::size_t op : approx) e.push_back(relative_error(ops[op].at(n)(Q, K, V).value(), exact.output.value()));
    const xt::xarray<double> P = xt::cast<double>(xt::view(exact.weights.value(), 0));
    e.push_back(weight_in_window(exact.weights.value(), kBand));
    e.push_back(segment_share(P, kBand));
    return e;
  };
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < 3; ++i) rows.push_back(row(ops[approx[i]].name));
  for (const Family& f : families()) {
    const std::vector<double> e = errors_of(f.sharpness);
    for (std::size_t i = 0; i < 3; ++i) {
      rows[i].push_back(fixed(e[i], 3));
      metric(text("output_error_", short_names[i], "_", f.key), e[i]);
    }
  }
  say("Each approximation against exact attention on the same inputs, n = ", n, ", d = ", kD, ", V normal: the error "
      "||O - O_exact|| / ||O_exact||, on the three kinds of queries and keys of section 3. Linformer is untrained here, "
      "with E and F at their segment means; local attention's window and Linformer's rank are ", kBand, ".");
  std::vector<std::string> header = {"approximation"};
  for (const Family& f : families()) header.push_back("error, " + f.name);
  table(header, rows);
  // The same errors against the sharpness of the band.
  const std::vector<double> sharpness = {0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0};
  std::vector<std::vector<double>> err(5);
  for (double a : sharpness) {
    const std::vector<double> e = errors_of(a);
    for (std::size_t i = 0; i < 5; ++i) err[i].push_back(e[i]);
  }
  say("No approximation wins everywhere, and the figure below shows why: sweep the sharpness a of the band from broad "
      "to narrow. Local attention is exact once the band fits in its window (its error at a = 2 is ", sci(err[0][6], 1),
      ") and far off while the band is broad: it drops every key beyond ", kBand, " positions. Where its error "
      "passes 1 it is larger than the output itself: a broad exact output averages many values towards 0, the local "
      "one only a few. Linformer and linear attention are the reverse: good on the broad band (", fixed(err[2][1], 3),
      " and ", fixed(err[1][1], 3), " at a = 0.5), whose attention is low-rank and smooth, and useless on the narrow one, "
      "which a few pooled summaries cannot resolve and whose weights phi(q).phi(k) (positive, smooth in q and k) cannot "
      "concentrate. On iid queries and keys, whose weights follow no pattern at all, all three are far off.");
  plots::Figure fig(2600, 1000, 1, 2);
  fig.title(text("Which approximation fits depends on the attention: a band q = k = a PE, n = ", n));
  plots::LineOptions lo;
  lo.markers = true;
  lo.log_y = true;
  std::vector<plots::Series> lines;
  for (std::size_t i = 0; i < 3; ++i) lines.push_back(curve(ops[approx[i]].name, sharpness, err[i]));
  plots::line_plot(fig.panel(0).title("Output error against exact attention").xlabel("sharpness a (broad → narrow)")
                       .ylabel("||O − O_exact|| / ||O_exact||"),
                   lines, lo);
  plots::LineOptions ls;
  ls.markers = true;
  ls.ymin = 0.0, ls.ymax = 1.3;  // room above the curves for the legend
  plots::line_plot(fig.panel(1).title("What the exact attention looks like").xlabel("sharpness a (broad → narrow)")
                       .ylabel("share"),
                   {curve(text("weight within ", kBand, " positions (what local keeps)"), sharpness, err[3]),
                    curve(text("energy in ", kBand, " segment means (what Linformer starts from)"), sharpness, err[4])},
                   ls);
  save_figure(fig, "errors_by_sharpness",
              "Left: output error of local, linear and Linformer attention against exact attention as the band of "
              "attention narrows. Right: how much of the exact attention lies within local attention's window, and how "
              "much of its energy the segment means keep");
}

void cost_of_approximations(const std::vector<Curve>& costs) {
  std::vector<const Curve*> all;
  for (const Curve& c : costs) all.push_back(&c);
  std::vector<std::vector<std::string>> rows;
  const Curve& fused = costs[0];
  const double last = costs[1].n.back();  // the largest n, where the fused op no longer runs in a full run
  for (const Curve& c : costs) {
    const double ms = c.value_at(c.ms, 4096), mib = c.value_at(c.mib, 4096);
    std::vector<std::string> cells = row(c.name, fixed(ms, 2), fixed(mib, 2), fixed(fused.value_at(fused.ms, 4096) / ms, 2),
                                         fixed(fused.value_at(fused.mib, 4096) / mib, 1));
    if (last > 4096) cells.push_back(c.n.back() == last ? fixed(c.ms.back(), 1) : "over budget"),
        cells.push_back(c.n.back() == last ? fixed(c.mib.back(), 1) : "-");
    rows.push_back(cells);
  }
  std::vector<std::string> header = {"op", "ms at n = 4096", "peak MiB at 4096", "time: fused / op", "memory: fused / op"};
  if (last > 4096) header.push_back(text("ms at n = ", rounded(last))), header.push_back(text("peak MiB at ", rounded(last)));
  table(header, rows);
  const Curve &local = costs[2], &linear = costs[3], &lin_causal = costs[4], &linformer = costs[5];
  for (const auto& [c, name] : std::vector<std::pair<const Curve*, std::string>>{
           {&local, "local"}, {&linear, "linear"}, {&lin_causal, "linear_causal"}, {&linformer, "linformer"}}) {
    metric(text("memory_ratio_fused_over_", name, "_n4096"), fused.value_at(fused.mib, 4096) / c->value_at(c->mib, 4096));
    timing(text("time_ratio_fused_over_", name, "_n4096"), fused.value_at(fused.ms, 4096) / c->value_at(c->ms, 4096));
  }
  say("All four grow linearly in time and memory: local attention computes only the tiles of the band (2 x ", kBand,
      " + 1 keys per query; it runs on the tiled kernel and holds exactly what the tiled op holds, so its memory line "
      "hides the tiled one), linear attention keeps a ", kD, " x ", kD, " state instead of the n x n weights (its causal "
      "form is an RNN, that state updated token by token; here both forms are that scan and hold the same memory), and "
      "Linformer's weights are n x ", kBand, ".");
  save_figure(cost_figure(all, text("Every variant: forward + backward, one head, d = ", kD, " (float)"), true),
              "time_memory_all", "Time and peak memory of forward + backward against n for every attention of this lesson, log-log");
}

// tiled_speedup: the fused op's CPU time over the tiled op's at n = 4096 (section 2).
void approximations_trained(const Task& task, Trained exact, double tiled_speedup) {
  say("Now the price in accuracy. The same model, the same data, the same ", exact.history.steps, " steps, with each "
      "attention in turn: local (window ", task.band, "), linear (elu + 1, non-causal) and Linformer (rank ", task.band,
      ", E and F trained with the rest).");
  std::vector<Trained> runs;
  runs.push_back(std::move(exact));
  runs.push_back(train(task, {text("local, window ", task.band), Kind::local}));
  runs.push_back(train(task, {"linear", Kind::linear}));
  runs.push_back(train(task, {text("Linformer, rank ", task.band), Kind::linformer}));
  const char* short_names[] = {"exact", "local", "linear", "linformer"};
  std::vector<std::vector<std::string>> rows;
  std::vector<plots::Series> by_time, by_step;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const Trained& t = runs[r];
    const std::vector<double>& acc = t.history.validation_of("accuracy");
    std::vector<double> seconds, steps;
    double cpu = 0;
    for (std::size_t e = 0; e < acc.size(); ++e) {
      for (std::size_t s = e * t.history.steps_per_epoch; s < (e + 1) * t.history.steps_per_epoch; ++s)
        cpu += t.history.step_cpu_ms[s] / 1000.0;
      seconds.push_back(cpu);
      steps.push_back(double((e + 1) * t.history.steps_per_epoch));
    }
    by_time.push_back(curve(t.variant.name, seconds, acc));
    by_step.push_back(curve(t.variant.name, steps, acc));
    rows.push_back(row(t.variant.name, fixed(t.accuracy, 3), fixed(*std::max_element(acc.begin(), acc.end()), 3),
                       fixed(t.history.median_step_cpu_ms(), 1), fixed(cpu, 1)));
    metric(text("recall_accuracy_", short_names[r]), t.accuracy);
    timing(text("recall_step_cpu_ms_", short_names[r]), t.history.median_step_cpu_ms());
  }
  table({"attention", "held-out accuracy", "best after an epoch", "CPU ms a step (median)", "CPU seconds of training"}, rows);
  const double chance = 1.0 / double(task.config.values);
  const double local = runs[1].accuracy, linear = runs[2].accuracy, linformer = runs[3].accuracy;
  // How far an accuracy got, in words.
  auto reached = [&](double acc) {
    return acc >= 0.99 ? "answers every question" : acc >= 0.9 ? "answers most questions" : acc >= 0.5 ? "answers some"
           : acc >= 2 * chance ? "stays far below" : "stays near chance";
  };
  say("Exact attention ", reached(runs[0].accuracy), " (", fixed(runs[0].accuracy, 3), "). Local attention ",
      reached(local), " (", fixed(local, 3), ", chance is ", fixed(chance, 4), "): it is blind beyond its window, and "
      "almost every fact lies further than ", task.band, " tokens from its question; it is cheaper per step, and useless "
      "here. Linear attention ", reached(linear), " (", fixed(linear, 3), "), and learns later than exact attention: its "
      "memory is one ", kD, " x ", kD, " sum over all tokens, which the ", task.config.pairs, " facts and every filler "
      "share, and its weights phi(q).phi(k) are positive and smooth, so singling one key out takes the projections a "
      "long time to learn, if they get there (at ", task.config.pairs, " facts in ", kD, " dimensions they have room). "
      "Linformer ", reached(linformer), " (", fixed(linformer, 3), "): it mixes the positions by a projection that is "
      "the same for every input, while the facts sit at new places in every sequence (section 3). An approximation is a "
      "different model, with its own blind spots. Tiling changed the cost alone: the same function in linear memory, ",
      tiled_speedup >= 1 ? text("and ", fixed(tiled_speedup, 2), " times faster here (section 2).")
                         : text("at ", fixed(1 / tiled_speedup, 2), " times the fused op's CPU time on this machine "
                                "(section 2)."));
  plots::Figure fig(2600, 1000, 1, 2);
  fig.title(text("Associative recall at n = ", task.config.length, ": held-out accuracy during training"));
  plots::LineOptions lo;
  lo.markers = true;
  lo.ymin = 0.0, lo.ymax = 1.02;
  std::vector<double> xs = {by_step.front().x(0), by_step.front().x(by_step.front().x.size() - 1)};
  by_step.push_back(reference("chance", xs, {chance, chance}));
  plots::line_plot(fig.panel(0).title("Against training steps").xlabel("training step").ylabel("held-out accuracy"), by_step, lo);
  plots::LineOptions lt = lo;
  lt.log_x = true;
  plots::line_plot(fig.panel(1).title("Against training time").xlabel("CPU seconds of training (log)").ylabel("held-out accuracy"),
                   by_time, lt);
  save_figure(fig, "recall_accuracy",
              "Held-out accuracy on associative recall for exact (tiled), local, linear and Linformer attention, after "
              "every epoch, against training steps and against the CPU seconds spent training");
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"15_tiled_attention", "The cost of attention, and attention that scales",
                     "Attention's n² wall measured, tiled exact attention with an online softmax (linear memory), the "
                     "singular values of trained attention, and local, linear and Linformer attention: error, cost and "
                     "accuracy on a long-sequence recall task",
                     "memory_ratio_fused_over_tiled_n4096"},
                    argc, argv, [] {
                      const std::vector<std::size_t> sizes =
                          full_or_quick(std::vector<std::size_t>{128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768},
                                        std::vector<std::size_t>{128, 256, 512, 1024, 2048, 4096});
                      const double budget = full_or_quick(2.5, 0.25) * 1024 * kMiB;
                      config({{"memory_budget_mib", budget / kMiB}, {"head_dim", kD}, {"window_and_rank", kBand}});
                      const std::vector<Curve> costs = measure_costs(sizes, budget);
                      section("1. The wall: attention's n²");
                      the_wall(costs, budget);
                      section("2. Tiling: exact attention without the n x n matrix");
                      const double tiled_speedup = tiling(costs);
                      const Task task = make_task();
                      section("3. Low rank: what trained attention looks like");
                      Trained exact = low_rank(task);
                      section("4. Approximations at a price");
                      output_errors();
                      cost_of_approximations(costs);
                      approximations_trained(task, std::move(exact), tiled_speedup);
                    });
}
