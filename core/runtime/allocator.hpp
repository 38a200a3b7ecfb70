// How the process allocates the arrays of a training step, and how many bytes it holds.
#pragma once

#include <cstddef>
#include <functional>

namespace attnlab {

// Every op allocates its result and every backward its gradients, and a training step frees them
// all again. glibc serves blocks above its mmap threshold (128 KiB, adapting up to 32 MiB) with
// fresh mmap/munmap pairs, so each step page-faults its whole working set back in: measured in
// bench_core, matmul forward + backward at n = 256 ran at 65 % of raw sgemm that way and at 92 %
// with the blocks kept in the heap. So keep them in the heap: a freed block is reused by the next
// step. Peak memory stays the step's working set; it is returned to the system only above
// 512 MiB of free heap. Process-wide; the tape calls it once, when the library loads.
void keep_freed_blocks_in_heap();

// Bytes held through operator new (every array, tensor node and std::vector), counted exactly
// (the bytes each block asked for) in programs that link attnlab_counting_new: the lessons,
// bench_core and the tests. Elsewhere, and under
// AddressSanitizer (which owns operator new), nothing is counted and counting_bytes() is false.
// The resident set (ru_maxrss) cannot answer "how much did this call need": glibc keeps freed
// blocks for reuse (above), so the resident set only ever grows.
bool counting_bytes();
std::size_t live_bytes();   // held right now
std::size_t peak_bytes();   // the most held at any moment since the last reset_peak_bytes()
void reset_peak_bytes();    // the peak starts again from live_bytes()

// The most bytes held at any moment while `work` runs, beyond those held when it began
// (0 when counting_bytes() is false). With several threads allocating at once the peak is
// exact for the order in which their allocations landed, which can differ from run to run.
std::size_t peak_bytes_of(const std::function<void()>& work);
// peak_bytes_of with attnlab's kernels and OpenBLAS on one thread while `work` runs (the thread
// count is restored after): the same number on every run, whatever set_threads said.
std::size_t peak_bytes_at_one_thread(const std::function<void()>& work);

namespace detail {
void count_allocation(std::size_t bytes);  // called by the counting operator new / delete
void count_release(std::size_t bytes);
void announce_counting();
}  // namespace detail

}  // namespace attnlab
