#include "plots/ticks.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnlab::plots {

// Nice step: range / target rounded to 1, 2 or 5 x 10^k (Heckbert, "Nice numbers for graph
// labels", Graphics Gems, 1990).
static double nice_step(double range, int target) {
  const double raw = range / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double f = raw / mag;
  const double nice = f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10;
  return nice * mag;
}

std::string format_fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::max(0, decimals), v);
  std::string s = buf;
  if (s.find_first_not_of("-0.") == std::string::npos && s[0] == '-') s.erase(0, 1);
  // U+2212 MINUS SIGN: as wide as "+", aligns columns of numbers better than a hyphen.
  if (!s.empty() && s[0] == '-') s = "\u2212" + s.substr(1);
  return s;
}

std::vector<Tick> nice_ticks(double lo, double hi, int target) {
  if (hi < lo) std::swap(lo, hi);
  if (!(hi > lo)) return {{lo, format_fixed(lo, std::abs(lo) < 10 ? 2 : 0)}};
  const double step = nice_step(hi - lo, target);
  const int decimals = std::max(0, -int(std::floor(std::log10(step) + 1e-9)));
  std::vector<Tick> out;
  const double eps = step * 1e-9;
  for (double k = std::ceil((lo - eps) / step); k * step <= hi + eps; k += 1) {
    const double v = k * step;
    out.push_back({v, format_fixed(v, decimals)});
  }
  return out;
}

void nice_range(double& lo, double& hi, int target) {
  if (hi < lo) std::swap(lo, hi);
  if (!(hi > lo)) {
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double step = nice_step(hi - lo, target);
  lo = std::floor(lo / step + 1e-9) * step;
  hi = std::ceil(hi / step - 1e-9) * step;
}

std::string format_power_of_ten(int k) {
  if (k >= -3 && k <= 3) return format_fixed(std::pow(10.0, k), std::max(0, -k));
  static const char* sup[] = {"\u2070", "\u00b9", "\u00b2", "\u00b3", "\u2074",
                              "\u2075", "\u2076", "\u2077", "\u2078", "\u2079"};
  std::string s = "10";
  if (k < 0) s += "\u207b";
  for (char c : std::to_string(std::abs(k))) s += sup[c - '0'];
  return s;
}

std::vector<Tick> log_ticks(double lo, double hi) {
  if (hi < lo) std::swap(lo, hi);
  const int k0 = int(std::floor(std::log10(lo) + 1e-9));
  const int k1 = int(std::ceil(std::log10(hi) - 1e-9));
  const bool dense = k1 - k0 <= 2;  // under two decades: 2 and 5 labelled too
  const bool minor = k1 - k0 <= 5;  // up to five decades: unlabelled minor ticks at 2..9
  // A narrow axis (0.3 to 0.9, say) may hold fewer than three of 1, 2 and 5: then every
  // m * 10^k in range is labelled, so the reader can still read a value off it.
  auto in_range = [&](double v) { return v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9); };
  int sparse_count = 0;
  for (int k = k0; k <= k1; ++k)
    for (int m : {1, 2, 5}) sparse_count += (m == 1 || dense) && in_range(m * std::pow(10.0, k));
  const bool every = sparse_count < 3;
  std::vector<Tick> out;
  for (int k = k0; k <= k1; ++k) {
    for (int m = 1; m <= 9; ++m) {
      const bool labelled = m == 1 || every || (dense && (m == 2 || m == 5));
      if (!labelled && !minor) continue;
      const double v = m * std::pow(10.0, k);
      if (!in_range(v)) continue;
      std::string label;
      if (m == 1) {
        label = format_power_of_ten(k);
      } else if (labelled) {
        char buf[32];
        if (k >= -3 && k <= 3) std::snprintf(buf, sizeof buf, "%.*f", std::max(0, -k), v);
        else std::snprintf(buf, sizeof buf, "%g", v);
        label = buf;
      }
      out.push_back({v, label});  // an empty label marks a minor tick
    }
  }
  return out;
}

double Scale::operator()(double v) const {
  double a = d0, b = d1, x = v;
  if (log) {
    a = std::log10(a);
    b = std::log10(b);
    x = std::log10(x);
  }
  if (!(b != a)) return (p0 + p1) / 2;
  return p0 + (x - a) / (b - a) * (p1 - p0);
}

}  // namespace attnlab::plots
