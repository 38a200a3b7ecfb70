#include "core/parallel.hpp"

#include <cblas.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace attnlab {

namespace {

thread_local bool t_in_chunk = false;  // nested parallel_for runs inline

// Workers wait for a new generation, take chunk indices from `next` until none are left, and
// report each finished chunk; the caller takes chunks too and waits for all of them.
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

  void run(std::size_t chunks, const std::function<void(std::size_t)>& chunk) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      job_ = &chunk;
      chunks_ = chunks;
      next_ = 0;
      finished_ = 0;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    take_chunks();
    std::unique_lock<std::mutex> lock(mu_);
    done_.wait(lock, [&] { return finished_ == chunks_; });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void take_chunks() {
    std::size_t done = 0;
    std::exception_ptr error;
    t_in_chunk = true;
    for (std::size_t c; (c = next_.fetch_add(1)) < chunks_; ++done) {
      try {
        (*job_)(c);
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
    t_in_chunk = false;
    if (done == 0) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (error && !error_) error_ = error;
    finished_ += done;
    if (finished_ == chunks_) done_.notify_all();
  }

  void work() {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu_);
        wake_.wait(lock, [&] { return stop_ || (generation_ != seen && job_ != nullptr); });
        if (stop_) return;
        seen = generation_;
      }
      take_chunks();
    }
  }

  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::size_t chunks_ = 0, finished_ = 0;
  std::atomic<std::size_t> next_{0};
  std::uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

int g_threads = 1;
std::unique_ptr<Pool> g_pool;
std::mutex g_pool_mu;  // serializes parallel_for callers from different threads

}  // namespace

void set_threads(int n) {
  n = std::max(1, n);
  openblas_set_num_threads(n);
  std::lock_guard<std::mutex> lock(g_pool_mu);
  if (n == g_threads) return;
  g_pool.reset();
  g_threads = n;
  if (n > 1) g_pool = std::make_unique<Pool>(n - 1);
}

int threads() { return g_threads; }

void parallel_for(std::size_t n, std::size_t grain,
                  const std::function<void(std::size_t, std::size_t)>& body) {
  if (n == 0) return;
  grain = std::max<std::size_t>(grain, 1);
  const std::size_t chunks =
      std::min<std::size_t>(static_cast<std::size_t>(g_threads), (n + grain - 1) / grain);
  if (chunks <= 1 || t_in_chunk || !g_pool) {
    body(0, n);
    return;
  }
  // Chunk c covers [c n / chunks, (c + 1) n / chunks): fixed by n and chunks alone.
  const std::function<void(std::size_t)> chunk = [&](std::size_t c) {
    body(c * n / chunks, (c + 1) * n / chunks);
  };
  std::lock_guard<std::mutex> lock(g_pool_mu);
  g_pool->run(chunks, chunk);
}

}  // namespace attnlab
