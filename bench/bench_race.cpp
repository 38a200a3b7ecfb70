// build/bin/bench_race: attnlab against PyTorch 1.13 (CPU, float32), one training step
// (forward, backward, Adam step) of the same model on the same batch shapes.
//
//   bench_race [--rounds R] [--warmup W] [--repeat N] [--models bahdanau,transformer,vit,vit11,gpt,large]
//              [--attn-threads 1,2] [--torch-threads 1,2] [--no-torch]
//
// The machine (CPU and count) and each side's kernels are printed first. --repeat N runs the
// whole race N times, fresh workers each time, and ends with each row's ratio and 1 -> 2 thread
// speed-up as median and range over the races: whether a verdict stands above the noise.
//   bench_race --worker MODEL --threads N      (internal: one contestant, driven over a pipe;
//                                               MODEL "sgemm" times raw sgemm only)
//
// Fairness on a shared machine: every contestant (attnlab and PyTorch, at 1 and at 2 threads)
// is its own long-lived worker process; the driver runs them round-robin, about 100 ms of steps
// each per round, so that load changes on the machine hit every contestant alike. Reported: the
// median step time of each; the CPUs it kept busy (its threads' CPU time over its wall time: a
// PyTorch worker at one thread still multiplies on every CPU, through its OpenBLAS's own threads);
// what else the machine did while it ran: the share the hypervisor
// took (steal) and the share the other workers ran (and which ran most); the best thread count
// of each side, the ratio attnlab / PyTorch, and the peak resident set (ru_maxrss) of each
// worker process, with the part of it the step itself added (peak minus the resident set once
// the model and batch are built). And the FLOP
// utilization: the operations of the step's products, counted as attnlab runs them, over its
// step time, against the raw sgemm rate at the same thread count, timed in the same rounds by a
// worker of its own (the large model's FFN product, (2048 x 512) x (512 x 2048)).
//
// Worker protocol (bench/race_torch.py speaks it too), one line each way:
//   -> "ready <maxrss_kb>"   <- "run K" -> "t ms ... ms"   <- "sgemm K" -> "t ms ... ms"
//   <- "flops" -> "f <operations of one step>" (products only, core/runtime/flops.hpp)
//   <- "quit" -> "rss <maxrss_kb>"
//   <- "profile K" -> "ok" (K steps under OpProfiler, its table on stderr; run it by hand:
//      printf "run 3\nprofile 20\nquit\n" | bench_race --worker transformer --threads 1)
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/runtime/blas.hpp"
#include "core/runtime/gemm_plan.hpp"
#include "core/runtime/flops.hpp"
#include "core/runtime/parallel.hpp"
#include "core/runtime/profile.hpp"
#include "core/ops.hpp"
#include "io/program.hpp"
#include "nn/attention/attention.hpp"
#include "nn/gru.hpp"
#include "nn/optim.hpp"
#include "nn/transformer/transformer.hpp"
#include "nn/vit.hpp"

#ifndef ATTNLAB_SOURCE_DIR
#define ATTNLAB_SOURCE_DIR "."
#endif

using namespace attnlab;
using F = float;

namespace {

using Clock = std::chrono::steady_clock;

long maxrss_kb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// ---------------------------------------------------------------- the models (attnlab side)

// Bahdanau et al. 2015 at the d2l scale: bidirectional GRU encoder, a bridge from its two final
// states to the decoder's first, a GRU-cell decoder fed [embedding; context], additive attention
// queried by the decoder state, a linear output on each decoder state, teacher forcing.
struct Bahdanau : nn::Module<F> {
  static constexpr std::size_t V = 40, H = 64;
  nn::Embedding<F> src_embed, tgt_embed;
  nn::GRU<F> encoder;
  nn::Linear<F> bridge;
  nn::Attention<F> attention;
  nn::GRUCell<F> cell;
  nn::Linear<F> out;

  explicit Bahdanau(Generator& gen)
      : src_embed(V, H, gen), tgt_embed(V, H, gen),
        encoder(H, H, gen, nn::GRUOptions{1, /*bidirectional=*/true}), bridge(2 * H, H, gen),
        attention(nn::make_score<F>("additive", H, 2 * H, gen, H)), cell(H + 2 * H, H, gen), out(H, V, gen) {
    register_module("src_embed", src_embed);
    register_module("tgt_embed", tgt_embed);
    register_module("encoder", encoder);
    register_module("bridge", bridge);
    register_module("attention", attention);
    register_module("cell", cell);
    register_module("out", out);
  }

