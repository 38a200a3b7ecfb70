#include "nn/attention/structure.hpp"

#include <algorithm>
#include <cmath>

#include "core/array.hpp"
#include "core/error.hpp"
#include "nn/positional/sinusoidal.hpp"

namespace attnlab::nn {

namespace {
void check_matrix(const xt::xarray<double>& P, const char* where) {
  check(P.dimension() == 2 && P.size() > 0, where, "needs a non-empty 2-D matrix, got ", shape_str(P.shape()));
}
}  // namespace

double weight_in_band(const xt::xarray<double>& P, std::size_t window) {
  check_matrix(P, "weight_in_band");
  const std::size_t n = P.shape()[0], m = P.shape()[1];
  double in = 0;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = i > window ? i - window : 0; j < std::min(m, i + window + 1); ++j) in += P(i, j);
  return in / double(n);
}

double segment_mean_share(const xt::xarray<double>& P, std::size_t segments) {
  check_matrix(P, "segment_mean_share");
  const std::size_t n = P.shape()[1], width = segments ? n / segments : 0;
  check(segments > 0 && segments <= n, "segment_mean_share", "needs 1 to ", n, " segments, got ", segments);
  // Projecting a row onto the (orthogonal) segment indicators keeps, per segment, (sum of the row over it)^2 / width.
  double kept = 0, total = 0;
  for (std::size_t i = 0; i < P.shape()[0]; ++i)
    for (std::size_t r = 0; r < segments; ++r) {
      const std::size_t begin = r * width, end = r + 1 == segments ? n : begin + width;
      double s = 0;
      for (std::size_t j = begin; j < end; ++j) s += P(i, j), total += P(i, j) * P(i, j);
      kept += s * s / double(end - begin);
    }
  check(total > 0, "segment_mean_share", "a matrix of zeros has no energy to keep");
  return kept / total;
}

double relative_error(const xt::xarray<double>& a, const xt::xarray<double>& b) {
  check(a.shape() == b.shape(), "relative_error", "shapes differ: ", shape_str(a.shape()), " and ", shape_str(b.shape()));
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double d = a.data()[i] - b.data()[i];
    num += d * d, den += b.data()[i] * b.data()[i];
  }
  check(den > 0, "relative_error", "the reference has norm 0");
  return std::sqrt(num / den);
}

std::pair<Array<float>, Array<float>> banded_queries_keys(std::size_t n, std::size_t d, double sharpness,
                                                          Generator& gen) {
  check(n > 0 && d > 0 && sharpness >= 0, "banded_queries_keys",
        "needs n and d above 0 and a sharpness of 0 or more, got n ", n, ", d ", d, ", sharpness ", sharpness);
  if (sharpness > 0) {
    Array<float> pe = sinusoidal_table<float>(n, d) * float(sharpness);
    pe.reshape({1, n, d});
    return {pe, pe};
  }
  return {random_normal<float>({1, n, d}, gen), random_normal<float>({1, n, d}, gen)};
}

}  // namespace attnlab::nn
