#include "lessons/kit/timing.hpp"

#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>

#include <sys/resource.h>

#include "core/random.hpp"
#include "core/runtime/allocator.hpp"
#include "core/runtime/parallel.hpp"
#include "lessons/story/clock.hpp"
#include "nn/optim.hpp"
#include "lessons/story/stats.hpp"
#include "lessons/story/text.hpp"

namespace attnlab::lessons {

std::vector<Timing> interleaved_medians(const std::vector<std::function<void()>>& work, int rounds) {
  return interleaved_medians(work, rounds, std::vector<std::function<void()>>(work.size()));
}

std::vector<Timing> interleaved_medians(const std::vector<std::function<void()>>& work, int rounds,
                                        const std::vector<std::function<void()>>& before) {
  if (before.size() != work.size())
    throw std::invalid_argument(text("interleaved_medians: ", before.size(), " pieces to run before ", work.size(),
                                     " pieces of work"));
  const int threads_before = threads();
  set_threads(1);
  struct Restore {
    int n;
    ~Restore() { set_threads(n); }
  } restore{threads_before};
  std::vector<std::vector<double>> wall(work.size()), cpu(work.size());
  for (int r = 0; r <= rounds; ++r)
    for (std::size_t i = 0; i < work.size(); ++i) {
      if (before[i]) before[i]();
      const double w0 = wall_ms(), c0 = cpu_ms();
      work[i]();
      if (r > 0) wall[i].push_back(wall_ms() - w0), cpu[i].push_back(cpu_ms() - c0);
    }
  std::vector<Timing> out;
  for (std::size_t i = 0; i < work.size(); ++i) out.push_back({median(wall[i]), median(cpu[i])});
  return out;
}

std::vector<Timing> training_step_medians(const std::vector<nn::Module<float>*>& models,
                                          const std::function<Tensor<float>(std::size_t i)>& loss, int rounds) {
  if (models.empty()) throw std::invalid_argument("training_step_medians: no models to time");
  if (rounds < 1) throw std::invalid_argument("training_step_medians: rounds must be at least 1, got " + std::to_string(rounds));
  std::vector<std::unique_ptr<nn::Adam<float>>> optimizers;
  std::vector<std::function<void()>> work;
  for (std::size_t i = 0; i < models.size(); ++i) {
    optimizers.push_back(std::make_unique<nn::Adam<float>>(models[i]->parameters(), 1e-3));
    work.push_back([&opt = *optimizers.back(), &loss, i] { opt.zero_grad(), loss(i).backward(), opt.step(); });
  }
  return interleaved_medians(work, rounds);
}

double CostCurve::at(const std::vector<double>& of, double size) const {
  for (std::size_t i = 0; i < n.size() && i < of.size(); ++i)
    if (n[i] == size) return of[i];
  return std::nan("");
}

bool CostCurve::ran_at(double size) const { return !std::isnan(at(n, size)); }

double CostCurve::last_slope(const std::vector<double>& of, std::size_t points) const {
  if (points < 2 || of.size() != n.size() || n.size() < points)
    throw std::invalid_argument(text("CostCurve::last_slope: '", name, "' has ", n.size(), " sizes and ", of.size(),
                                     " values, a slope over the last ", points, " needs at least that many of both"));
  return log_log_slope(std::vector<double>(n.end() - long(points), n.end()),
                       std::vector<double>(of.end() - long(points), of.end()));
}

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

// The minor page faults (pages the kernel had to map in) while `work` runs.
double page_faults_of(const std::function<void()>& work) {
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  work();
  getrusage(RUSAGE_SELF, &after);
  return double(after.ru_minflt - before.ru_minflt);
}

}  // namespace

