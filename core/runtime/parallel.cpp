#include "core/runtime/parallel.hpp"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include <sched.h>

#include "core/error.hpp"
#include "core/runtime/region_rule.hpp"

namespace attnlab {

namespace {

thread_local bool t_in_chunk = false;  // nested parallel_for runs inline

// How long a thread that waits for the pool (a worker for the next job, the caller for the last
// chunk) polls before it sleeps on a condition variable. A training step calls the pool hundreds
// of times with microseconds between calls, and waking a sleeping thread on a virtual machine
// goes through the hypervisor. Measured in bench_race's Transformer row at 2 threads, where the
// other contestants run between rounds: median step 17.7 ms (best 13.7) with threads that slept at
// once, 13.2 and 14.1 ms in two runs with the poll. The bound keeps an idle pool from holding a
// shared machine's core for more than a fraction of a millisecond.
constexpr auto kPollBeforeSleep = std::chrono::microseconds(200);

// Returns once `ready` holds or kPollBeforeSleep has passed, whichever comes first.
template <class Ready>
void poll(const Ready& ready) {
  const auto until = std::chrono::steady_clock::now() + kPollBeforeSleep;
  for (int i = 0;; ++i) {
    if (ready()) return;
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > until) return;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
}

// A call publishes a job under the lock (chunk count, body, a new generation). Each worker that
// wakes for it registers as active and copies the job under the lock, takes chunk indices from
// `next` until none are left, and reports under the lock. The caller takes chunks too, then
// waits until every chunk is finished and no worker is still inside the job, so a late worker
// can never see the next call's job half-written.
class Pool {
 public:
  explicit Pool(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : threads_) t.join();
  }

  // Whether a worker has stopped polling and sleeps: a job handed over now pays its wake-up.
  bool asleep() const { return asleep_.load() > 0; }

  void run(std::size_t chunks, const std::function<void(std::size_t)>& chunk) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &chunk;
      chunks_ = chunks;
      next_ = 0;
      finished_ = 0;
      error_ = nullptr;
      error_chunk_ = chunks;
      generation_.fetch_add(1);
    }
    wake_.notify_all();
    take_chunks(chunk, chunks);
    poll([&] { return finished_.load() == chunks && active_.load() == 0; });
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return finished_ == chunks_ && active_ == 0; });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  // Runs chunks until none are left; reports how many, and the lowest-numbered chunk's error.
  void take_chunks(const std::function<void(std::size_t)>& job, std::size_t chunks) {
    std::size_t done = 0, error_chunk = chunks;
    std::exception_ptr error;
    t_in_chunk = true;
    for (std::size_t c; (c = next_.fetch_add(1)) < chunks; ++done) {
      try {
        job(c);
      } catch (...) {
        if (c < error_chunk) error = std::current_exception(), error_chunk = c;
      }
    }
    t_in_chunk = false;
    std::lock_guard<std::mutex> lock(mu_);
    if (error && error_chunk < error_chunk_) error_ = error, error_chunk_ = error_chunk;
    finished_ += done;
  }

  void work() {
    std::uint64_t seen = 0;
    for (;;) {
      const std::function<void(std::size_t)>* job;
      std::size_t chunks;
      poll([&] { return stop_.load() || generation_.load() != seen; });
      {
        std::unique_lock<std::mutex> lock(mu_);
        ++asleep_;
        wake_.wait(lock, [&] { return stop_ || (generation_ != seen && job_ != nullptr); });
        --asleep_;
        if (stop_) return;
        seen = generation_;
        job = job_;
        chunks = chunks_;
        ++active_;
      }
      take_chunks(*job, chunks);
      {
        std::lock_guard<std::mutex> lock(mu_);
        --active_;
      }
      done_.notify_all();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  // Written under mu_; atomic so that a polling thread may read them without it.
  std::atomic<std::size_t> finished_{0}, active_{0}, next_{0}, asleep_{0};
  std::atomic<std::uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::size_t chunks_ = 0, error_chunk_ = 0;
  std::exception_ptr error_;
};

std::atomic<int> g_threads{1};
std::unique_ptr<Pool> g_pool;
std::mutex g_pool_mu;  // guards g_pool and what follows; held by the caller for the whole of a parallel call

// Which regions go to the pool (core/runtime/region_rule.hpp), and what each shape has cost.
// The default is the pool, every region: on a quiet machine it beat the measured rule by 3 to 7 %
// on bench_race's lesson rows at 2 threads (Transformer 5.49 and 5.67 ms a step against 5.86 and
// 5.85; the GPT 78.6 and 82.3 against 83.1 and 84.7; the Bahdanau model 7.86 and 8.20 against 8.40
// and 9.09): a region's pool time depends on whether the pool ran anything in the last 200 us,
// so regions judged one by one cost more than they save. The rule wins where a second core is
// busy (bench_core section f: it tracks the inline time within 2 to 5 % while the pool loses 10
// to 30x). ATTNLAB_REGION_POLICY=adaptive (or caller) in the environment chooses for a program.
RegionPolicy policy_from_environment() {
  const char* v = std::getenv("ATTNLAB_REGION_POLICY");
  if (!v || std::string(v) == "pool" || std::string(v).empty()) return RegionPolicy::pool;
  if (std::string(v) == "adaptive") return RegionPolicy::adaptive;
  if (std::string(v) == "caller") return RegionPolicy::caller;
  fail("ATTNLAB_REGION_POLICY", "must be adaptive, pool or caller, got '", v, "'");
}
// Read on first use, so that a bad value is an error at the first parallel region (an exception
// naming the variable), not a crash before main.
RegionPolicy& policy() {
  static RegionPolicy p = policy_from_environment();
  return p;
}
std::unordered_map<std::uint64_t, RegionCost> g_costs;  // by call site, n, grain and work
RegionCounts g_counts;

// OpenBLAS runs on one thread, from the start and whatever set_threads says: large products are
// cut into parts on this pool instead (core/runtime/blas.cpp). OpenBLAS's own threads spin after
// each threaded call, waiting for the next one (OPENBLAS_THREAD_TIMEOUT, about 0.1 s by default),
// and on a two-core machine they took the core that this pool's kernels needed right after.
// Measured with bench_race's large encoder at 2 threads: 632 and 657 ms a step with OpenBLAS
// threading its products, 573 and 578 ms with OPENBLAS_THREAD_TIMEOUT=4 (spinning cut short).
const bool g_blas_on_one_thread = [] {
  openblas_set_num_threads(1);
  return true;
}();

}  // namespace

