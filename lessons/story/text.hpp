// Numbers in prose. A lesson writes its story as sentences with numbers in them:
//
//   say("We generate ", n, " dates; the model reaches ", fixed(acc, 3), " on ", n_test, " held-out ones.");
//
// text(parts...) glues the parts: strings as they are, integers in full, other numbers in the
// plain form of rounded() (4 significant digits, no trailing zeros). fixed, sci and percent say
// exactly how a number is shown where that matters.
#pragma once

#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace attnlab::lessons {

std::string fixed(double v, int decimals = 4);    // 0.3311
std::string sci(double v, int digits = 1);         // 3.1e-15
std::string percent(double fraction, int decimals = 1);  // 0.953 -> 95.3%
std::string rounded(double v);                       // 0.2981, 3.71, 12000, 4.8e-07
// A mean and its spread, the sd to two significant digits and the mean to the same decimal place:
// plus_minus(0.90134, 0.00213) is "0.9013 ± 0.0021"; an sd of 0 gives "0.997 ± 0".
std::string plus_minus(double mean, double sd);

namespace detail {
inline void append(std::string& s, const std::string& part) { s += part; }
inline void append(std::string& s, const char* part) { s += part; }
inline void append(std::string& s, char part) { s += part; }
template <class N>
std::enable_if_t<std::is_arithmetic_v<N>> append(std::string& s, N v) {
  if constexpr (std::is_integral_v<N>) s += std::to_string(v);
  else s += rounded(static_cast<double>(v));
}
}  // namespace detail

template <class... Parts>
std::string text(const Parts&... parts) {
  std::string s;
  (detail::append(s, parts), ...);
  return s;
}

// A table row: each part as text() shows it.
template <class... Parts>
std::vector<std::string> row(const Parts&... parts) {
  return {text(parts)...};
}

// "a, b and c"
std::string listing(const std::vector<std::string>& items);

// A count and its noun, plural by an s: counted(1, "pixel") is "1 pixel", counted(2, "pixel") "2 pixels".
std::string counted(long long n, const std::string& noun);

}  // namespace attnlab::lessons
