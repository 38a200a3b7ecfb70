#include "lessons/story/text.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace attnlab::lessons {

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string sci(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*e", digits, v);
  return buf;
}

std::string percent(double fraction, int decimals) { return fixed(100.0 * fraction, decimals) + "%"; }

// Whole numbers in full; otherwise 4 significant digits in fixed notation between 1e-3 and 1e6
// (trailing zeros dropped), scientific notation outside that range.
std::string rounded(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "nan" : (v > 0 ? "inf" : "-inf");
  const double a = std::fabs(v);
  if (a < 1e15 && v == std::floor(v)) return fixed(v, 0);
  if (a < 1e-3 || a >= 1e6) return sci(v, 1);
  const int decimals = std::max(0, 3 - static_cast<int>(std::floor(std::log10(a))));
  std::string s = fixed(v, decimals);
  if (s.find('.') != std::string::npos) {
    s.erase(s.find_last_not_of('0') + 1);
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string plus_minus(double mean, double sd) {
  if (!(sd > 0.0) || !std::isfinite(sd)) return rounded(mean) + " ± " + (std::isfinite(sd) ? "0" : rounded(sd));
  // Two significant digits of the sd when its leading digit is 1 or 2 (0.021: the second digit
  // still says much of it), one from 3 up (0.4, not 0.41: the spread of a few seeds is itself
  // uncertain by a third or more); the mean to the same place.
  const int exponent = static_cast<int>(std::floor(std::log10(sd)));
  const double leading = sd / std::pow(10.0, exponent);  // in [1, 10)
  const int digits = leading < 2.95 ? 2 : 1;
  // Below 1e-4 fixed notation would be all zeros: both in scientific notation, the mean to one
  // digit more than the sd (8.8e-11 ± 6.7e-11, 3.0e-16 ± 0.8e-16 reads as 3.0e-16 ± 8e-17).
  if (exponent < -4) return sci(mean, 1) + " ± " + sci(sd, digits - 1);
  const int decimals = std::clamp(digits - 1 - exponent, 0, 8);
  return fixed(mean, decimals) + " ± " + fixed(sd, decimals);
}

std::string listing(const std::vector<std::string>& items) {
  std::string s;
  for (std::size_t i = 0; i < items.size(); ++i)
    s += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return s;
}

std::string counted(long long n, const std::string& noun) { return std::to_string(n) + " " + noun + (n == 1 ? "" : "s"); }

}  // namespace attnlab::lessons