  Tensor<F> loss(const IndexArray& src, const IndexArray& tgt_in, const IndexArray& tgt_out) {
    nn::GRUOutput<F> enc = encoder.forward(src_embed(src));  // (B, S, 2H), (2, B, H)
    const Tensor<F> fwd = squeeze(slice(enc.state, 0, 0, 1), 0);
    const Tensor<F> bwd = squeeze(slice(enc.state, 0, 1, 2), 0);
    Tensor<F> h = attnlab::tanh(bridge(concat<F>({fwd, bwd}, -1)));
    const Tensor<F> emb = tgt_embed(tgt_in);  // (B, T, H)
    const long T = static_cast<long>(tgt_in.shape()[1]);
    std::vector<Tensor<F>> hs;
    const nn::Memory<F> memory = attention.memory(enc.output, enc.output);  // W_k h once
    for (long t = 0; t < T; ++t) {
      const Tensor<F> ctx = attention.forward(h, memory).output;  // (B, 2H)
      h = cell.forward(concat<F>({squeeze(slice(emb, 1, t, t + 1), 1), ctx}, -1), h);
      hs.push_back(h);
    }
    return cross_entropy(out(stack(hs, 1)), tgt_out);
  }
};

struct Workload {
  std::unique_ptr<nn::Module<F>> model;
  std::function<Tensor<F>()> loss;
};

IndexArray random_ids(std::size_t b, std::size_t l, std::size_t vocab, Generator& gen) {
  IndexArray ids = IndexArray::from_shape({b, l});
  for (auto& x : ids) x = static_cast<Index>(gen.uniform(0.0, double(vocab))) % Index(vocab);
  return ids;
}

// Token embedding * sqrt(d) + post-norm ReLU encoder (no positions) + per-token head.
nn::EncoderModelConfig encoder_config(std::size_t d, std::size_t heads, std::size_t layers,
                                      std::size_t d_ff, std::size_t vocab) {
  nn::EncoderModelConfig c;
  c.vocab = vocab;
  c.num_classes = vocab;
  c.num_layers = layers;
  c.layer = nn::LayerConfig{d, heads, d_ff, /*dropout=*/0.0, /*norm_first=*/false,
                            nn::Activation::ReLU, 1e-5};
  c.positional = nn::Positional::None;
  c.pooling = nn::Pooling::None;
  return c;
}

Workload build(const std::string& name, Generator& gen) {
  Workload w;
  if (name == "bahdanau") {
    auto m = std::make_unique<Bahdanau>(gen);
    auto src = random_ids(64, 25, Bahdanau::V, gen), tin = random_ids(64, 10, Bahdanau::V, gen),
         tout = random_ids(64, 10, Bahdanau::V, gen);
    Bahdanau* p = m.get();
    w.loss = [p, src, tin, tout] { return p->loss(src, tin, tout); };
    w.model = std::move(m);
  } else if (name == "transformer" || name == "large") {
    const bool large = name == "large";
    const std::size_t V = large ? 1000 : 100, B = large ? 8 : 64, L = large ? 256 : 32;
    auto m = std::make_unique<nn::EncoderModel<F>>(
        large ? encoder_config(512, 8, 2, 2048, V) : encoder_config(64, 4, 2, 256, V), gen);
    auto ids = random_ids(B, L, V, gen), targets = random_ids(B, L, V, gen);
    nn::EncoderModel<F>* p = m.get();
    w.loss = [p, ids, targets] { return cross_entropy(p->forward(ids), targets); };
    w.model = std::move(m);
  } else if (name == "vit" || name == "vit11") {
    // "vit": patch 4, feed-forward 128; "vit11": lesson 16's model, patch 7, feed-forward 256.
    nn::ViTConfig c;
    c.layer.dropout = 0.0;
    if (name == "vit11") {
      c.patch = 7;
      c.layer.d_ff = 256;
    }
    auto m = std::make_unique<nn::ViT<F>>(c, gen);
    const Tensor<F> images = Tensor<F>::rand({128, 28, 28}, gen);
    IndexArray labels = IndexArray::from_shape({128});
    for (auto& x : labels) x = static_cast<Index>(gen.uniform(0.0, 10.0)) % 10;
    nn::ViT<F>* p = m.get();
    w.loss = [p, images, labels] { return cross_entropy(p->forward(images), labels); };
    w.model = std::move(m);
  } else if (name == "gpt") {
    // Lesson 11's character GPT at its full recipe: 4 pre-norm GELU blocks of d 128 (4 heads,
    // feed-forward 512), rotary positions, causal self-attention, output tied to the embedding;
    // the fortunes corpus's 108 characters, batches of 64 windows of 64 characters.
    nn::CausalLMConfig c;
    c.vocab = 108;
    c.num_layers = 4;
    c.max_length = 64;
    c.layer = nn::LayerConfig{128, 4, 512, 0.0, /*norm_first=*/true, nn::Activation::GELU, 1e-5};
    c.positional = nn::Positional::Rotary;
    c.tie_output = true;
    auto m = std::make_unique<nn::CausalLM<F>>(c, gen);
    auto ids = random_ids(64, 64, c.vocab, gen), targets = random_ids(64, 64, c.vocab, gen);
    nn::CausalLM<F>* p = m.get();
    w.loss = [p, ids, targets] { return cross_entropy(p->forward(ids), targets); };
    w.model = std::move(m);
  } else {
    fail("bench_race", "unknown model '", name, "'");
  }
  return w;
}

// ---------------------------------------------------------------- worker

int run_worker(const std::string& model, int threads) {
  set_threads(threads);
  // The "sgemm" worker builds no model: it only times raw sgemm, in a process of its own so that
  // its buffers never count in a model's memory.
  Generator gen(0);
  Workload w = model == "sgemm" ? Workload{} : build(model, gen);
  std::unique_ptr<nn::Adam<F>> opt;
  if (w.model) opt = std::make_unique<nn::Adam<F>>(w.model->parameters(), 1e-3);
  auto step = [&] {
    if (!w.model) throw UsageError("the sgemm worker has no model to step");
    opt->zero_grad();
    Tensor<F> loss = w.loss();
    loss.backward();
    opt->step();
  };
  // The raw GEMM the large model's FFN runs: (B L, d) x (d, d_ff) = (2048, 512) x (512, 2048).
  const std::size_t gm = 2048, gk = 512, gn = 2048;
  std::vector<F> ga, gb, gc;
  std::printf("ready %ld\n", maxrss_kb());
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line)) {
    std::istringstream in(line);
    std::string cmd;
    long k = 0;
    in >> cmd >> k;
    if (cmd == "run" || cmd == "sgemm") {
      if (cmd == "sgemm" && ga.empty()) {
        ga.assign(gm * gk, 0.5f);
        gb.assign(gk * gn, 0.25f);
        gc.assign(gm * gn, 0.0f);
      }
      std::string reply = "t";
      for (long i = 0; i < k; ++i) {
        const auto t0 = Clock::now();
        if (cmd == "run")
          step();
        else
          gemm<F>(false, false, gm, gn, gk, 1.0f, ga.data(), gk, gb.data(), gn, 0.0f, gc.data(), gn);
        reply += " " + std::to_string(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
      }
      std::printf("%s\n", reply.c_str());
    } else if (cmd == "flops") {
      const std::uint64_t before = flops_counted();
      step();
      std::printf("f %.0f\n", double(flops_counted() - before));
    } else if (cmd == "profile") {
      // K steps under the op profiler; the table goes to stderr (the pipe carries one line).
      if (!w.model) throw UsageError("the sgemm worker has no model to profile");
      OpProfiler prof;
      for (long i = 0; i < k; ++i) {
        opt->zero_grad();
        prof.mark("zero_grad");
        Tensor<F> loss = w.loss();
        prof.mark("forward glue");
        loss.backward();
        prof.mark("backward glue");
        opt->step();
        prof.mark("optimizer step");
      }
      std::fprintf(stderr, "%s: %ld steps\n%s", model.c_str(), k, prof.table().c_str());
      std::printf("ok\n");
    } else if (cmd == "quit") {
      std::printf("rss %ld\n", maxrss_kb());
      std::fflush(stdout);
      return 0;
    } else {
      std::printf("error unknown command %s\n", cmd.c_str());
    }
    std::fflush(stdout);
  }
  return 0;
}

