// Helpers for writing gradcheck cases briefly.
#pragma once

#include "core/gradcheck.hpp"
#include "core/ops.hpp"

namespace attnlab::cases {

using D = double;
using TD = Tensor<double>;
using Inputs = std::vector<TD>;

// A random input of the given shape, different for every seed.
inline TD rnd(const Shape& shape, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  Generator g(seed);
  return TD(random_uniform<double>(shape, g, lo, hi), true);
}

}  // namespace attnlab::cases
