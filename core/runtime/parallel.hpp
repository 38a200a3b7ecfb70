// Threads: one pool for all of attnlab's parallel work, GEMM included.
//
// set_threads(n) sizes the pool that parallel_for runs on. OpenBLAS stays on one thread: a large
// product is cut into parts on this pool, each part one BLAS call (core/runtime/blas.cpp; the .cpp
// says why OpenBLAS's own threads are not used).
// parallel_for(n, grain, body) cuts [0, n) into at most threads() contiguous chunks of at least
// `grain` items and runs body(begin, end) on each, the caller taking a share; it returns when all
// are done and rethrows the exception of the lowest-numbered chunk that threw. The chunk boundaries depend only on n,
// grain and threads(), so a kernel whose chunks write disjoint outputs (or whose per-chunk partial
// sums are combined in chunk order) gives the same bits on every run with the same thread count.
//
// A waiting thread polls for at most 200 microseconds, then sleeps on a condition variable: the
// poll catches the next call of a training step without a wake-up (slow on a virtual machine),
// and the bound keeps an idle pool from holding a shared 2-core machine's second core.
// A parallel_for inside a chunk runs inline; set_threads inside a chunk is an error. With one
// thread (the default) everything runs inline on the caller. Calls from several threads at once
// take turns.
//
// Whether a region is worth the pool can be measured instead of guessed (RegionPolicy::adaptive,
// core/runtime/region_rule.hpp): each shape of region (its call site, n, grain and work) is timed
// both ways, its chunks handed to the pool and the same chunks run one after another on the
// caller, and runs the faster way, trying the other way again now and then. Both ways compute the
// same chunks, so the bits never depend on the choice. It pays on a busy machine and lost 3 to 7 %
// on a quiet one (parallel.cpp gives the numbers), so the default hands every region to the pool.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>

namespace attnlab {

void set_threads(int n);  // n >= 1, else ShapeError
int threads();

// The CPUs this process may run on (its affinity mask), at least 1 and at most 8: the number of
// parts a large product is cut into (core/runtime/blas.cpp), and the lessons' default --threads.
int machine_threads();

// Which regions go to the pool: always (the default), measured per shape, or never (the chunks in
// order on the caller). ATTNLAB_REGION_POLICY=adaptive (or caller, or pool) in the environment
// sets it for a whole program; tests and bench_core set it in code.
enum class RegionPolicy { adaptive, pool, caller };
void set_region_policy(RegionPolicy policy);
RegionPolicy region_policy();

// How many regions of two or more chunks ran on the pool and on the caller since the last reset.
struct RegionCounts {
  long pool = 0, caller = 0;
};
RegionCounts region_counts(bool reset = false);

// `work` tells regions of one call site apart where n and grain do not (a product's m n k, the
// size of a block): the size rule keeps one measurement per call site, n, grain and work.
void parallel_for(std::size_t n, std::size_t grain,
                  const std::function<void(std::size_t begin, std::size_t end)>& body, std::size_t work = 0);

// Entries a chunk for a pass that only copies, adds or scales (memory-bound work): the grain of
// elementwise maps, gradient accumulation, Adam and the linear layer's bias passes.
inline constexpr std::size_t pass_grain = std::size_t(1) << 16;

// The grain for items (rows, columns, blocks) of `item_size` entries each: enough items for
// `chunk_entries` entries of work a chunk, and at least one. Small problems then run inline
// instead of paying for a thread hand-off. The caller picks chunk_entries for the cost of an
// entry (pass_grain for a copy or an add, less for an exp or a tanh).
inline std::size_t grain_for(std::size_t item_size, std::size_t chunk_entries) {
  return item_size == 0 ? chunk_entries : std::max<std::size_t>(1, chunk_entries / item_size);
}

}  // namespace attnlab