// ---------------------------------------------------------------- driver

// A worker process with a pipe each way.
class Worker {
 public:
  // `unset`: environment variables removed for this worker only.
  Worker(std::string label, const std::vector<std::string>& argv, const std::vector<std::string>& unset = {})
      : label_(std::move(label)) {
    int to_child[2], from_child[2];
    if (pipe(to_child) != 0 || pipe(from_child) != 0) fail("bench_race", "pipe failed");
    pid_ = fork();
    if (pid_ < 0) fail("bench_race", "fork failed");
    if (pid_ == 0) {
      dup2(to_child[0], 0);
      dup2(from_child[1], 1);
      close(to_child[0]);
      close(to_child[1]);
      close(from_child[0]);
      close(from_child[1]);
      for (const auto& name : unset) unsetenv(name.c_str());
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      std::perror(args[0]);
      _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    in_ = fdopen(to_child[1], "w");
    out_ = fdopen(from_child[0], "r");
    const std::string ready = read();
    ok_ = ready.rfind("ready ", 0) == 0;
    if (ok_) base_kb_ = std::atol(ready.c_str() + 6);
  }
  ~Worker() {
    if (in_) std::fclose(in_);
    if (out_) std::fclose(out_);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);
  }
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  bool ok() const { return ok_; }
  const std::string& label() const { return label_; }
  // CPU time all of this worker's threads have run, in ms (/proc/PID/task/*/schedstat, whose
  // first number is a thread's time on a CPU in ns); 0 once it has exited.
  double cpu_ms() const {
    double ns = 0;
    std::error_code gone;  // the worker has exited (or failed): nothing to count
    for (std::filesystem::directory_iterator task("/proc/" + std::to_string(pid_) + "/task", gone), end;
         !gone && task != end; task.increment(gone)) {
      std::ifstream stat(task->path() / "schedstat");
      double run = 0;
      if (stat >> run) ns += run;
    }
    return ns / 1e6;
  }
  long base_kb() const { return base_kb_; }

