#include "nn/data/dates.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <unordered_set>

#include "core/error.hpp"

namespace attnlab::nn::data {

namespace {

const char* const kMonths[12] = {"January", "February", "March",     "April",   "May",      "June",
                                 "July",    "August",   "September", "October", "November", "December"};
const char* const kWeekdays[7] = {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"};

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}
std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}
std::string abbrev(const char* name) { return std::string(name).substr(0, 3); }

// 1st 2nd 3rd 4th ... 11th 12th 13th ... 21st 22nd 23rd ... 31st
std::string ordinal(int day) {
  const int tens = day % 100 / 10, ones = day % 10;
  const char* suffix = "th";
  if (tens != 1) suffix = ones == 1 ? "st" : ones == 2 ? "nd" : ones == 3 ? "rd" : "th";
  return std::to_string(day) + suffix;
}

std::string two(int v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%02d", v % 100);
  return buf;
}

void check_date(const char* where, const Date& d) {
  check(is_valid_date(d), where, "invalid date ", d.year, "-", d.month, "-", d.day);
}

}  // namespace

bool is_leap_year(int y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

int days_in_month(int y, int m) {
  static const int days[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  check(m >= 1 && m <= 12, "days_in_month", "month ", m, " out of range 1..12");
  return m == 2 && is_leap_year(y) ? 29 : days[m - 1];
}

bool is_valid_date(const Date& d) {
  return d.month >= 1 && d.month <= 12 && d.day >= 1 && d.day <= days_in_month(d.year, d.month);
}

// Howard Hinnant's days_from_civil: count in 400-year eras starting 0000-03-01, so the leap
// day falls at the end of each "year" and month lengths follow the (153 m + 2) / 5 pattern.
long days_from_civil(const Date& d) {
  check_date("days_from_civil", d);
  const long y = d.year - (d.month <= 2 ? 1 : 0);
  const long era = (y >= 0 ? y : y - 399) / 400;
  const long yoe = y - era * 400;                                        // [0, 399]
  const long mp = (d.month + 9) % 12;                                    // March = 0
  const long doy = (153 * mp + 2) / 5 + d.day - 1;                       // [0, 365]
  const long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;                // [0, 146096]
  return era * 146097 + doe - 719468;                                    // 719468 = days 0000-03-01 .. 1970-01-01
}

Date civil_from_days(long z) {
  z += 719468;
  const long era = (z >= 0 ? z : z - 146096) / 146097;
  const long doe = z - era * 146097;
  const long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const long mp = (5 * doy + 2) / 153;
  Date d;
  d.day = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  d.month = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  d.year = static_cast<int>(yoe + era * 400 + (d.month <= 2 ? 1 : 0));
  return d;
}

// 1970-01-01 was a Thursday (3 with Monday = 0).
int weekday(const Date& d) {
  const long days = days_from_civil(d);
  return static_cast<int>(((days % 7) + 7 + 3) % 7);
}

const char* weekday_name(int wd) {
  check(wd >= 0 && wd < 7, "weekday_name", "weekday ", wd, " out of range 0..6");
  return kWeekdays[wd];
}

const char* month_name(int m) {
  check(m >= 1 && m <= 12, "month_name", "month ", m, " out of range 1..12");
  return kMonths[m - 1];
}

std::string iso_date(const Date& d) {
  check_date("iso_date", d);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02d", d.year, d.month, d.day);
  return buf;
}

const std::vector<std::string>& date_format_names() {
  static const std::vector<std::string> names = {
      "3rd of March 1997",  "mon 03/03/97",          "March 3, 1997", "3 March 1997",
      "1997.03.03",         "03-Mar-97",             "Monday, March 3, 1997", "3/3/1997",
      "Mar 3 1997",         "the 3rd of march, 1997", "19970303",     "3 MAR 1997",
      "Mon 3 Mar 1997",     "03/03/1997",            "March 3rd, 1997", "monday 3rd march 1997",
  };
  return names;
}

std::size_t num_date_formats() { return date_format_names().size(); }

std::string format_date(const Date& d, std::size_t format) {
  check_date("format_date", d);
  const std::string D = std::to_string(d.day), M = std::to_string(d.month), Y = std::to_string(d.year);
  const std::string month = month_name(d.month), wday = weekday_name(weekday(d));
  switch (format) {
    case 0: return ordinal(d.day) + " of " + month + " " + Y;
    case 1: return lower(abbrev(wday.c_str())) + " " + two(d.month) + "/" + two(d.day) + "/" + two(d.year);
    case 2: return month + " " + D + ", " + Y;
    case 3: return D + " " + month + " " + Y;
    case 4: return Y + "." + two(d.month) + "." + two(d.day);
    case 5: return two(d.day) + "-" + abbrev(month.c_str()) + "-" + two(d.year);
    case 6: return wday + ", " + month + " " + D + ", " + Y;
    case 7: return M + "/" + D + "/" + Y;
    case 8: return abbrev(month.c_str()) + " " + D + " " + Y;
    case 9: return "the " + ordinal(d.day) + " of " + lower(month) + ", " + Y;
    case 10: return Y + two(d.month) + two(d.day);
    case 11: return D + " " + upper(abbrev(month.c_str())) + " " + Y;
    case 12: return abbrev(wday.c_str()) + " " + D + " " + abbrev(month.c_str()) + " " + Y;
    case 13: return two(d.month) + "/" + two(d.day) + "/" + Y;
    case 14: return month + " " + ordinal(d.day) + ", " + Y;
    case 15: return lower(wday) + " " + ordinal(d.day) + " " + lower(month) + " " + Y;
  }
  fail("format_date", "format ", format, " out of range 0..", num_date_formats() - 1);
}

Date random_date(Generator& gen, int first_year, int last_year) {
  check(first_year <= last_year, "random_date", "first_year ", first_year, " > last_year ", last_year);
  const long lo = days_from_civil({first_year, 1, 1}), hi = days_from_civil({last_year, 12, 31});
  return civil_from_days(lo + static_cast<long>(gen.below(static_cast<std::uint64_t>(hi - lo + 1))));
}

std::vector<Pair> make_dates(std::size_t n, Generator& gen, const DateConfig& cfg) {
  check(cfg.first_year <= cfg.last_year, "make_dates", "first_year ", cfg.first_year, " > last_year ", cfg.last_year);
  check(cfg.first_year >= 1950 && cfg.last_year <= 2049, "make_dates", "years ", cfg.first_year, "..", cfg.last_year,
        " leave 1950..2049, where two-digit years stop naming one date");
  std::vector<std::size_t> formats = cfg.formats;
  if (formats.empty())
    for (std::size_t f = 0; f < num_date_formats(); ++f) formats.push_back(f);
  for (std::size_t f : formats)
    check(f < num_date_formats(), "make_dates", "format ", f, " out of range 0..", num_date_formats() - 1);

  const long days = days_from_civil({cfg.last_year, 12, 31}) - days_from_civil({cfg.first_year, 1, 1}) + 1;
  check(static_cast<double>(n) <= 0.5 * static_cast<double>(days) * static_cast<double>(formats.size()), "make_dates",
        "asked for ", n, " distinct examples from only ", days, " days x ", formats.size(),
        " formats: rejection sampling needs at most half of them");
  std::vector<Pair> out;
  out.reserve(n);
  std::unordered_set<std::string> seen;
  while (out.size() < n) {
    const Date d = random_date(gen, cfg.first_year, cfg.last_year);
    std::string src = format_date(d, formats[static_cast<std::size_t>(gen.below(formats.size()))]);
    if (seen.insert(src).second) out.push_back({std::move(src), iso_date(d)});
  }
  return out;
}

}  // namespace attnlab::nn::data
