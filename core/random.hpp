// A seeded random generator whose numbers are the same on every run, compiler and platform.
// std::normal_distribution is implementation-defined, so we draw our own: xoshiro256** for
// bits (seeded through splitmix64), 53-bit uniforms, and Box-Muller for normals.
#pragma once

#include <cstdint>

#include "core/array.hpp"

namespace attnlab {

class Generator {
 public:
  explicit Generator(std::uint64_t seed = 0) { reseed(seed); }
  void reseed(std::uint64_t seed);

  std::uint64_t next_u64();
  double uniform();                        // [0, 1)
  double uniform(double lo, double hi);    // [lo, hi)
  double normal();                         // N(0, 1)
  double normal(double mean, double std);
  std::uint64_t below(std::uint64_t n);    // uniform integer in [0, n), unbiased

  // A fresh generator whose stream is independent of this one's (for per-module streams).
  Generator fork();

 private:
  std::uint64_t s_[4]{};
  bool has_spare_ = false;
  double spare_ = 0.0;
};

template <class T>
Array<T> random_normal(const Shape& shape, Generator& gen, double mean = 0.0, double std = 1.0);
template <class T>
Array<T> random_uniform(const Shape& shape, Generator& gen, double lo = 0.0, double hi = 1.0);

// Fisher-Yates shuffle of a vector of indices, seeded.
template <class V>
void shuffle(V& v, Generator& gen) {
  for (std::size_t i = v.size(); i > 1; --i) {
    std::size_t j = static_cast<std::size_t>(gen.below(i));
    std::swap(v[i - 1], v[j]);
  }
}

}  // namespace attnlab