  // Waits until this worker's threads have stopped running: a BLAS or OpenMP pool spins for a
  // while after its last job (PyTorch's two-thread worker ran on at 6 to 20 % of the machine
  // into the next contestant's turn), and the next contestant should start on an idle machine.
  // Done once its threads ran under 0.5 ms in a 10 ms window, or after 1 s whatever they do.
  // Returns the ms waited.
  double settle() const {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 100; ++i) {
      const double before = cpu_ms();
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      if (cpu_ms() - before < 0.5) break;
    }
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }

  // Send a command; return the numbers of its reply, which starts with `tag` (empty on a
  // broken worker, which is then marked failed).
  std::vector<double> ask(const std::string& cmd, const std::string& tag) {
    if (!ok_) return {};
    std::fprintf(in_, "%s\n", cmd.c_str());
    std::fflush(in_);
    const std::string reply = read();
    std::vector<double> t;
    if (reply != tag && reply.rfind(tag + " ", 0) != 0) {
      std::fprintf(stderr, "bench_race: %s answered '%s' to '%s'\n", label_.c_str(), reply.c_str(),
                   cmd.c_str());
      ok_ = false;
      return t;
    }
    std::istringstream in(reply.substr(tag.size()));
    for (double x; in >> x;) t.push_back(x);
    return t;
  }
  std::vector<double> times(const std::string& cmd) { return ask(cmd, "t"); }
  // Ask for the peak resident set and let the worker exit.
  long quit() {
    if (!ok_) return 0;
    std::fprintf(in_, "quit\n");
    std::fflush(in_);
    const std::string reply = read();
    return reply.rfind("rss ", 0) == 0 ? std::atol(reply.c_str() + 4) : 0;
  }

 private:
  std::string read() {
    char* buf = nullptr;
    std::size_t cap = 0;
    const ssize_t n = getline(&buf, &cap, out_);
    std::string s = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
    std::free(buf);
    while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
    return s;
  }
  std::string label_;
  pid_t pid_ = -1;
  FILE* in_ = nullptr;
  FILE* out_ = nullptr;
  bool ok_ = false;
  long base_kb_ = 0;
};

double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::vector<int> parse_ints(const std::string& s) {
  std::vector<int> v;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');) {
    v.push_back(static_cast<int>(integer_argument("thread count in '" + s + "'", x, 1, 256)));
  }
  return v;
}
std::vector<std::string> parse_list(const std::string& s) {
  std::vector<std::string> v;
  std::stringstream in(s);
  for (std::string x; std::getline(in, x, ',');) v.push_back(x);
  return v;
}

// Time the hypervisor gave this virtual machine's CPUs to someone else ("steal", the eighth
// number of /proc/stat's cpu line), summed over the intervals one contestant ran: on a shared
// two-core machine a second thread is only as good as the second core the host lends, and this
// says, for each verdict, whether the host took it. Zero where the kernel does not count steal.
struct StealClock {
  double steal_s = 0, wall_s = 0;
  static double steal_now() {
    std::ifstream stat("/proc/stat");
    std::string cpu;
    double field[8] = {};
    stat >> cpu;
    for (double& f : field) stat >> f;
    static const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    return stat ? field[7] / ticks : 0.0;
  }
  // Runs f and adds its wall time and the steal during it.
  template <class F>
  auto time(F&& f) {
    const double s0 = steal_now();
    const auto t0 = std::chrono::steady_clock::now();
    auto result = f();
    wall_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    steal_s += steal_now() - s0;
    return result;
  }
  // Steal as a share of the machine's CPU time over those intervals, in per cent.
  double percent() const { return wall_s > 0 ? 100.0 * steal_s / (wall_s * machine_threads()) : 0.0; }
};

struct Contestant {
  // "attnlab", "torch", or raw sgemm, the reference rate: "sgemm" on the environment's OpenBLAS
  // kernels, "sgemm-own" on those OpenBLAS picks for the CPU (OPENBLAS_CORETYPE unset).
  std::string side;
  int threads;
  std::unique_ptr<Worker> worker;
  std::vector<double> ms{};
  long peak_kb = 0;
  bool pruned = false;
  double step_flops = NAN;  // operations of one step's products (attnlab workers)
  int per_round = 1;        // steps a round
  StealClock steal{};       // the hypervisor's take of the machine while this one ran
  std::map<std::string, double> others_cpu_ms{};  // CPU time each other worker process ran meanwhile
  double own_cpu_ms = 0;    // CPU time its own threads ran while it stepped
  double settle_ms = 0;     // time waited after its turns for its threads to stop (Worker::settle)
  // CPUs it kept busy while it stepped: its CPU time over its wall time. A contestant's thread
  // count is what it was told; PyTorch's OpenBLAS keeps threads of its own (below).
  double cpus() const { return steal.wall_s > 0 ? own_cpu_ms / (1000.0 * steal.wall_s) : NAN; }
};

