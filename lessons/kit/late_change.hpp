// Has a run settled? How much a series (a loss, a parameter) still moved over its last tenth, and
// a small share said as a percentage. Lesson 01 tells a width that levels off from one that runs away.
#pragma once

#include <string>
#include <vector>

namespace attnlab::lessons {

// (series[n * 9 / 10] - end) / end, n = series.size(): positive when the series fell to `end`
// over its last tenth. `end` is the value after the last entry (a parameter after its last step)
// or series.back(). std::invalid_argument naming late_change for an empty series or end 0.
double late_change(const std::vector<double>& series, double end);

// A share as a percentage to 3 decimals ("0.014%"), or "less than 0.001%" below 1e-5.
std::string small_percent(double share);

}  // namespace attnlab::lessons
