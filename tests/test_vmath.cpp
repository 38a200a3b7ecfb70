// core/runtime/vmath: the float exp against std::exp, its edges, and the two shortcuts the
// attention op takes, which must give the same bits as the general functions: exp_nonpositive
// against exp over the non-positive floats, and the whole-vector sum and max against sum and max.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "core/random.hpp"
#include "core/runtime/vmath.hpp"

using namespace attnlab;

namespace {

float from_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
std::uint32_t bits_of(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

}  // namespace

TEST_CASE("exp is within 2 ulp of std::exp over the normal range, 0 below it and inf above") {
  std::vector<float> x, y;
  for (float v = -87.0f; v <= 88.0f; v += 0.00731f) x.push_back(v);
  y.resize(x.size());
  vmath::exp_n(x.data(), y.data(), x.size());
  std::size_t far = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const float want = std::exp(x[i]);
    const std::int64_t ulps = std::llabs(std::int64_t(bits_of(y[i])) - std::int64_t(bits_of(want)));
    far += ulps > 2;
  }
  CHECK(far == 0);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> edge{-inf, -1000.0f, -88.0f, 0.0f, -0.0f, 89.0f, inf, std::nanf("")}, out(8);
  vmath::exp_n(edge.data(), out.data(), edge.size());
  CHECK(out[0] == 0.0f);
  CHECK(out[1] == 0.0f);
  CHECK(out[2] == 0.0f);
  CHECK(out[3] == 1.0f);
  CHECK(out[4] == 1.0f);
  CHECK(out[5] == inf);
  CHECK(out[6] == inf);
  CHECK(std::isnan(out[7]));
}

// Every 61st bit pattern from -0 down past -inf into the negative NaNs (35 M floats), and +0.
TEST_CASE("exp_nonpositive is exp to the bit on x <= 0, -inf and NaN") {
  std::vector<float> x;
  for (std::uint64_t u = 0x80000000u; u <= 0xFFFFFFFFu; u += 61) x.push_back(from_bits(std::uint32_t(u)));
  x.push_back(0.0f);
  x.push_back(-std::numeric_limits<float>::infinity());
  std::vector<float> a(x.size()), b(x.size());
  vmath::exp_n(x.data(), a.data(), x.size());
  vmath::exp_nonpositive_n(x.data(), b.data(), x.size());
  std::size_t differ = 0;
  for (std::size_t i = 0; i < x.size(); ++i)
    differ += std::isnan(a[i]) ? !std::isnan(b[i]) : bits_of(a[i]) != bits_of(b[i]);
  CHECK(differ == 0);
}

TEST_CASE("sums, maxima and dot products over whole vectors are those of sum_of and max_of, to the bit") {
  Generator gen(4);
  for (std::size_t n : {8, 16, 24, 56, 64, 512}) {
    CAPTURE(n);
    std::vector<float> x(n);
    for (int trial = 0; trial < 50; ++trial) {
      for (float& v : x) v = float(gen.uniform() * 200 - 100) * float(gen.uniform() < 0.1 ? 1e-6 : 1);
      CHECK(bits_of(vmath::sum_whole_vectors(x.data(), n)) == bits_of(vmath::sum(x.data(), n)));
      CHECK(bits_of(vmath::max_whole_vectors(x.data(), n)) == bits_of(vmath::max(x.data(), n)));
      // Layer norm's reductions: a dot product and the squared deviations from the mean.
      std::vector<float> y(n);
      for (float& v : y) v = float(gen.uniform() * 2 - 1);
      CHECK(bits_of(vmath::dot_whole_vectors(x.data(), y.data(), n)) == bits_of(vmath::dot(x.data(), y.data(), n)));
      const float c = vmath::sum(x.data(), n) / float(n);
      const float squares = vmath::sum_of<float>(n, [&](std::size_t j) { return (x[j] - c) * (x[j] - c); });
      CHECK(bits_of(vmath::sum_squared_differences_whole_vectors(x.data(), c, n)) == bits_of(squares));
    }
    // Padding as the attention op pads: exp(-inf) = +0 after the last real entry.
    std::vector<float> e(n, 0.0f);
    for (std::size_t j = 0; j + 5 < n; ++j) e[j] = float(gen.uniform());
    CHECK(bits_of(vmath::sum_whole_vectors(e.data(), n)) == bits_of(vmath::sum(e.data(), n - 5)));
  }
}