// The raw sgemm the "sgemm" workers time: the large model's FFN product.
constexpr double kSgemmFlops = 2.0 * 2048 * 512 * 2048;

bool is_sgemm(const Contestant& c) { return c.side == "sgemm" || c.side == "sgemm-own"; }

struct Row {
  std::string model;
  double attn_ms = NAN, torch_ms = NAN;
  int attn_threads = 0, torch_threads = 0;
  double attn_cpus = NAN, torch_cpus = NAN;  // CPUs the faster contestant of each side kept busy
  double attn_mb = NAN, torch_mb = NAN, attn_step_mb = NAN, torch_step_mb = NAN;
  double target = 0;
  std::map<int, double> attn_by_threads, torch_by_threads;  // median ms at each thread count
  double step_flops = NAN;     // operations of the step's products, as attnlab counts them
};

// Step time at 1 thread over step time at 2, or NaN when either is missing.
double speedup(const std::map<int, double>& by_threads) {
  const auto one = by_threads.find(1), two = by_threads.find(2);
  return one == by_threads.end() || two == by_threads.end() ? NAN : one->second / two->second;
}

// The machine's raw sgemm rate at each thread count, GFLOP/s: the faster kernels' median over
// every sample of the run so far (one row's nine two-thread samples swing with the second core).
std::map<int, double> machine_rates(const std::map<std::pair<std::string, int>, std::vector<double>>& sgemm_ms) {
  std::map<int, double> gflops;
  for (const auto& [key, ms] : sgemm_ms)
    gflops[key.second] = std::max(gflops[key.second], kSgemmFlops / (median(ms) * 1e6));
  return gflops;
}

double ratio(const Row& r) { return r.attn_ms / r.torch_ms; }

// attnlab's FLOP utilization: its rate on the step's counted products over the machine's sgemm
// rate at attnlab's thread count.
double utilization(const Row& r, const std::map<int, double>& sgemm_gflops) {
  const auto at = sgemm_gflops.find(r.attn_threads);
  return at == sgemm_gflops.end() ? NAN : r.step_flops / (r.attn_ms * 1e6) / at->second;
}

// One race's tables: times, ratios and memory; then the FLOP utilization.
void print_race(const std::vector<Row>& rows, const std::map<int, double>& sgemm_gflops) {
  std::printf("\n%-12s %24s %24s %7s %7s %12s %12s %s\n", "model", "attnlab ms", "PyTorch ms", "ratio",
              "target", "attnlab MB", "PyTorch MB", "1->2 threads: attnlab, PyTorch");
  for (const Row& r : rows) {
    char a[48], t[48];
    std::snprintf(a, sizeof a, "%.2f (%dt, %.1f CPUs)", r.attn_ms, r.attn_threads, r.attn_cpus);
    std::snprintf(t, sizeof t, "%.2f (%dt, %.1f CPUs)", r.torch_ms, r.torch_threads, r.torch_cpus);
    // The verdicts: the step time against the target, and the memory the step adds against PyTorch's.
    const std::string verdict = std::isnan(ratio(r)) ? ""
                                : std::string(ratio(r) <= r.target ? "met" : "MISSED") +
                                      (r.attn_step_mb < r.torch_step_mb ? ", memory below" : ", memory NOT below");
    std::printf("%-12s %24s %24s %7.2f %7.2f %6.0f+%-5.0f %6.0f+%-5.0f %4.2fx, %4.2fx %s\n", r.model.c_str(), a,
                t, ratio(r), r.target, r.attn_mb - r.attn_step_mb, r.attn_step_mb,
                r.torch_mb - r.torch_step_mb, r.torch_step_mb, speedup(r.attn_by_threads),
                speedup(r.torch_by_threads), verdict.c_str());
  }
  std::printf("(MB: resident set once built + what the training step added on top, per process; CPUs: the\n"
              " CPU time the contestant's threads ran over its wall time)\n");

  std::printf("\n%-12s %10s %12s %12s %12s %10s\n", "model", "GFLOP/step", "attnlab GF/s", "PyTorch GF/s",
              "sgemm GF/s", "attnlab MFU");
  for (const Row& r : rows) {
    const double attn_rate = r.step_flops / (r.attn_ms * 1e6), torch_rate = r.step_flops / (r.torch_ms * 1e6);
    char sgemm[32];
    const auto machine = sgemm_gflops.find(r.attn_threads);
    std::snprintf(sgemm, sizeof sgemm, "%.1f (%dt)", machine == sgemm_gflops.end() ? NAN : machine->second,
                  r.attn_threads);
    std::printf("%-12s %10.3f %12.1f %12.1f %12s %9.1f%%\n", r.model.c_str(), r.step_flops * 1e-9, attn_rate,
                torch_rate, sgemm, 100 * utilization(r, sgemm_gflops));
  }
  std::printf("(GFLOP: the operations of the step's matrix products as attnlab runs them, 2 m n k each, "
              "counted; MFU: attnlab's rate over the machine's sgemm at its thread count, the median of the run's samples so far)\n");
}

