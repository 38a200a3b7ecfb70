// Where an operand broadcast to (lead..., Lq, Lk) lives, for the attention kernels that read a
// mask or a bias entry by entry (internal to core/ops).
#pragma once

#include <cstddef>
#include <vector>

#include "core/array.hpp"
#include "core/broadcast.hpp"

namespace attnlab::detail {

// The element offset of each batch block's (0, 0) entry, and the strides of a row step and a
// column step (0 along stretched axes).
struct BroadcastMap {
  std::vector<std::size_t> base;  // one per flattened batch block
  std::size_t row_stride = 0, col_stride = 0;
  std::size_t at(std::size_t b, std::size_t i, std::size_t j) const {
    return base[b] + i * row_stride + j * col_stride;
  }
};

inline BroadcastMap broadcast_map(const Shape& from, const Shape& full) {
  const std::size_t rank = full.size();
  const std::vector<std::ptrdiff_t> strides = broadcast_strides(from, full);
  BroadcastMap m;
  m.row_stride = static_cast<std::size_t>(strides[rank - 2]);
  m.col_stride = static_cast<std::size_t>(strides[rank - 1]);
  std::size_t blocks = 1;
  for (std::size_t a = 0; a + 2 < rank; ++a) blocks *= full[a];
  m.base.resize(blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    std::size_t rest = b, off = 0;
    for (std::size_t a = rank - 2; a-- > 0;) {
      off += (rest % full[a]) * static_cast<std::size_t>(strides[a]);
      rest /= full[a];
    }
    m.base[b] = off;
  }
  return m;
}

}  // namespace attnlab::detail
