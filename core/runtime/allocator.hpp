// How the process allocates the arrays of a training step.
#pragma once

namespace attnlab {

// Every op allocates its result and every backward its gradients, and a training step frees them
// all again. glibc serves blocks above its mmap threshold (128 KiB, adapting up to 32 MiB) with
// fresh mmap/munmap pairs, so each step page-faults its whole working set back in: measured in
// bench_core, matmul forward + backward at n = 256 ran at 65 % of raw sgemm that way and at 92 %
// with the blocks kept in the heap. So keep them in the heap: a freed block is reused by the next
// step. Peak memory stays the step's working set; it is returned to the system only above
// 512 MiB of free heap. Process-wide; the tape calls it once, when the library loads.
void keep_freed_blocks_in_heap();

}  // namespace attnlab