void set_threads(int n) {
  check(!t_in_chunk, "set_threads", "called from inside a parallel_for chunk");
  check(n >= 1, "set_threads", "needs at least 1 thread, got ", n);
  std::lock_guard<std::mutex> lock(g_pool_mu);
  if (n == g_threads) return;
  g_pool.reset();
  g_costs.clear();  // what a region cost says nothing about another thread count
  g_threads = n;
  if (n > 1) g_pool = std::make_unique<Pool>(n - 1);
}

int threads() { return g_threads; }

int machine_threads() {
  static const int n = [] {
    cpu_set_t cpus;
    return std::clamp(sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? CPU_COUNT(&cpus) : 1, 1, 8);
  }();
  return n;
}

void set_region_policy(RegionPolicy policy) {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  attnlab::policy() = policy;
  g_costs.clear();
}

RegionPolicy region_policy() {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  return policy();
}

RegionCounts region_counts(bool reset) {
  std::lock_guard<std::mutex> lock(g_pool_mu);
  const RegionCounts counts = g_counts;
  if (reset) g_counts = {};
  return counts;
}

void parallel_for(std::size_t n, std::size_t grain, const std::function<void(std::size_t, std::size_t)>& body,
                  std::size_t work) {
  if (n == 0) return;
  if (t_in_chunk) {  // nested: this thread is already one of the workers
    body(0, n);
    return;
  }
  grain = std::max<std::size_t>(grain, 1);
  if (g_threads == 1 || n < 2 * grain) {  // one chunk: no lock, no pool
    body(0, n);
    return;
  }
  std::unique_lock<std::mutex> lock(g_pool_mu);
  // As many chunks as hold `grain` items each, at most one per thread.
  const std::size_t chunks = std::min<std::size_t>(static_cast<std::size_t>(g_threads), n / grain);
  if (chunks <= 1 || !g_pool) {
    lock.unlock();
    body(0, n);
    return;
  }
  // Chunk c covers [c n / chunks, (c + 1) n / chunks): fixed by n and chunks alone.
  const std::function<void(std::size_t)> chunk = [&](std::size_t c) {
    body(c * n / chunks, (c + 1) * n / chunks);
  };
  if (policy() == RegionPolicy::pool) {  // the default: no measuring, no bookkeeping beyond a count
    ++g_counts.pool;
    g_pool->run(chunks, chunk);
    return;
  }
  if (g_costs.size() > 4096) g_costs.clear();  // a program of ever-new shapes: start over
  std::uint64_t shape = body.target_type().hash_code();  // the call site: its lambda's type
  for (std::uint64_t part : {std::uint64_t(n), std::uint64_t(grain), std::uint64_t(work)})
    shape = (shape ^ part) * 0x100000001B3ull;
  RegionCost& cost = g_costs[shape];
  const bool pool = policy() == RegionPolicy::adaptive && region_to_pool(cost);
  // A worker asleep when the region starts costs it a wake-up (10 us to 200 us here) that says
  // nothing about the region: the rule keeps only times taken with the pool awake. Otherwise
  // regions left on the caller let the pool fall asleep, and the pool's next times, wake-ups
  // included, would steer ever more regions off it (measured in bench_race: the Transformer's
  // step at 2 threads went from 5.4 ms to over 9.5).
  const bool awake = !pool || !g_pool->asleep();
  const auto start = std::chrono::steady_clock::now();
  if (pool) {
    g_pool->run(chunks, chunk);
  } else {  // the same chunks in order on the caller, nested calls inline as on the pool
    t_in_chunk = true;
    try {
      for (std::size_t c = 0; c < chunks; ++c) chunk(c);
    } catch (...) {
      t_in_chunk = false;
      throw;
    }
    t_in_chunk = false;
  }
  const float us = std::chrono::duration<float, std::micro>(std::chrono::steady_clock::now() - start).count();
  if (awake) record_region(cost, pool, us);
  ++(pool ? g_counts.pool : g_counts.caller);
}

}  // namespace attnlab
