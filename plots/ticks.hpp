// Axis scales and "nice" ticks: steps of 1, 2 or 5 x 10^k on linear axes, powers of ten (with
// 2 and 5 between them when the range spans under two decades) on log axes.
#pragma once

#include <string>
#include <vector>

namespace attnlab::plots {

struct Tick {
  double value;
  std::string label;  // empty: a minor tick (short mark, faint grid line, no text)
};

// About `target` ticks inside [lo, hi], at multiples of a nice step; labels carry just enough
// decimals to tell the step apart. lo == hi gives one tick.
std::vector<Tick> nice_ticks(double lo, double hi, int target = 5);

// The smallest nice-step-aligned interval containing [lo, hi] (axes end on a tick).
void nice_range(double& lo, double& hi, int target = 5);

// Ticks for a log axis over [lo, hi] (both > 0): labelled powers of ten, plus 2 and 5 labelled
// under two decades, plus unlabelled minor ticks at 2..9 up to five decades.
std::vector<Tick> log_ticks(double lo, double hi);

// "0.001" ... "1000" in plain digits, beyond that 10 with a superscript exponent ("10⁻⁵").
std::string format_power_of_ten(int k);

// A value with `decimals` digits after the point; "-0" printed as "0".
std::string format_fixed(double v, int decimals);

// Maps data values to logical pixels along one axis, linearly or in log10.
struct Scale {
  double d0 = 0, d1 = 1;  // data range
  double p0 = 0, p1 = 1;  // pixel range (p1 < p0 on a y axis)
  bool log = false;
  double operator()(double v) const;
};

}  // namespace attnlab::plots