// Several races: each row's ratio and attnlab's 1 -> 2 thread speed-up, median and range over
// the races, and in how many the target was met and two threads were at least as fast as one.
void print_repeats(const std::vector<std::vector<Row>>& races) {
  std::printf("\n=== %zu races: median [min, max] over the races\n", races.size());
  std::printf("%-12s %26s %7s %9s %28s %16s\n", "model", "ratio", "target", "met in", "attnlab 1->2 threads",
              "2t >= 1t in");
  for (std::size_t m = 0; m < races.front().size(); ++m) {
    std::vector<double> ratios, speedups;
    int met = 0, not_slower = 0;
    for (const auto& rows : races) {
      const Row& r = rows[m];
      ratios.push_back(ratio(r));
      speedups.push_back(speedup(r.attn_by_threads));
      met += ratio(r) <= r.target;
      not_slower += speedup(r.attn_by_threads) >= 1.0;
    }
    const auto [rlo, rhi] = std::minmax_element(ratios.begin(), ratios.end());
    const auto [slo, shi] = std::minmax_element(speedups.begin(), speedups.end());
    char rs[48], ss[48];
    std::snprintf(rs, sizeof rs, "%.2f [%.2f, %.2f]", median(ratios), *rlo, *rhi);
    std::snprintf(ss, sizeof ss, "%.2fx [%.2fx, %.2fx]", median(speedups), *slo, *shi);
    std::printf("%-12s %26s %7.2f %4d of %zu %28s %9d of %zu\n", races.front()[m].model.c_str(), rs,
                races.front()[m].target, met, races.size(), ss, not_slower, races.size());
  }
}

// The shared library behind the system's libblas.so.3 (Debian's alternatives), which PyTorch's
// products call: "libopenblas.so.0 (openblas-pthread)", or the link's own name where it cannot tell.
std::string blas_library() {
  char target[4096];
  const char* link = "/usr/lib/x86_64-linux-gnu/libblas.so.3";
  const char* resolved = realpath(link, target);
  return resolved ? std::string(resolved) : std::string(link);
}

