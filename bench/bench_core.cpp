// build/bin/bench_core: how close the engine gets to the machine.
//
//  (a) raw OpenBLAS sgemm GFLOP/s on preallocated buffers, against attnlab's batched matmul
//      forward + backward through the tape (allocation, recording and all): the matmul-bound
//      part of training can be no faster than the first column.
//  (b) the fixed cost of recording and back-propagating one tiny op, which bounds every
//      unrolled RNN and every small model.
//  (c) the fused attention op forward + backward at the lesson shapes (many small blocks), its
//      products by generated kernels (core/runtime/gemm_plan.hpp) and by OpenBLAS, timed in
//      turn, against the raw sgemm rate of (a) at n = 256.
//  (d) linear forward + backward at the lesson shapes (thousands of rows, feature widths 64 to
//      256): row blocks by generated kernels (core/runtime/tall_gemm.hpp) against OpenBLAS.
//  (e) attention against sequence length n (one sequence, one head, d = 64): the fused op, which
//      stores the n x n weights, against the tiled op (online softmax, lesson 17) and the
//      approximations (local, linear, Linformer): forward + backward time and the peak bytes
//      each holds beyond its inputs (core/runtime/allocator.hpp).
//
//  (f) the thread pool's cost per parallel region (core/runtime/parallel.hpp): an empty region
//      called back to back (the pool's threads polling) and after the caller has worked alone
//      for 2 ms (its threads asleep), and where splitting a memory pass (y = a + b) in two starts
//      to pay, both ways, and what the adaptive rule (core/runtime/region_rule.hpp) makes of it.
//
//   bench_core [--threads N] [--quick]
//
// Each number is the median of N timed repeats after warm-up runs, with the best run beside it
// in parentheses (the better guide when other processes share the cores).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/runtime/allocator.hpp"
#include "core/runtime/blas.hpp"
#include "core/runtime/gemm_plan.hpp"
#include "core/ops.hpp"
#include "core/runtime/parallel.hpp"
#include "io/program.hpp"
#include "nn/attention/linformer.hpp"

using namespace attnlab;

