// Published colormap tables, internal to colormap.cpp.
#pragma once

#include <cstddef>

namespace attnlab::plots::detail {

// matplotlib's viridis, all 256 entries (lib/matplotlib/_cm_listed.py, _viridis_data).
inline constexpr std::size_t kViridisSize = 256;
extern const double kViridis[kViridisSize][3];

}  // namespace attnlab::plots::detail
