#include "core/random.hpp"

#include <cmath>

#include "core/error.hpp"

namespace attnlab {

namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

void Generator::reseed(std::uint64_t seed) {
  std::uint64_t x = seed;
  for (auto& s : s_) s = splitmix64(x);
  has_spare_ = false;
}

std::uint64_t Generator::next_u64() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Generator::uniform() { return static_cast<double>(next_u64() >> 11) * 0x1.0p-53; }

double Generator::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

// Box-Muller: two uniforms give two independent normals; keep the second for the next call.
double Generator::normal() {
  if (has_spare_) {
    has_spare_ = false;
    return spare_;
  }
  double u1 = uniform();
  while (u1 <= 0.0) u1 = uniform();
  const double u2 = uniform();
  const double r = std::sqrt(-2.0 * std::log(u1));
  const double theta = 2.0 * M_PI * u2;
  spare_ = r * std::sin(theta);
  has_spare_ = true;
  return r * std::cos(theta);
}

double Generator::normal(double mean, double std) { return mean + std * normal(); }

std::uint64_t Generator::below(std::uint64_t n) {
  if (n == 0) return 0;
  // Lemire-style rejection keeps it unbiased.
  const std::uint64_t limit = ~std::uint64_t(0) - (~std::uint64_t(0) % n);
  std::uint64_t x;
  do {
    x = next_u64();
  } while (x >= limit);
  return x % n;
}

Generator Generator::fork() { return Generator(next_u64() ^ 0x5851f42d4c957f2dULL); }

template <class T>
Array<T> random_normal(const Shape& shape, Generator& gen, double mean, double std) {
  checked_size("random_normal", shape);
  Array<T> a = Array<T>::from_shape(shape);
  for (auto& v : a) v = static_cast<T>(gen.normal(mean, std));
  return a;
}

template <class T>
Array<T> random_uniform(const Shape& shape, Generator& gen, double lo, double hi) {
  checked_size("random_uniform", shape);
  Array<T> a = Array<T>::from_shape(shape);
  for (auto& v : a) v = static_cast<T>(gen.uniform(lo, hi));
  return a;
}

template Array<float> random_normal<float>(const Shape&, Generator&, double, double);
template Array<double> random_normal<double>(const Shape&, Generator&, double, double);
template Array<float> random_uniform<float>(const Shape&, Generator&, double, double);
template Array<double> random_uniform<double>(const Shape&, Generator&, double, double);

}  // namespace attnlab