std::vector<CostCurve> costs_against_n(const std::vector<CostedOp>& ops, const std::vector<std::size_t>& sizes,
                                       const CostOptions& options) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("costs_against_n: " + what); };
  if (ops.empty()) fail("no ops to measure");
  if (sizes.empty()) fail("no sizes to measure at");
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] == 0 || (i > 0 && sizes[i] <= sizes[i - 1]))
      fail(text("sizes must be positive and increasing, got ", sizes[i], " at position ", i));
  for (const CostedOp& op : ops)
    if (!op.at) fail("op '" + op.name + "' has no work");
  std::vector<CostCurve> curves;
  for (const CostedOp& op : ops) curves.push_back({op.name, {}, {}, {}, {}, {}});
  std::vector<bool> stopped(ops.size(), false);
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    const std::size_t n = sizes[s];
    const int rounds = options.rounds ? options.rounds(n) : 3;
    if (rounds < 1) fail(text("rounds must be at least 1, got ", rounds, " at n = ", n));
    std::vector<std::size_t> which;
    std::vector<SizedWork> ready;
    for (std::size_t i = 0; i < ops.size(); ++i)
      if (!stopped[i]) which.push_back(i), ready.push_back(ops[i].at(n));
    std::vector<double> peak(which.size(), 0.0), faults(which.size(), 0.0);
    std::vector<std::function<void()>> work, resets;
    for (std::size_t w = 0; w < which.size(); ++w) {
      resets.push_back(ready[w].reset);  // outside the time, as SizedWork promises
      work.push_back([&, w, first = true]() mutable {
        if (first) peak[w] = double(peak_bytes_at_one_thread(ready[w].run)), first = false;  // the warm-up round
        else faults[w] = page_faults_of(ready[w].run);
      });
    }
    const std::vector<Timing> t = interleaved_medians(work, rounds, resets);
    const double grow = s + 1 < sizes.size() ? double(sizes[s + 1]) / double(n) : 1.0;
    for (std::size_t w = 0; w < which.size(); ++w) {
      CostCurve& c = curves[which[w]];
      c.n.push_back(double(n));
      c.wall_ms.push_back(t[w].wall_ms);
      c.cpu_ms.push_back(t[w].cpu_ms);
      c.peak_mib.push_back(peak[w] / kMiB);
      c.page_faults.push_back(faults[w]);
      if (peak[w] * grow * grow > options.budget_bytes) stopped[which[w]] = true;
    }
  }
  return curves;
}

CostTable cost_table(const std::vector<CostCurve>& curves, std::size_t reference, double n, double last) {
  if (reference >= curves.size())
    throw std::invalid_argument(text("cost_table: reference ", reference, " is not one of the ", curves.size(), " curves"));
  const CostCurve& r = curves[reference];
  const std::string at = rounded(n), of = r.name.substr(0, r.name.find(' '));  // "fused (lesson 06)" -> "fused"
  CostTable t{{"attention", "CPU ms at $n = " + at + "$", "peak MiB at " + at, "CPU time: " + of + " / op",
               "memory: " + of + " / op"}, {}};
  if (last > n) t.header.push_back("peak MiB at " + rounded(last));
  for (const CostCurve& k : curves) {
    t.rows.push_back(row(k.name, fixed(k.at(k.cpu_ms, n), 2), fixed(k.at(k.peak_mib, n), 2),
                         fixed(r.at(r.cpu_ms, n) / k.at(k.cpu_ms, n), 1), fixed(r.at(r.peak_mib, n) / k.at(k.peak_mib, n), 1)));
    if (last > n) t.rows.back().push_back(k.ran_at(last) ? fixed(k.at(k.peak_mib, last), 1) : "over budget");
  }
  return t;
}

CostedOp attention_cost(const std::string& name, std::function<AttentionFn(std::size_t n)> make, std::size_t d) {
  if (!make || d == 0) throw std::invalid_argument("attention_cost: '" + name + "' needs an attention and d > 0");
  return {name, [make, d](std::size_t n) {
            struct Inputs {
              Tensor<float> q, k, v;
              Array<float> up;
            };
            Generator gen(1000 + n);
            auto in = std::make_shared<Inputs>();
            in->q = Tensor<float>(random_normal<float>({1, n, d}, gen), true);
            in->k = Tensor<float>(random_normal<float>({1, n, d}, gen), true);
            in->v = Tensor<float>(random_normal<float>({1, n, d}, gen), true);
            in->up = random_normal<float>({1, n, d}, gen);
            const AttentionFn attend = make(n);
            return SizedWork{[in] {
                               for (const Tensor<float>* x : {&in->q, &in->k, &in->v}) x->zero_grad();
                             },
                             [in, attend] { attend(in->q, in->k, in->v).backward(in->up); }};
          }};
}

CostedOp attention_cost(const std::string& name, AttentionFn attend, std::size_t d) {
  if (!attend) throw std::invalid_argument("attention_cost: '" + name + "' needs an attention");
  return attention_cost(name, [attend](std::size_t) { return attend; }, d);
}

}  // namespace attnlab::lessons
