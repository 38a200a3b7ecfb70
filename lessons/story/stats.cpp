#include "lessons/story/stats.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace attnlab::lessons {

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + long(v.size() / 2), v.end());
  return v[v.size() / 2];
}

double mean_of(const std::vector<double>& v) {
  double s = 0.0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / double(v.size());
}

double mean_over(const std::vector<double>& v, std::size_t from, std::size_t to) {
  to = std::min(to, v.size());
  if (from > to)
    throw std::invalid_argument("mean_over: from " + std::to_string(from) + " lies past the end, " +
                                std::to_string(to));
  return mean_of(std::vector<double>(v.begin() + long(from), v.begin() + long(to)));
}

double stdev(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  const double m = mean_of(v);
  double s = 0.0;
  for (double x : v) s += (x - m) * (x - m);
  return std::sqrt(s / double(v.size() - 1));
}

double log_log_slope(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> lx, ly;
  for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) lx.push_back(std::log(x[i])), ly.push_back(std::log(y[i]));
  const double mx = mean_of(lx), my = mean_of(ly);
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < lx.size(); ++i) sxy += (lx[i] - mx) * (ly[i] - my), sxx += (lx[i] - mx) * (lx[i] - mx);
  return sxy / sxx;
}

double max_abs_diff(const xt::xarray<double>& a, const xt::xarray<double>& b) {
  if (a.shape() != b.shape()) throw std::invalid_argument("max_abs_diff: the arrays differ in shape");
  double m = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) m = std::max(m, std::fabs(a.data()[i] - b.data()[i]));
  return m;
}

Windowed windowed(const std::vector<double>& v, std::size_t window) {
  Windowed w;
  window = std::max<std::size_t>(window, 1);
  for (std::size_t lo = 0; lo + window <= v.size(); lo += window) {
    double s = 0.0;
    for (std::size_t i = lo; i < lo + window; ++i) s += v[i];
    w.x.push_back(double(lo + window));
    w.y.push_back(s / double(window));
  }
  return w;
}

}  // namespace attnlab::lessons
