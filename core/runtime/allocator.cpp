#include "core/runtime/allocator.hpp"

#include <malloc.h>

namespace attnlab {

void keep_freed_blocks_in_heap() {
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_TOP_PAD, 16 << 20);
}

}  // namespace attnlab