int run_driver(const std::vector<std::string>& args) {
  int rounds = 9, warmup = 2, repeat = 1;
  const std::vector<std::string> known{"bahdanau", "transformer", "vit", "vit11", "gpt", "large"};
  std::vector<std::string> models = known;
  std::vector<int> attn_threads{1, 2}, torch_threads{1, 2};
  bool torch = true;
  std::string script = std::string(ATTNLAB_SOURCE_DIR) + "/bench/race_torch.py";
  for (std::size_t i = 0; i < args.size(); ++i) {  // a bad command line: UsageError, exit 2
    const std::string& a = args[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= args.size()) throw UsageError(a + " needs a value");
      return args[++i];
    };
    if (a == "--rounds") rounds = static_cast<int>(integer_argument(a, next(), 1, 1000));
    else if (a == "--warmup") warmup = static_cast<int>(integer_argument(a, next(), 0, 1000));
    else if (a == "--repeat") repeat = static_cast<int>(integer_argument(a, next(), 1, 100));
    else if (a == "--models") {
      models = parse_list(next());
      for (const auto& m : models)
        if (std::find(known.begin(), known.end(), m) == known.end())
          throw UsageError("unknown model '" + m + "' (bahdanau, transformer, vit, vit11, gpt, large)");
    }
    else if (a == "--attn-threads") attn_threads = parse_ints(next());
    else if (a == "--torch-threads") torch_threads = parse_ints(next());
    else if (a == "--torch-script") script = next();
    else if (a == "--no-torch") torch = false;
    else throw UsageError("unknown option " + a);
  }
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) fail("bench_race", "cannot find its own executable");
  self[n] = 0;

  std::printf("bench_race: one training step (forward, backward, Adam), float32, median of %d "
              "rounds after %d warm-up steps; contestants interleaved round-robin\n",
              rounds, warmup);
  // Both sides multiply with OpenBLAS, on the kernels the environment chooses (the same for
  // both). Where OPENBLAS_CORETYPE is set, the machine's sgemm rate is also timed without it, on
  // the kernels OpenBLAS picks for this CPU itself: utilization is quoted against the faster.
  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  std::printf("machine: %s\n", machine_name().c_str());
  std::printf("OpenBLAS kernels: %s (%s), for both sides\n", openblas_core_name().c_str(),
              coretype ? "OPENBLAS_CORETYPE in the environment" : "OpenBLAS's own choice for this CPU");
  std::printf("attnlab: OpenBLAS on one thread per part of a large product, libxsmm's generated kernels "
              "(%s) for small products and attention blocks; PyTorch 1.13: the system's libblas (%s) and oneDNN\n",
              cpu_has_avx512() ? "AVX-512" : "AVX2", blas_library().c_str());
  // PyTorch's thread count is torch.set_num_threads(N): its own pool. The OpenBLAS it calls keeps
  // a pool of its own, sized by OPENBLAS_NUM_THREADS or else the machine's CPUs, so its one-thread
  // contestant multiplies on every CPU (on a two-CPU Zen 3, 1.94 CPUs busy against 0.99 with
  // OPENBLAS_NUM_THREADS=1, and its GPT step 498 ms against 601). That is PyTorch as installed, and its
  // fastest setting here, so it stays the reference; the CPUs each contestant used are printed.
  std::printf("PyTorch's threads: torch.set_num_threads(N); the OpenBLAS it calls runs %s\n",
              std::getenv("OPENBLAS_NUM_THREADS") ? "OPENBLAS_NUM_THREADS threads"
                                                  : "a thread per CPU of its own (OPENBLAS_NUM_THREADS unset)");
  std::vector<std::vector<Row>> races;
  // Raw sgemm times of every row, by (side, threads): one machine rate per thread count, from the
  // median over the whole run (one row's nine samples at two threads swing with the second core).
  std::map<std::pair<std::string, int>, std::vector<double>> sgemm_ms;
  for (int race = 0; race < repeat; ++race) {
  if (repeat > 1) std::printf("\n=== race %d of %d\n", race + 1, repeat);
  std::vector<Row> rows;
  for (const std::string& model : models) {
    std::vector<Contestant> cs;
    for (int t : attn_threads)
      cs.push_back({"attnlab", t,
                    std::make_unique<Worker>("attnlab/" + std::to_string(t),
                                             std::vector<std::string>{self, "--worker", model,
                                                                      "--threads", std::to_string(t)})});
    if (torch)
      for (int t : torch_threads)
        cs.push_back({"torch", t,
                      std::make_unique<Worker>(
                          "torch/" + std::to_string(t),
                          std::vector<std::string>{"/usr/bin/python3", script, "--model", model,
                                                   "--threads", std::to_string(t)})});
    for (int t : attn_threads)
      for (bool own : {false, true}) {
        if (own && !coretype) continue;
        cs.push_back({own ? "sgemm-own" : "sgemm", t,
                      std::make_unique<Worker>((own ? "sgemm-own/" : "sgemm/") + std::to_string(t),
                                               std::vector<std::string>{self, "--worker", "sgemm", "--threads",
                                                                        std::to_string(t)},
                                               own ? std::vector<std::string>{"OPENBLAS_CORETYPE"}
                                                   : std::vector<std::string>{})});
      }
    // Steps per round: about 100 ms of steps a round (at least 3, the large encoder's one), so
    // that a small model's median rests on as many steps as a large one's rests on seconds: the
    // Bahdanau row took 27 steps of 8 ms, and its 1 -> 2 thread verdict flipped between races.
    for (auto& c : cs) {
      if (is_sgemm(c)) continue;
      const std::vector<double> w = c.worker->times("run " + std::to_string(warmup));
      const double step = w.size() > 1 ? median(std::vector<double>(w.begin() + 1, w.end())) : 100.0;
      c.per_round = model == "large" ? 1 : std::clamp(static_cast<int>(100.0 / step), 3, 30);
      if (c.side == "attnlab") {
        const std::vector<double> f = c.worker->ask("flops", "f");
        if (!f.empty()) c.step_flops = f[0];
      }
      c.worker->settle();
    }
    for (int r = 0; r < rounds; ++r)
      for (auto& c : cs) {
        // After two rounds, a contestant more than twice as slow as the best of its own side
        // (typically 2 threads on a busy machine) sits out: it cannot be that side's best.
        if (is_sgemm(c)) {
          for (double t : c.worker->times("sgemm 1")) c.ms.push_back(t);
          continue;
        }
        if (r >= 2) {
          double best = INFINITY;
          for (auto& o : cs)
            if (o.side == c.side && !o.ms.empty()) best = std::min(best, median(o.ms));
          if (median(c.ms) > 2.0 * best) {
            c.pruned = true;
            continue;
          }
        }
        std::vector<double> before;
        for (const auto& o : cs) before.push_back(o.worker->cpu_ms());
        for (double t : c.steal.time([&] { return c.worker->times("run " + std::to_string(c.per_round)); }))
          c.ms.push_back(t);
        for (std::size_t i = 0; i < cs.size(); ++i) {
          const double ran = cs[i].worker->cpu_ms() - before[i];
          if (&cs[i] == &c)
            c.own_cpu_ms += ran;
          else
            c.others_cpu_ms[cs[i].worker->label()] += ran;
        }
        c.settle_ms += c.worker->settle();
      }
    Row row;
    row.model = model;
    row.target = model == "large" ? 0.60 : 0.50;  // issue 41: the large encoder at 0.60 of PyTorch (was 0.80)
    std::printf("\n%s\n", model.c_str());
    for (auto& c : cs) {
      c.peak_kb = c.worker->quit();
      if (is_sgemm(c)) {
        if (c.ms.empty()) continue;
        const double rate = kSgemmFlops / (median(c.ms) * 1e6);
        auto& pooled = sgemm_ms[{c.side, c.threads}];
        pooled.insert(pooled.end(), c.ms.begin(), c.ms.end());
        std::printf("  raw sgemm (2048x512)x(512x2048), %d thread%s, %s: %.1f GFLOP/s\n", c.threads,
                    c.threads == 1 ? "" : "s",
                    c.side == "sgemm" ? "the environment's kernels" : "OpenBLAS's own kernels for this CPU", rate);
        continue;
      }
      const double med = median(c.ms);
      const double mb = c.peak_kb / 1024.0, step_mb = (c.peak_kb - c.worker->base_kb()) / 1024.0;
      // The other workers' CPU time while this one ran, as a share of the machine, and the busiest.
      double others = 0, busiest = 0;
      std::string busiest_label = "-";
      for (const auto& [label, ms] : c.others_cpu_ms) {
        others += ms;
        if (ms > busiest) busiest = ms, busiest_label = label;
      }
      const double share = c.steal.wall_s > 0 ? 0.1 / (c.steal.wall_s * machine_threads()) : 0.0;
      std::printf("  %-8s %d thread%s  median %9.2f ms  (best %9.2f, %zu steps, uses %4.2f CPUs, steal %4.1f %%, "
                  "others %4.1f %%, most %s, idle %3.0f ms after a turn)  peak %7.1f MB (step adds %6.1f)%s\n",
                  c.side.c_str(), c.threads, c.threads == 1 ? " " : "s", med,
                  c.ms.empty() ? NAN : *std::min_element(c.ms.begin(), c.ms.end()), c.ms.size(), c.cpus(),
                  c.steal.percent(), others * share, busiest_label.c_str(),
                  c.ms.empty() ? 0.0 : c.settle_ms * c.per_round / c.ms.size(), mb, step_mb,
                  !c.worker->ok() ? "  [worker failed]" : c.pruned ? "  [> 2x its side's best: dropped after 2 rounds]" : "");
      if (c.ms.empty()) continue;
      (c.side == "attnlab" ? row.attn_by_threads : row.torch_by_threads)[c.threads] = med;
      double& best = c.side == "attnlab" ? row.attn_ms : row.torch_ms;
      if (std::isnan(best) || med < best) {
        best = med;
        (c.side == "attnlab" ? row.attn_threads : row.torch_threads) = c.threads;
        (c.side == "attnlab" ? row.attn_cpus : row.torch_cpus) = c.cpus();
        (c.side == "attnlab" ? row.attn_mb : row.torch_mb) = mb;
        (c.side == "attnlab" ? row.attn_step_mb : row.torch_step_mb) = step_mb;
        if (c.side == "attnlab") row.step_flops = c.step_flops;
      }
    }
    rows.push_back(row);
  }
  print_race(rows, machine_rates(sgemm_ms));
  races.push_back(rows);
  }
  if (repeat > 1) print_repeats(races);
  return 0;
}


constexpr const char* kUsage =
    "usage: bench_race [--rounds R] [--warmup W] [--repeat N] [--models bahdanau,transformer,vit,vit11,gpt,large] "
    "[--attn-threads 1,2] [--torch-threads 1,2] [--torch-script PATH] [--no-torch] [--help] [--version]\n"
    "  One training step of each model, attnlab against PyTorch (bench/race_torch.py, run with\n"
    "  /usr/bin/python3) in interleaved worker processes: medians, ratios, peak memory, FLOP utilization.\n"
    "  --repeat N runs the whole race N times and reports each ratio's median and range over the races.\n";

// bench_race --worker MODEL [--threads N] is the attnlab contestant, driven over a pipe.
int run(const std::vector<std::string>& args) {
  if (!args.empty() && args[0] == "--worker") {
    if (args.size() < 2) throw UsageError("--worker needs a model name");
    int threads = 1;
    if (args.size() >= 4 && args[2] == "--threads") threads = static_cast<int>(integer_argument("--threads", args[3], 1, 256));
    return run_worker(args[1], threads);
  }
  return run_driver(args);
}

}  // namespace

int main(int argc, char** argv) { return run_program("bench_race", kUsage, argc, argv, run); }