namespace {

using Clock = std::chrono::steady_clock;

struct Config {
  bool quick = false;
  std::string sections = "abcdef";  // which sections to run
  int threads = 1;  // OpenBLAS and attnlab kernels (core/runtime/parallel)
};

// Wall time of fn in seconds over repeated runs: the median (the headline number) and the
// best (robust when other processes share the cores). The repeat count adapts to fn's cost so
// that a measurement takes about `budget` seconds, within [min_reps, max_reps].
struct Timing {
  double median = 0.0, best = 0.0;
};

Timing measure(const std::function<void()>& fn, int warmup, int min_reps, int max_reps,
               double budget) {
  for (int i = 0; i < warmup; ++i) fn();
  auto t0 = Clock::now();
  fn();
  const double first = std::chrono::duration<double>(Clock::now() - t0).count();
  const int reps = std::clamp(static_cast<int>(budget / std::max(first, 1e-9)), min_reps, max_reps);
  std::vector<double> times;
  times.reserve(reps);
  for (int i = 0; i < reps; ++i) {
    t0 = Clock::now();
    fn();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return {times[reps / 2], times.front()};
}

// Rates (work / time) for both timings.
Timing rate(double work, const Timing& t) { return {work / t.median, work / t.best}; }

// Raw sgemm C = A B on n x n float buffers allocated once.
Timing sgemm_gflops(std::size_t n, const Config& cfg) {
  Generator gen(1);
  std::vector<float> a(n * n), b(n * n), c(n * n);
  for (auto& x : a) x = float(gen.uniform(-1, 1));
  for (auto& x : b) x = float(gen.uniform(-1, 1));
  const Timing t = measure(
      [&] {
        gemm<float>(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
      },
      2, cfg.quick ? 3 : 5, 200, cfg.quick ? 0.1 : 0.4);
  return rate(2.0 * double(n) * n * n * 1e-9, t);
}

// Y = matmul(A, B) for (b, n, n) x (b, n, n), then backward with an upstream gradient:
// three batched GEMMs (Y, dA = dY B^T, dB = A^T dY).
Timing matmul_gflops(std::size_t batch, std::size_t n, const Config& cfg) {
  Generator gen(2);
  const Shape s{batch, n, n};
  Tensor<float> a = Tensor<float>::rand(s, gen, -1, 1, true);
  Tensor<float> b = Tensor<float>::rand(s, gen, -1, 1, true);
  const Array<float> up = random_uniform<float>(s, gen, -1, 1);
  const Timing t = measure(
      [&] {
        a.zero_grad();
        b.zero_grad();
        Tensor<float> y = matmul(a, b);
        y.backward(up);
      },
      2, cfg.quick ? 3 : 5, 100, cfg.quick ? 0.1 : 0.5);
  return rate(3.0 * 2.0 * double(batch) * n * n * n * 1e-9, t);
}

// Rates (GFLOP/s) of once(true) and once(false), each returning seconds, run in alternation
// after warm-up so that both see the same load: medians and bests over the rounds.
template <class Once>
std::pair<Timing, Timing> alternate(Once once, const Config& cfg, double gflop) {
  for (int i = 0; i < 3; ++i) once(true), once(false);
  std::vector<double> on, off;
  const int rounds = cfg.quick ? 15 : 60;
  for (int r = 0; r < rounds; ++r) on.push_back(once(true)), off.push_back(once(false));
  set_small_gemm(true);
  auto summary = [](std::vector<double> t) {
    std::sort(t.begin(), t.end());
    return Timing{t[t.size() / 2], t.front()};
  };
  return {rate(gflop, summary(on)), rate(gflop, summary(off))};
}

// One row of sections (c) and (d): generated kernels against OpenBLAS, and the kernels' median
// as a share of the raw sgemm rate `limit`.
void print_comparison(const char* name, const std::pair<Timing, Timing>& rates, double limit) {
  const auto& [on, off] = rates;
  std::printf("%-30s | %8.1f (%8.1f) | %8.1f (%8.1f) | %7.2fx | %7.1f%%\n", name, on.median, on.best,
              off.median, off.best, on.median / off.median, 100.0 * on.median / limit);
  std::fflush(stdout);
}

// Fused multi-head self-attention forward + backward on a packed (B, L, 3 h d) input: six
// products of 2 L L d flops per (batch, head) block. Generated kernels on and off in turn, one
// call each per round, so both see the same load; medians and bests over the rounds.
struct AttentionShape {
  const char* name;
  std::size_t B, L, heads, d;
};

std::pair<Timing, Timing> attention_gflops(const AttentionShape& sh, const Config& cfg) {
  Generator gen(3);
  Tensor<float> qkv = Tensor<float>::rand({sh.B, sh.L, 3 * sh.heads * sh.d}, gen, -1, 1, true);
  const Array<float> up = random_uniform<float>({sh.B, sh.L, sh.heads * sh.d}, gen, -1, 1);
  auto once = [&](bool generated) {
    set_small_gemm(generated);
    qkv.zero_grad();
    const auto t0 = Clock::now();
    multi_head_self_attention(qkv, sh.heads).output.backward(up);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  return alternate(once, cfg, 6.0 * 2.0 * double(sh.B * sh.heads) * sh.L * sh.L * sh.d * 1e-9);
}

// y = linear(x, W, b) forward and backward (dx, dW, db): three products of 2 R in out flops.
// Generated kernels on and off in turn, as for attention.
struct LinearShape {
  const char* name;
  std::size_t rows, in, out;
};

std::pair<Timing, Timing> linear_gflops(const LinearShape& sh, const Config& cfg) {
  Generator gen(4);
  Tensor<float> x = Tensor<float>::rand({sh.rows, sh.in}, gen, -1, 1, true);
  Tensor<float> w = Tensor<float>::rand({sh.out, sh.in}, gen, -1, 1, true);
  Tensor<float> b = Tensor<float>::rand({sh.out}, gen, -1, 1, true);
  const Array<float> up = random_uniform<float>({sh.rows, sh.out}, gen, -1, 1);
  auto once = [&](bool generated) {
    set_small_gemm(generated);
    x.zero_grad();
    w.zero_grad();
    b.zero_grad();
    const auto t0 = Clock::now();
    linear(x, w, b).backward(up);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  return alternate(once, cfg, 3.0 * 2.0 * double(sh.rows) * sh.in * sh.out * 1e-9);
}

// ns per op of a chain of `len` tiny ops on a 1-element tensor, forward only or forward +
// backward. Tearing the graph down is part of every training step, so it is timed in both.
Timing tiny_op_ns(const std::function<Tensor<float>(const Tensor<float>&, int)>& op, int len,
                  bool with_backward, const Config& cfg) {
  Tensor<float> x = Tensor<float>::full({1}, 0.5f, true);
  const Timing t = measure(
      [&] {
        x.zero_grad();
        Tensor<float> y = x;
        for (int i = 0; i < len; ++i) y = op(y, i);
        if (with_backward) y.backward();
      },
      3, cfg.quick ? 5 : 15, 2000, cfg.quick ? 0.1 : 0.4);
  return {t.median / len * 1e9, t.best / len * 1e9};
}

void rule(int width) {
  std::printf("%s\n", std::string(width, '-').c_str());
}

// (e): forward + backward of each attention op on one (1, n, d) sequence, in turn each round.
struct AttentionVariant {
  const char* name;
  std::function<Tensor<float>(const Tensor<float>&, const Tensor<float>&, const Tensor<float>&)> op;
};

void attention_against_n(const Config& cfg) {
  const std::size_t d = 64, window = 64, rank = 64;  // as in lesson 18
  std::vector<std::size_t> sizes{256, 512, 1024, 2048, 4096};
  if (cfg.quick) sizes = {256, 512, 1024};
  std::printf("\n(e) attention forward + backward against n: one sequence, one head, d = %zu, float;\n"
              "    ms as median (best) over alternating rounds; MiB: the most held beyond the inputs (at 1 thread)\n"
              "    (local: window %zu; Linformer: rank %zu)\n", d, window, rank);
  rule(112);
  std::printf("%6s | %-10s | %21s | %9s | %10s\n", "n", "op", "fwd + bwd ms", "peak MiB", "vs fused");
  rule(112);
  for (std::size_t n : sizes) {
    Generator gen(5);
    Tensor<float> q = Tensor<float>::randn({1, n, d}, gen, 0, 1, true), k = Tensor<float>::randn({1, n, d}, gen, 0, 1, true),
                  v = Tensor<float>::randn({1, n, d}, gen, 0, 1, true);
    const Array<float> up = random_normal<float>({1, n, d}, gen);
    nn::Linformer<float> linformer(n, std::min(rank, n));
    const std::vector<AttentionVariant> variants{
        {"fused", [](auto& a, auto& b, auto& c) { return scaled_dot_product_attention(a, b, c).output; }},
        {"tiled", [](auto& a, auto& b, auto& c) { return tiled_attention(a, b, c); }},
        {"local", [&](auto& a, auto& b, auto& c) { return local_attention(a, b, c, window); }},
        {"linear", [](auto& a, auto& b, auto& c) { return linear_attention(a, b, c); }},
        {"Linformer", [&](auto& a, auto& b, auto& c) { return linformer.forward(a, b, c); }},
    };
    auto once = [&](const AttentionVariant& var) {
      for (const auto* x : {&q, &k, &v}) x->zero_grad();
      linformer.zero_grad();
      const auto t0 = Clock::now();
      var.op(q, k, v).backward(up);
      return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
    };
    std::vector<double> peak;  // the gradients of the inputs dropped first, outside what is counted
    for (const auto& var : variants) {
      for (const auto* x : {&q, &k, &v}) x->zero_grad();
      peak.push_back(double(peak_bytes_at_one_thread([&] { var.op(q, k, v).backward(up); })) / (1 << 20));
    }
    std::vector<std::vector<double>> ms(variants.size());
    const int rounds = cfg.quick ? 5 : (n >= 2048 ? 7 : 15);
    for (int r = 0; r < rounds; ++r)
      for (std::size_t i = 0; i < variants.size(); ++i) ms[i].push_back(once(variants[i]));
    for (auto& m : ms) std::sort(m.begin(), m.end());
    const double fused = ms[0][ms[0].size() / 2];
    for (std::size_t i = 0; i < variants.size(); ++i)
      std::printf("%6zu | %-10s | %9.2f (%9.2f) | %9.2f | %9.2fx\n", n, variants[i].name, ms[i][ms[i].size() / 2],
                  ms[i].front(), peak[i], fused / ms[i][ms[i].size() / 2]);
    rule(112);
    std::fflush(stdout);
  }
  std::printf("(vs fused: the fused op's median time over this op's; above 1, this op is faster)\n");
}

// (f): what a parallel region costs, and where a split memory pass pays.
// Microseconds of `region` run `reps` times back to back, per call.
double hot_us(const std::function<void()>& region, int reps) {
  const auto t0 = Clock::now();
  for (int i = 0; i < reps; ++i) region();
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count() / reps;
}

// Microseconds of one call of `region` after the caller has spun alone for 2 ms, long enough for
// the pool's threads to stop polling and sleep.
double cold_us(const std::function<void()>& region) {
  const auto until = Clock::now() + std::chrono::milliseconds(2);
  while (Clock::now() < until) {
  }
  const auto t0 = Clock::now();
  region();
  return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

void pool_cost(const Config& cfg) {
  std::printf("\n(f) the thread pool at %d threads: microseconds per parallel region, median over rounds\n",
              threads());
  if (threads() < 2) {
    std::printf("    one thread: every region runs inline on the caller (run with --threads 2)\n");
    return;
  }
  const std::size_t chunks = static_cast<std::size_t>(threads());
  const auto empty = [&] { parallel_for(chunks, 1, [](std::size_t, std::size_t) {}); };
  const int rounds = cfg.quick ? 15 : 41;
  std::vector<double> hot, cold;
  const RegionPolicy before = region_policy();
  set_region_policy(RegionPolicy::pool);  // the hand-off itself, every time
  for (int r = 0; r < rounds; ++r) hot.push_back(hot_us(empty, 200)), cold.push_back(cold_us(empty));
  rule(110);
  std::printf("empty region on the pool, back to back: %.2f us;  after 2 ms alone (threads asleep): %.2f us\n",
              median_of(hot), median_of(cold));
  rule(110);
  // y = a + b over n floats: inline (one chunk), in `chunks` parts always on the pool, and in
  // the same parts under the adaptive rule (core/runtime/region_rule.hpp), back to back and cold.
  std::printf("%10s | %10s | %10s | %10s | %7s | %10s | %10s | %10s | %7s\n", "n (floats)", "inline hot",
              "pool hot", "rule hot", "pays", "inline cold", "pool cold", "rule cold", "pays");
  rule(110);
  const std::vector<std::size_t> sizes = cfg.quick ? std::vector<std::size_t>{1 << 12, 1 << 16, 1 << 20}
                                                   : std::vector<std::size_t>{1 << 10, 1 << 12, 1 << 14, 1 << 15,
                                                                              1 << 16, 1 << 17, 1 << 18, 1 << 20};
  for (std::size_t n : sizes) {
    std::vector<float> a(n, 1.0f), b(n, 2.0f), y(n);
    auto pass = [&](std::size_t grain) {
      return [&, grain] {
        parallel_for(n, grain, [&](std::size_t lo, std::size_t hi) {
          for (std::size_t i = lo; i < hi; ++i) y[i] = a[i] + b[i];
        });
      };
    };
    // One pass in `chunks` parts, run on the pool and then under the rule: the policy is set once
    // before each timing loop, so no timed call pays for setting it.
    const std::size_t split = (n + chunks - 1) / chunks;
    const auto inline_pass = pass(n), split_pass = pass(split);
    const int reps = static_cast<int>(std::clamp<std::size_t>((std::size_t(1) << 22) / n, 4, 2000));
    std::vector<double> ih, ph, rh, ic, pc, rc;
    set_region_policy(RegionPolicy::pool);
    for (int r = 0; r < rounds; ++r) {
      ih.push_back(hot_us(inline_pass, reps));
      ph.push_back(hot_us(split_pass, reps));
      ic.push_back(cold_us(inline_pass));
      pc.push_back(cold_us(split_pass));
    }
    set_region_policy(RegionPolicy::adaptive);
    for (int i = 0; i < 64; ++i) split_pass();  // the rule's trials, before timing
    region_counts(true);
    for (int r = 0; r < rounds; ++r) rh.push_back(hot_us(split_pass, reps)), rc.push_back(cold_us(split_pass));
    const RegionCounts counts = region_counts(true);
    std::printf("%10zu | %10.2f | %10.2f | %10.2f | %6.2fx | %10.2f | %10.2f | %10.2f | %6.2fx  (rule: %ld pool, %ld caller)\n",
                n, median_of(ih), median_of(ph), median_of(rh), median_of(ih) / median_of(ph), median_of(ic),
                median_of(pc), median_of(rc), median_of(ic) / median_of(pc), counts.pool, counts.caller);
    std::fflush(stdout);
  }
  set_region_policy(before);
  rule(110);
  std::printf("(pays: inline time over pool time; above 1, splitting pays. rule: the adaptive rule's time on the same\n"
              " parts, which should track the faster of the two. pass_grain = %zu floats a chunk)\n",
              pass_grain);
}

}  // namespace

constexpr const char* kUsage =
    "usage: bench_core [--threads N] [--quick] [--sections LETTERS] [--help] [--version]\n"
    "  --threads N          threads for OpenBLAS and attnlab's kernels (default 1)\n"
    "  --quick              smaller sizes, fewer repeats\n"
    "  --sections LETTERS   run only these sections, e.g. 'ce' (default abcdef)\n";

int run(const std::vector<std::string>& args) {
  Config cfg;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--quick") cfg.quick = true;
    else if (args[i] == "--sections" && i + 1 < args.size()) {
      cfg.sections = args[++i];
      if (cfg.sections.empty() || cfg.sections.find_first_not_of("abcdef") != std::string::npos)
        throw UsageError("--sections takes letters among abcdef, got '" + cfg.sections + "'");
    } else if (args[i] == "--threads" && i + 1 < args.size())
      cfg.threads = static_cast<int>(integer_argument("--threads", args[++i], 1, 256));
    else throw UsageError("unknown or incomplete argument '" + args[i] + "'");
  }
  set_threads(cfg.threads);
  std::printf("attnlab bench_core: threads %d (OpenBLAS and attnlab)%s; timed repeats after warm-up\n\n",
              threads(), cfg.quick ? ", quick" : "");

  // Sections (c) and (d) compare with raw sgemm at n = 256.
  const bool small_products = cfg.sections.find_first_of("cd") != std::string::npos;
  const double limit = small_products ? sgemm_gflops(256, cfg).median : 0.0;

  if (cfg.sections.find('a') != std::string::npos) {
    // (a) GEMM-bound work.
    const std::size_t batch = 4;
    std::vector<std::size_t> sizes{64, 128, 256, 512, 1024};
    if (cfg.quick) sizes = {64, 128, 256};
    std::printf("(a) raw sgemm (n x n) vs matmul (%zu,n,n) x (%zu,n,n) forward + backward, float,\n"
                "    GFLOP/s as median (best); matmul counts 3 GEMMs of 2*%zu*n^3 flops\n",
                batch, batch, batch);
    rule(80);
    std::printf("%6s | %20s | %24s | %19s\n", "n", "sgemm", "matmul fwd+bwd", "% of sgemm");
    rule(80);
    for (std::size_t n : sizes) {
      const Timing raw = sgemm_gflops(n, cfg);
      const Timing mm = matmul_gflops(batch, n, cfg);
      std::printf("%6zu | %9.1f (%8.1f) | %11.1f (%10.1f) | %7.1f%% (%7.1f%%)\n", n, raw.median,
                  raw.best, mm.median, mm.best, 100.0 * mm.median / raw.median,
                  100.0 * mm.best / raw.best);
      std::fflush(stdout);
    }
    rule(80);
  }

  if (cfg.sections.find('b') != std::string::npos) {
    // (b) Tape overhead.
    const int len = 1000;
    std::printf("\n(b) tape overhead: a chain of %d tiny ops on a 1-element float tensor\n", len);
    std::printf("    ns per op as median (best)\n");
    rule(80);
    std::printf("%-36s | %19s | %19s\n", "op", "forward", "forward + backward");
    rule(80);
    const Tensor<float> one = Tensor<float>::full({1}, 1.0001f);
    struct Row {
      const char* name;
      std::function<Tensor<float>(const Tensor<float>&, int)> op;
    };
    const std::vector<Row> rows{
        {"add(x, scalar)", [](const Tensor<float>& y, int) { return add(y, 1e-3f); }},
        {"mul(x, scalar)", [](const Tensor<float>& y, int) { return mul(y, 1.0001f); }},
        {"add(x, c), c a 1-element constant",
         [&](const Tensor<float>& y, int) { return add(y, one); }},
        {"mul(x, c), c a 1-element constant",
         [&](const Tensor<float>& y, int) { return mul(y, one); }},
    };
    for (const Row& r : rows) {
      const Timing fwd = tiny_op_ns(r.op, len, false, cfg);
      const Timing both = tiny_op_ns(r.op, len, true, cfg);
      std::printf("%-36s | %8.0f (%8.0f) | %8.0f (%8.0f)\n", r.name, fwd.median, fwd.best,
                  both.median, both.best);
      std::fflush(stdout);
    }
    rule(80);
  }

  if (cfg.sections.find('c') != std::string::npos) {
    // (c) Attention at the lesson shapes.
    std::printf("\n(c) fused attention forward + backward, float, GFLOP/s as median (best) over\n"
                "    alternating rounds; 6 products of 2 L^2 d flops per (batch, head) block;\n"
                "    %% of the raw sgemm rate at n = 256 (%.1f GFLOP/s)\n", limit);
    rule(96);
    std::printf("%-30s | %19s | %19s | %8s | %8s\n", "shape (B, L, heads x d)", "generated kernels",
                "OpenBLAS", "ratio", "% sgemm");
    rule(96);
    const std::vector<AttentionShape> shapes{
        {"Transformer (64, 32, 4 x 16)", 64, 32, 4, 16},
        {"ViT patch 7 (128, 17, 4 x 16)", 128, 17, 4, 16},
        {"ViT patch 4 (128, 50, 4 x 16)", 128, 50, 4, 16},
        {"lesson 07 (64, 16, 8 x 8)", 64, 16, 8, 8},
        {"wide heads (32, 64, 4 x 32)", 32, 64, 4, 32},
        {"large encoder (8, 256, 8 x 64)", 8, 256, 8, 64},
    };
    for (const AttentionShape& sh : shapes) {
      print_comparison(sh.name, attention_gflops(sh, cfg), limit);
    }
    rule(96);
  }

  if (cfg.sections.find('d') != std::string::npos) {
    // (d) Linear layers at the lesson shapes.
    std::printf("\n(d) linear forward + backward (y, dx, dW, db), float, GFLOP/s as median (best) over\n"
                "    alternating rounds; 3 products of 2 R in out flops\n");
    rule(96);
    std::printf("%-30s | %19s | %19s | %8s | %8s\n", "shape (rows, in -> out)", "generated kernels",
                "OpenBLAS", "ratio", "% sgemm");
    rule(96);
    const std::vector<LinearShape> linears{
        {"ViT qkv (2176, 64 -> 192)", 2176, 64, 192},
        {"ViT ff in (2176, 64 -> 256)", 2176, 64, 256},
        {"ViT ff out (2176, 256 -> 64)", 2176, 256, 64},
        {"Transformer (2048, 64 -> 64)", 2048, 64, 64},
        {"GPT q, k, v (4096, 128 -> 128)", 4096, 128, 128},
        {"GPT ff in (4096, 128 -> 512)", 4096, 128, 512},
        {"GPT ff out (4096, 512 -> 128)", 4096, 512, 128},
        {"large (2048, 512 -> 512)", 2048, 512, 512},
        {"large ff in (2048, 512 -> 2048)", 2048, 512, 2048},
        {"large ff out (2048, 2048 -> 512)", 2048, 2048, 512},
    };
    for (const LinearShape& sh : linears) {
      print_comparison(sh.name, linear_gflops(sh, cfg), limit);
    }
    rule(96);
  }

  if (cfg.sections.find('e') != std::string::npos) {
    // (e) Attention against sequence length.
    attention_against_n(cfg);
  }
  if (cfg.sections.find('f') != std::string::npos) pool_cost(cfg);
  return 0;
}

int main(int argc, char** argv) { return run_program("bench_core", kUsage, argc, argv, run); }
