// Lesson 17: exact attention by tiles.
//
// Attention compares every query with every key: n^2 scores. The fused op of lesson 06 keeps all
// n^2 weights P for its backward, so its memory grows like n^2, and that is the wall long
// sequences hit. This lesson takes the wall down without changing a single output. Queries and
// keys are cut into tiles, and an online softmax keeps per query row a running max, a running sum
// and the output so far, rescaled whenever the max moves (FlashAttention, Dao et al. 2022).
// Nothing n x n is ever stored; the backward recomputes each tile of weights from one number saved
// per row, the log-sum-exp. We measure the wall, derive the update on one row, derive the
// backward, check that the tiled op is the fused op to rounding, and measure both against n.
// (Lesson 18 changes the function itself to change the cost: approximate attention.)
#include <algorithm>
#include <cmath>
#include <fstream>
#include <numeric>
#include <string>

#include <unistd.h>

#include "lessons/kit/kit.hpp"

using namespace attnlab;
using namespace attnlab::lessons;

namespace {

constexpr std::size_t kD = 64;  // the head width of every measurement
constexpr double kMiB = 1024.0 * 1024.0;

// The two exact attentions, forward + backward on one sequence, one head, float (lessons/kit/timing.hpp).
std::vector<CostCurve> measure(const std::vector<std::size_t>& sizes, double budget) {
  CostOptions o;
  o.budget_bytes = budget;
  o.rounds = [](std::size_t n) { return n <= 1024 ? full_or_quick(7, 3) : n <= 4096 ? full_or_quick(3, 2) : 1; };
  auto fused = [](auto& q, auto& k, auto& v) { return scaled_dot_product_attention(q, k, v).output; };
  auto tiled = [](auto& q, auto& k, auto& v) { return tiled_attention(q, k, v); };
  return costs_against_n({attention_cost("fused (lesson 06)", fused, kD), attention_cost("tiled", tiled, kD)}, sizes, o);
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
// 1. The fused op against n.

void the_wall(const CostCurve& fused, double budget) {
  say("The fused op of lesson 06 on one sequence of $n$ tokens, one head, $d = ", kD, "$, float: forward and backward, "
      "timed in turn with the tiled op of section 4 (medians of interleaved rounds), and the most bytes it holds at any "
      "moment beyond $Q$, $K$ and $V$, counted exactly by the allocator (every block through operator new, "
      "core/runtime/allocator.hpp). It saves the weights $P = \\mathrm{softmax}(QK^\\top/\\sqrt{d})$, $n \\times n$, for "
      "its backward. Times are CPU time, this process's own work: the machine is shared, and wall time also counts the "
      "neighbours.");
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < fused.n.size(); ++i) {
    const double weights = fused.n[i] * fused.n[i] * sizeof(float) / kMiB;
    rows.push_back(row(rounded(fused.n[i]), fixed(fused.wall_ms[i], 2), fixed(fused.cpu_ms[i], 2), fixed(weights, 2),
                       fixed(fused.peak_mib[i], 2), fixed(fused.peak_mib[i] / weights, 2), rounded(fused.page_faults[i])));
  }
  table({"$n$", "fwd + bwd ms (wall)", "CPU ms", "saved weights $P$, MiB", "peak MiB", "peak / $P$", "page faults"}, rows);
  const double mem_slope = fused.last_slope(fused.peak_mib), time_slope = fused.last_slope(fused.cpu_ms);
  const double last = fused.n.back(), per_n2 = fused.peak_mib.back() * kMiB / (last * last);
  const double over_p = fused.peak_mib.back() / (last * last * sizeof(float) / kMiB);
  metric("fused_memory_slope", mem_slope);
  metric("fused_peak_mib_n4096", fused.at(fused.peak_mib, 4096));
  metric("fused_peak_over_weights", over_p);
  timing("fused_time_slope", time_slope);
  claim({"fused_memory_quadratic", "fused_memory_slope >= 1.8",
         text("Over the last three sizes the peak grows like $n^{", fixed(mem_slope, 2), "}$: quadratic."),
         text("Over the last three sizes the peak grows like $n^{", fixed(mem_slope, 2), "}$, short of quadratic: "
              "the sizes are too small for the $n^2$ term to dominate.")});
  claim({"fused_peak_twice_weights", "fused_peak_over_weights >= 1.8 and fused_peak_over_weights <= 2.5",
         text("At $n = ", rounded(last), "$ the peak is ", fixed(over_p, 2), " times the weights: $P$ is kept for the "
              "backward, and the backward makes $dS$, another $n \\times n$ matrix, while $P$ is still alive (",
              fixed(per_n2, 1), " bytes per $n^2$)."),
         text("At $n = ", rounded(last), "$ the peak is ", fixed(over_p, 2), " times the weights, not the two copies "
              "($P$ and $dS$) of the backward: other buffers weigh in at this size.")});
  claim({"fused_time_quadratic", "fused_time_slope >= 1.6",
         text("The CPU time grows like $n^{", fixed(time_slope, 2), "}$ over the same sizes."),
         text("The CPU time grows like $n^{", fixed(time_slope, 2), "}$ over the same sizes, below $n^2$: at these "
              "sizes the fixed costs of a call still weigh in."),
         // A full run's sizes reach far enough for n^2 to show; a quick run's smallest sizes are
         // near the fixed costs, and on a loaded machine its slope read 1.52 to 1.64 (threshold 1.6).
         Expect::full_run, {{"fused_time_slope", time_slope}}});
  // Blocks of 256 MiB and more are mapped afresh on every call (core/runtime/allocator.hpp).
  const double faults_per_mib = fused.page_faults.back() / fused.peak_mib.back(),
               faults_2048 = fused.at(fused.page_faults, 2048),
               growth = fused.at(fused.cpu_ms, 8192) / fused.at(fused.cpu_ms, 4096);
  claim({"fused_fresh_pages", "faults_per_mib_last >= 100 and faults_n2048 < 1000",
         text("At $n = ", rounded(last), "$ one call takes ", rounded(fused.page_faults.back()), " page faults, ",
              rounded(faults_per_mib), " per MiB of its peak (a page is ", sysconf(_SC_PAGESIZE) / 1024, " KiB, so ",
              1024 * 1024 / sysconf(_SC_PAGESIZE), " per MiB means all of it), against ", rounded(faults_2048),
              " at $n = 2048$: an $n \\times n$ block of 256 MiB or more (from $n = 8192$) is above the allocator's "
              "threshold for keeping freed blocks, so every call maps fresh pages and touches each for the first time. "
              "The time pays for it: from $n = 4096$ to 8192 it grows ", fixed(growth, 1), " times."),
         text("Up to $n = ", rounded(last), "$ the page faults stay few (", rounded(fused.page_faults.back()), " in "
              "the last call): every $n \\times n$ block here is below 256 MiB, where the allocator keeps freed blocks "
              "for the next call. A full run goes on to blocks above it."),
         Expect::full_run, {{"faults_per_mib_last", faults_per_mib}, {"faults_n2048", faults_2048}}});
  const double next = 2 * last;
  say("This run's memory budget is ", fixed(budget / kMiB, 0), " MiB, so the fused op stops at $n = ", rounded(last),
      "$: $n = ", rounded(next), "$ would need about ", fixed(per_n2 * next * next / kMiB, 0), " MiB.");
  const double ram = machine_bytes();
  if (ram > 0) {
    const double n_max = std::sqrt(ram / per_n2), blocks = 16 * 8;
    say("This machine has ", fixed(ram / (1024 * kMiB), 1), " GiB. At ", fixed(per_n2, 1), " bytes per $n^2$, one "
        "head of one sequence fills it near $n = ", rounded(std::round(n_max / 100) * 100), "$, and a batch of 16 "
        "sequences with 8 heads (", blocks, " such blocks at once, in one layer) near $n = ",
        rounded(std::round(n_max / std::sqrt(blocks) / 10) * 10), "$.");
    config("machine_memory_gib", ram / (1024 * kMiB));
  }
  save_figure(cost_figure({&fused}, {text("The fused op against n: one head, d = ", kD, " (float)"), {{0, 2.0, 4096}},
                                     {{0, 2.0}}}),
              "the_wall",
              "Forward + backward CPU time and peak memory of the fused attention op against sequence length, "
              "log-log, with n² lines through n = 4096 (time) and the last point (memory)");
}

// ---------------------------------------------------------------------------------------------
// 2. The online softmax on one row.

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
    const double m_new = std::max(m, tile_max), alpha = std::exp(m - m_new);  // e^(m - m'), 0 before the first tile
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

void online_softmax_figure(const std::vector<double>& s, const std::vector<OnlineStep>& steps, std::size_t tile,
                           double total, const std::vector<double>& exact) {
  plots::Figure fig(2400, 1000, 1, 3);
  fig.title("The online softmax on one row: 16 scores in 4 tiles of 4");
  plots::LineOptions lo;
  lo.markers = true;
  std::vector<double> j(s.size()), stair_x, stair_y;
  std::iota(j.begin(), j.end(), 0.0);
  for (std::size_t t = 0; t < steps.size(); ++t) {  // the running max over each tile, the pen lifted between tiles
    stair_x.insert(stair_x.end(), {double(t * tile), double((t + 1) * tile - 1), NAN});
    stair_y.insert(stair_y.end(), {steps[t].m, steps[t].m, NAN});
  }
  lo.ymin = -1.5, lo.ymax = 4.5;
  plots::line_plot(fig.panel(0).title("Scores, running max").xlabel("key j (tiles of 4)").ylabel("score"),
                   {curve("score s_j", j, s), curve("running max m", stair_x, stair_y)}, lo);
  std::vector<double> seen, l_own, l_final, total_line, out0, out1, exact0, exact1;
  for (std::size_t t = 0; t < steps.size(); ++t) {
    seen.push_back(double((t + 1) * tile));
    l_own.push_back(steps[t].l), l_final.push_back(steps[t].l_final_frame), total_line.push_back(total);
    out0.push_back(steps[t].out[0]), out1.push_back(steps[t].out[1]);
    exact0.push_back(exact[0]), exact1.push_back(exact[1]);
  }
  lo.ymin = 0.0, lo.ymax = 5.5;
  plots::line_plot(fig.panel(1).title("Running sum ℓ").xlabel("keys seen").ylabel("sum of e^(s − m)"),
                   {curve("ℓ (running max)", seen, l_own), curve("ℓ seen from final max", seen, l_final),
                    reference("true total", seen, total_line)},
                   lo);
  lo.ymin = -1.0, lo.ymax = 1.0;
  plots::line_plot(fig.panel(2).title("Output so far, a / ℓ").xlabel("keys seen").ylabel("output"),
                   {curve("coordinate 1", seen, out0), curve("coordinate 2", seen, out1),
                    reference("softmax(s) V", seen, exact0), reference("", seen, exact1)},
                   lo);
  save_figure(fig, "online_softmax_row",
              "The online softmax on one row of 16 scores in 4 tiles: the running max (left), the running sum, "
              "rescaled whenever the max moves (middle), and the output so far, which ends at the softmax output (right)");
}

void online_softmax_row() {
  // One row of 16 scores in 4 tiles: the running max moves in tiles 2 and 4, not in tile 3.
  const std::vector<double> s = {0.3, -1.2, 0.8, 0.1, 1.9, 0.4, -0.5, 1.1, -0.8, 0.2, 1.5, -0.3, 2.6, 0.7, -1.0, 0.9};
  const std::size_t tile = 4, n = s.size();
  Generator gen(12);
  const xt::xarray<double> v = random_normal<double>({n, 2}, gen);
  say("$\\mathrm{softmax}(s)_j = e^{s_j - m} / \\sum_l e^{s_l - m}$ with $m = \\max_l s_l$ needs the whole row "
      "before the first weight: the max, then the sum. The online softmax needs neither. Keep three things per row: "
      "the largest score seen so far $m$, the sum $\\ell = \\sum_j e^{s_j - m}$ over the keys seen so far, and the "
      "output so far $a = \\sum_j e^{s_j - m} v_j$. A new tile $T$ of scores moves the max to $m'$, and every old term "
      "$e^{s_j - m}$ becomes $e^{s_j - m'} = e^{s_j - m}\\,e^{m - m'}$, so:");
  say("$$m' = \\max\\big(m, \\max_{j \\in T} s_j\\big), \\qquad "
      "\\ell' = e^{m - m'}\\,\\ell + \\sum_{j \\in T} e^{s_j - m'}, "
      "\\qquad a' = e^{m - m'}\\,a + \\sum_{j \\in T} e^{s_j - m'}\\,v_j.$$");
  say("The factor $e^{m - m'}$ is at most 1, so nothing overflows, and a tile that brings no new max leaves it at "
      "$e^0 = 1$. After the last tile $a / \\ell = \\mathrm{softmax}(s)\\,V$: every term carries the same $e^{-m}$ "
      "once the rescalings are multiplied out. One row of ", n, " scores with 2-D values, in ", n / tile, " tiles of ",
      tile, ":");
  const std::vector<OnlineStep> steps = online_softmax(s, v, tile);
  std::vector<std::vector<std::string>> rows;
  for (std::size_t t = 0; t < steps.size(); ++t) {
    std::string scores;
    for (std::size_t j = t * tile; j < (t + 1) * tile; ++j) scores += (j > t * tile ? ", " : "") + fixed(s[j], 1);
    const OnlineStep& st = steps[t];
    rows.push_back(row(t + 1, scores, fixed(st.tile_max, 1), fixed(st.m, 1), t == 0 ? "-" : fixed(st.rescale, 4),
                       fixed(st.l, 4), text("(", fixed(st.out[0], 4), ", ", fixed(st.out[1], 4), ")")));
  }
  table({"tile", "scores", "tile max", "running max $m$", "rescale $e^{m - m'}$", "running sum $\\ell$",
         "output so far $a / \\ell$"},
        rows);
  // The direct softmax, for comparison.
  const double mx = *std::max_element(s.begin(), s.end());
  double total = 0;
  for (double x : s) total += std::exp(x - mx);
  std::vector<double> exact(2, 0.0);
  for (std::size_t j = 0; j < n; ++j)
    for (std::size_t c = 0; c < 2; ++c) exact[c] += std::exp(s[j] - mx) / total * v(j, c);
  const double diff = std::max(std::abs(steps.back().out[0] - exact[0]), std::abs(steps.back().out[1] - exact[1]));
  metric("online_softmax_row_max_abs_diff", diff);
  claim({"online_softmax_exact", "online_softmax_row_max_abs_diff <= 1e-12",
         text("The last row is the softmax output computed directly, (", fixed(exact[0], 4), ", ", fixed(exact[1], 4),
              "), to ", sci(diff, 1), " in double: rounding."),
         text("The last row differs from the softmax output computed directly, (", fixed(exact[0], 4), ", ",
              fixed(exact[1], 4), "), by ", sci(diff, 1), ": more than rounding.")});
  say("The sum seen from the final max, $\\ell\\,e^{m - m_{\\text{final}}}$, only grows tile by tile towards the true "
      "total ", fixed(total, 4), "; the sum in the running frame jumps down whenever the max moves.");
  online_softmax_figure(s, steps, tile, total, exact);
}

// ---------------------------------------------------------------------------------------------
// 3. The backward from the log-sum-exp.

// The largest |difference| between two arrays of any float type.
template <class A, class B>
double worst(const A& a, const B& b) {
  return max_abs_diff(xt::xarray<double>(xt::cast<double>(a)), xt::xarray<double>(xt::cast<double>(b)));
}

// Tiled against fused, with a causal and a padding mask: outputs and the three gradients.
template <class T>
double tiled_against_fused(std::uint64_t seed) {
  const std::size_t B = 2, n = 300;
  Generator gen(seed);
  const Array<T> q = random_normal<T>({B, n, kD}, gen), k = random_normal<T>({B, n, kD}, gen),
                 v = random_normal<T>({B, n, kD}, gen), up = random_normal<T>({B, n, kD}, gen);
  Mask real = xt::ones<bool>(Shape{B, 1, n});
  for (std::size_t j = 250; j < n; ++j) real(1, 0, j) = false;  // the second sequence is 250 tokens long
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
  double diff = 0;
  for (std::size_t i = 0; i < 4; ++i) diff = std::max(diff, worst(results[0][i], results[1][i]));
  return diff;
}

void backward_from_lse() {
  say("tiled_attention (core/ops/tiled_attention.hpp) runs this update for every query row at once: a tile of 64 "
      "queries meets the key tiles one after another (32 keys each at $d = 64$, so that each tile product fits a kernel "
      "generated for its shape), computes the tile's scores $S = QK^\\top/\\sqrt{d}$ with one small matrix product, "
      "updates $m$, $\\ell$ and $a$, and drops the scores. It saves the output $O$ and one number per row, the "
      "log-sum-exp of its scores, $L_i = m_i + \\log \\ell_i$. That is all the backward needs. $L_i$ is the log of the "
      "softmax's denominator, so each tile of weights comes back exactly from the recomputed scores, and the softmax "
      "rule of lesson 06 gives the gradient of the scores:");
  say("$$P_{ij} = e^{S_{ij} - L_i}, \\qquad dP = dO\\,V^\\top, \\qquad dS_{ij} = P_{ij}\\,\\big(dP_{ij} - D_i\\big), "
      "\\qquad D_i = \\sum_j P_{ij}\\,dP_{ij} = dO_i \\cdot O_i.$$");
  say("The last equality is what makes tiles possible: $O_i = \\sum_j P_{ij} V_j$, so $\\sum_j P_{ij}\\,(dO_i \\cdot V_j) "
      "= dO_i \\cdot O_i$, one dot product per row before the first tile, no pass over a row of $P$. Then "
      "$dV = P^\\top dO$, $dQ = dS\\,K/\\sqrt{d}$ and $dK = dS^\\top Q/\\sqrt{d}$, tile by tile. Five small products per "
      "pair of tiles ($S$, $dV$, $dP$, $dQ$, $dK$) against the fused op's four big ones in its backward: the price of "
      "not storing $P$ is computing $S$ twice.");
  const double d64 = tiled_against_fused<double>(seed() + 21), d32 = tiled_against_fused<float>(seed() + 21);
  metric("tiled_vs_fused_max_abs_diff_double", d64);
  metric("tiled_vs_fused_max_abs_diff_float", d32);
  say("The check: 2 sequences of 300 tokens, the second 250 long and padded, a causal mask; the output and $dQ$, $dK$, "
      "$dV$ of the tiled op against the fused op's (tests/test_efficient_attention.cpp checks every mask and tile size).");
  claim({"tiled_equals_fused", "tiled_vs_fused_max_abs_diff_double <= 1e-12 and tiled_vs_fused_max_abs_diff_float <= 1e-4",
         text("The same function, not an approximation: they differ by at most ", sci(d64, 1), " in double and ",
              sci(d32, 1), " in float, rounding."),
         text("They differ by ", sci(d64, 1), " in double and ", sci(d32, 1), " in float: more than rounding.")});
}

// ---------------------------------------------------------------------------------------------
// 4. Tiled against fused, against n.

void tiled_against_n(const CostCurve& fused, const CostCurve& tiled) {
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < tiled.n.size(); ++i) {
    const double at = tiled.n[i];
    const bool has = fused.ran_at(at);
    const double f_cpu = fused.at(fused.cpu_ms, at), f_mib = fused.at(fused.peak_mib, at);
    rows.push_back(row(rounded(at), has ? fixed(f_cpu, 2) : "over budget", fixed(tiled.cpu_ms[i], 2),
                       has ? fixed(tiled.cpu_ms[i] / f_cpu, 2) : "-", has ? fixed(f_mib, 2) : "-",
                       fixed(tiled.peak_mib[i], 2), has ? fixed(f_mib / tiled.peak_mib[i], 1) : "-"));
  }
  table({"$n$", "fused CPU ms", "tiled CPU ms", "CPU time tiled / fused", "fused peak MiB", "tiled peak MiB",
         "memory fused / tiled"},
        rows);
  const double m_ratio = fused.at(fused.peak_mib, 4096) / tiled.at(tiled.peak_mib, 4096),
               t_ratio = tiled.at(tiled.cpu_ms, 4096) / fused.at(fused.cpu_ms, 4096),
               slope = tiled.last_slope(tiled.peak_mib);
  metric("memory_ratio_fused_over_tiled_n4096", m_ratio);
  metric("tiled_peak_mib_n4096", tiled.at(tiled.peak_mib, 4096));
  metric("tiled_memory_slope", slope);
  metric("fused_largest_n", fused.n.back());
  metric("tiled_largest_n", tiled.n.back());
  timing("cpu_time_ratio_tiled_over_fused_n4096", t_ratio);
  timing("wall_time_ratio_tiled_over_fused_n4096",
         tiled.at(tiled.wall_ms, 4096) / fused.at(fused.wall_ms, 4096));
  claim({"tiled_memory_ratio", "memory_ratio_fused_over_tiled_n4096 >= 10",
         text("At $n = 4096$ the tiled op holds ", fixed(m_ratio, 1), " times less memory than the fused op (",
              fixed(tiled.at(tiled.peak_mib, 4096), 1), " MiB against ", fixed(fused.at(fused.peak_mib, 4096), 0), ")."),
         text("At $n = 4096$ the tiled op holds only ", fixed(m_ratio, 1), " times less memory than the fused op.")});
  claim({"tiled_memory_linear", "tiled_memory_slope <= 1.2",
         text("Its memory grows like $n^{", fixed(slope, 2), "}$ over the last three sizes, linearly: the output, "
              "the upstream gradient, the log-sum-exp (one number per row), the three gradients, and one more copy "
              "of $dQ$ (the key tiles are dealt to two groups that run in parallel, each adding into its own $dQ$, "
              "summed in a fixed order at the end: the same bits at any thread count)."),
         text("Its memory grows like $n^{", fixed(slope, 2), "}$ over the last three sizes: faster than linear.")});
  claim({"tiled_runs_further", "tiled_largest_n > fused_largest_n",
         text("Under this run's budget the fused op stops at $n = ", rounded(fused.n.back()), "$; the tiled op goes "
              "on to $n = ", rounded(tiled.n.back()), "$ in ", fixed(tiled.peak_mib.back(), 0), " MiB."),
         text("Both ops run to the largest size, $n = ", rounded(tiled.n.back()), "$, under this run's budget.")});
  say("Which way the time goes depends on the machine: the tiled op computes $S$ twice, while the fused op streams "
      "$n \\times n$ matrices through memory ($S$, $P$, $dP$, $dS$, 64 MiB each at $n = 4096$, written and read again) "
      "and a tile of the tiled op stays in cache.");
  claim({"tiled_time_comparable", "cpu_ratio_tiled_over_fused <= 1.5",
         text("Here its forward and backward take ", fixed(t_ratio, 2), " times the fused op's CPU time at $n = 4096$ "
              "(measured interleaved), at most one and a half times: the memory comes at little or no cost in time."),
         text("Here its forward and backward take ", fixed(t_ratio, 2), " times the fused op's CPU time at $n = 4096$ "
              "(measured interleaved): on this machine the memory is bought with time."),
         Expect::every_run, {{"cpu_ratio_tiled_over_fused", t_ratio}}});
  save_figure(cost_figure({&fused, &tiled}, {text("Exact attention two ways: fused (stores P) and tiled, d = ", kD),
                                             {{0, 2.0, 4096}}, {{0, 2.0}, {1, 1.0}}}),
              "exact_fused_vs_tiled",
              "CPU time and peak memory of forward + backward against n: the fused op (n² memory) and the tiled op "
              "(n memory), the same outputs and gradients");
  say("Exercises (exercises/17_tiled_attention.cpp, graded by build/bin/grade 15): 15.1 one step of the online "
      "softmax, 15.2 the backward from the saved log-sum-exp, 15.3 an experiment: predict the peak bytes of each "
      "op before the grader counts them.");
}

}  // namespace

int main(int argc, char** argv) {
  return run_lesson({"17_tiled_attention", "Exact attention by tiles",
                     "Attention's n² wall measured, then the same function by tiles: the online softmax derived on one "
                     "row, the backward from the saved log-sum-exp, equality with the fused op, memory and time against n",
                     "memory_ratio_fused_over_tiled_n4096", "exact_fused_vs_tiled"},
                    argc, argv, [] {
                      const std::vector<std::size_t> sizes =
                          full_or_quick(std::vector<std::size_t>{128, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768},
                                        std::vector<std::size_t>{128, 256, 512, 1024, 2048, 4096, 8192});
                      const double budget = full_or_quick(2.5, 0.25) * 1024 * kMiB;
                      config({{"memory_budget_mib", budget / kMiB}, {"head_dim", kD}});
                      const std::vector<CostCurve> costs = measure(sizes, budget);
                      section("1. The fused op against n");
                      the_wall(costs[0], budget);
                      section("2. The online softmax on one row");
                      online_softmax_row();
                      section("3. The backward from the log-sum-exp");
                      backward_from_lse();
                      section("4. Tiled against fused, against n");
                      tiled_against_n(costs[0], costs[1]);
                    });
}
