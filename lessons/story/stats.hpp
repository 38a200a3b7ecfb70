// Summaries of measured numbers: the median of timings, the mean and spread over seeds, slopes on
// log-log axes, the worst difference of two arrays, the mean of each window of training steps (a
// readable loss curve).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include <xtensor/xarray.hpp>

namespace attnlab::lessons {

double median(std::vector<double> v);           // 0 for none
double mean_of(const std::vector<double>& v);   // 0 for none (the engine's mean() takes tensors)
double stdev(const std::vector<double>& v);     // sample standard deviation; 0 for fewer than 2
// The mean of v[from, to), `to` cut at v's end (by default: the rest of v); 0 for none.
// std::invalid_argument when from lies past that end.
double mean_over(const std::vector<double>& v, std::size_t from, std::size_t to = SIZE_MAX);

// The least-squares slope of log y against log x: the exponent p of y ~ x^p.
double log_log_slope(const std::vector<double>& x, const std::vector<double>& y);

// The largest |a - b| over two arrays of one shape (std::invalid_argument otherwise).
double max_abs_diff(const xt::xarray<double>& a, const xt::xarray<double>& b);

// The mean of each run of `window` consecutive values (a last, shorter run is dropped), and the
// 1-based index of each run's last value: ({x}, {y}) for a curve.
struct Windowed {
  std::vector<double> x, y;
};
Windowed windowed(const std::vector<double>& v, std::size_t window);

}  // namespace attnlab::lessons
